/*
 * allreduce_rabenseifner.c -- reduce-scatter by recursive halving, then
 * allgather by recursive doubling: ~2n bytes moved per rank, so it wins for
 * medium/large vectors where recursive doubling's n*log2(p) hurts.
 *
 * Non-powers of two fold exactly as in allreduce_recursive_doubling.c (odd
 * r < 2*rem hand their vector to r-1 and get the result back at the end).
 * Halving at distance m: partners share blocks [G, G+2m), G = nr & ~(2m-1);
 * the one with bit m clear keeps the lower half; kept = lower group op
 * upper group. Each block is reduced once, on one rank, then copied to all:
 * identical bits everywhere.
 *
 * Buffers: accumulate in RBUF, receive into TMP (at most half the vector).
 */
#include "sched.h"

static void win(const coll_args_t *a, int pof2, int b0, int b1, size_t *off,
                size_t *len)
{
    size_t f0, c0, f1, c1;
    coll_block(a->count, pof2, b0, &f0, &c0);
    coll_block(a->count, pof2, b1 - 1, &f1, &c1);
    *off = f0 * a->esize;
    *len = (f1 + c1 - f0) * a->esize;
}

int coll_allreduce_rabenseifner(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    size_t n = a->count * a->esize;
    int pof2 = coll_pof2_floor(p), rem = p - pof2;
    int cur, nr;
    size_t cur_off;

    coll_input(a, &cur, &cur_off);
    if (!n)
        return sched_done(s);
    if (p == 1) {
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, n);
        return sched_done(s);
    }
#define PEER(x) ((x) < rem ? 2 * (x) : (x) + rem)
    if (r < 2 * rem) {
        if (r & 1) {
            sched_send(s, cur, cur_off, n, r - 1);
            sched_round(s);
            sched_recv(s, COLL_RBUF, 0, n, r - 1);
            return sched_done(s);
        }
        sched_need_tmp(s, n);
        sched_recv(s, COLL_TMP, 0, n, r + 1);
        sched_reduce(s, COLL_RBUF, 0, cur, cur_off, COLL_TMP, 0, n);
        sched_round(s);
        cur = COLL_RBUF;
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
        win(a, pof2, k0, k0 + m, &koff, &klen);
        win(a, pof2, s0, s0 + m, &soff, &slen);
        if (klen) {
            sched_need_tmp(s, klen);
            sched_recv(s, COLL_TMP, 0, klen, peer);
        }
        if (slen)
            sched_send(s, cur, cur_off + soff, slen, peer);
        if (lower)
            sched_reduce(s, COLL_RBUF, koff, cur, cur_off + koff, COLL_TMP, 0, klen);
        else
            sched_reduce(s, COLL_RBUF, koff, COLL_TMP, 0, cur, cur_off + koff, klen);
        sched_round(s);
        cur = COLL_RBUF;   /* later steps only read inside the kept window */
        cur_off = 0;
    }

    for (int m = 1; m < pof2; m <<= 1) {
        int peer = PEER(nr ^ m);
        int g = nr & ~(m - 1), pg = g ^ m;
        size_t moff, mlen, poff, plen;
        win(a, pof2, g, g + m, &moff, &mlen);
        win(a, pof2, pg, pg + m, &poff, &plen);
        if (plen)
            sched_recv(s, COLL_RBUF, poff, plen, peer);
        if (mlen)
            sched_send(s, COLL_RBUF, moff, mlen, peer);
        sched_round(s);
    }
    if (r < 2 * rem)
        sched_send(s, COLL_RBUF, 0, n, r + 1);
#undef PEER
    return sched_done(s);
}
