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

typedef struct { const size_t *off; int rem; } layout_t;

/* byte range of new ranks [n0, n1): their original blocks */
static void win(const coll_args_t *a, const void *ctx, int n0, int n1, size_t *o,
                size_t *len)
{
    const layout_t *l = ctx;
    size_t b = l->off[n0 < l->rem ? 2 * n0 : n0 + l->rem];
    size_t e = l->off[n1 - 1 < l->rem ? 2 * (n1 - 1) + 2 : n1 - 1 + l->rem + 1];
    *o = b * a->esize;
    *len = (e - b) * a->esize;
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
    layout_t lay = {off, rem};
    for (int m = pof2 / 2; m > 0; m >>= 1) {
        coll_halving_step(s, a, win, &lay, nr, m, PEER(nr ^ m), cur, cur_off, COLL_TMP, N);
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
