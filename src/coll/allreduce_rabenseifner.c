/*
 * allreduce_rabenseifner.c -- reduce-scatter by recursive halving, then
 * allgather by recursive doubling: ~2n bytes moved per rank, so it wins for
 * medium/large vectors where recursive doubling's n*log2(p) hurts.
 *
 * Non-powers of two fold (fold.h) as in allreduce_recursive_doubling.c:
 * odd ranks < 2*rem hand their vector over and get the result back.
 * Halving at distance m: partners share blocks [G, G+2m), G = nr & ~(2m-1);
 * the one with bit m clear keeps the lower half; kept = lower group op
 * upper group. Each block is reduced once, on one rank, then copied to all:
 * identical bits everywhere.
 *
 * Buffers: accumulate in RBUF, receive into TMP (at most half the vector).
 */
#include "fold.h"

int coll_allreduce_rabenseifner(const coll_args_t *a, coll_sched_t *s)
{
    size_t n = a->count * a->esize;
    coll_fold_t f;
    int cur;
    size_t cur_off;

    coll_input(a, &cur, &cur_off);
    if (!n)
        return sched_done(s);
    if (a->size == 1) {
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, n);
        return sched_done(s);
    }
    coll_fold_init(&f, a, 0);
    if (!coll_fold_in(s, &f, &cur, &cur_off, n, COLL_RBUF, 0)) {
        coll_fold_out(s, &f, NULL);
        return sched_done(s);
    }
    int nr = f.nr, pof2 = f.pof2;

    for (int m = pof2 / 2; m > 0; m >>= 1) {
        coll_halving_step(s, a, coll_win_blocks, &pof2, nr, m, coll_fold_peer(&f, nr ^ m),
                          cur, cur_off, COLL_RBUF, 0);
        sched_round(s);
        cur = COLL_RBUF;   /* later steps only read inside the kept window */
        cur_off = 0;
    }

    for (int m = 1; m < pof2; m <<= 1) {
        int peer = coll_fold_peer(&f, nr ^ m);
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
    coll_fold_out(s, &f, NULL);
    return sched_done(s);
}
