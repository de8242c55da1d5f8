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
        coll_halving_step(s, a, coll_win_blocks, &pof2, nr, m, PEER(nr ^ m), cur, cur_off,
                          COLL_RBUF, 0);
        sched_round(s);
        cur = COLL_RBUF;   /* later steps only read inside the kept window */
        cur_off = 0;
    }

    for (int m = 1; m < pof2; m <<= 1) {
        int peer = PEER(nr ^ m);
        int g = nr & ~(m - 1), pg = g ^ m;
        size_t moff, mlen, poff, plen;
        coll_win_blocks(a, &pof2, g, g + m, &moff, &mlen);
        coll_win_blocks(a, &pof2, pg, pg + m, &poff, &plen);
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
