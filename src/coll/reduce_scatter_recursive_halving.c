/*
 * reduce_scatter_recursive_halving.c -- reduce_scatter(_block) in
 * log2(p) rounds for small and medium vectors with commutative ops (the
 * partners at distance p/2 combine first, so the association is not rank
 * order).
 *
 * Not a power of two: rem = p - pof2; among ranks < 2*rem each odd r hands
 * its whole input to r-1 and later gets its block back; even r folds it in
 * and owns both blocks as "new rank" r/2, ranks >= 2*rem are new rank
 * r - rem. Halving at distance m: partners share new ranks [G, G+2m),
 * G = nr & ~(2m-1); the one with bit m clear keeps the lower half, and the
 * kept half is "lower group op upper group", so each block's expression
 * depends on p alone. Block sizes may differ (reduce_scatter): a new
 * rank's window covers its original blocks, contiguous in the vector.
 *
 * Buffers: the whole vector accumulates in TMP[0,N) (RBUF holds only my
 * block), incoming halves land in TMP[N,2N).
 */
#include <stdlib.h>
#include "sched.h"

/* element range of new ranks [n0, n1) */
static void win(const size_t *off, int rem, int n0, int n1, size_t es, size_t *o,
                size_t *len)
{
    size_t b = off[n0 < rem ? 2 * n0 : n0 + rem];
    size_t e = off[n1 - 1 < rem ? 2 * (n1 - 1) + 2 : n1 - 1 + rem + 1];
    *o = b * es;
    *len = (e - b) * es;
}

int coll_reduce_scatter_recursive_halving(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    int pof2 = coll_pof2_floor(p), rem = p - pof2;
    size_t es = a->esize;
    size_t *off = coll_rs_offsets(a, s);
    int cur, nr;
    size_t cur_off;

    if (!off)
        return sched_done(s);
    coll_input(a, &cur, &cur_off);
    size_t N = off[p] * es, mine = (off[r + 1] - off[r]) * es;
    if (!N || p == 1) {
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, N);
        goto out;
    }
#define PEER(x) ((x) < rem ? 2 * (x) : (x) + rem)
    if (r < 2 * rem) {
        if (r & 1) {
            sched_send(s, cur, cur_off, N, r - 1);
            sched_round(s);
            if (mine)
                sched_recv(s, COLL_RBUF, 0, mine, r - 1);
            goto out;
        }
        sched_need_tmp(s, 2 * N);
        sched_recv(s, COLL_TMP, N, N, r + 1);
        sched_reduce(s, COLL_TMP, 0, cur, cur_off, COLL_TMP, N, N);
        sched_round(s);
        cur = COLL_TMP;
        cur_off = 0;
        nr = r / 2;
    } else {
        nr = r - rem;
    }
    for (int m = pof2 / 2; m > 0; m >>= 1) {
        int peer = PEER(nr ^ m);
        int g = nr & ~(2 * m - 1);
        int lower = !(nr & m);
        int k0 = lower ? g : g + m, s0 = lower ? g + m : g;
        size_t koff, klen, soff, slen;
        win(off, rem, k0, k0 + m, es, &koff, &klen);
        win(off, rem, s0, s0 + m, es, &soff, &slen);
        if (klen) {
            sched_need_tmp(s, N + klen);
            sched_recv(s, COLL_TMP, N, klen, peer);
        }
        if (slen)
            sched_send(s, cur, cur_off + soff, slen, peer);
        if (lower)
            sched_reduce(s, COLL_TMP, koff, cur, cur_off + koff, COLL_TMP, N, klen);
        else
            sched_reduce(s, COLL_TMP, koff, COLL_TMP, N, cur, cur_off + koff, klen);
        sched_round(s);
        cur = COLL_TMP;   /* later steps only read inside the kept window */
        cur_off = 0;
    }
    /* my block to RBUF; a folded-in odd neighbour gets its block */
    if (r < 2 * rem && off[r + 2] > off[r + 1])
        sched_send(s, COLL_TMP, off[r + 1] * es, (off[r + 2] - off[r + 1]) * es, r + 1);
    sched_copy(s, COLL_RBUF, 0, COLL_TMP, off[r] * es, mine);
#undef PEER
out:
    free(off);
    return sched_done(s);
}
