/*
 * allreduce_recursive_doubling.c -- log2(p) full-vector exchanges; best for
 * small messages (latency bound).
 *
 * Not a power of two: the fold (fold.h) -- odd ranks < 2*rem hand their
 * vector to the even neighbour and get the final result back. In the core,
 * partners combine "lower nr op higher nr"; both compute the same value from
 * the same operands, so every rank ends with identical bits.
 *
 * Buffers: accumulate in RBUF, receive into TMP[0,n). The first combine
 * reads SBUF directly (no initial copy).
 */
#include "fold.h"

int coll_allreduce_recursive_doubling(const coll_args_t *a, coll_sched_t *s)
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
    sched_need_tmp(s, n);
    coll_fold_init(&f, a, 0);
    if (!coll_fold_in(s, &f, &cur, &cur_off, n, COLL_RBUF, 0)) {
        coll_fold_out(s, &f, NULL);
        return sched_done(s);
    }
    for (int m = 1; m < f.pof2; m <<= 1) {
        int pn = f.nr ^ m;
        int peer = coll_fold_peer(&f, pn);
        sched_recv(s, COLL_TMP, 0, n, peer);
        sched_send(s, cur, cur_off, n, peer);
        if (f.nr < pn)
            sched_reduce(s, COLL_RBUF, 0, cur, cur_off, COLL_TMP, 0, n);
        else
            sched_reduce(s, COLL_RBUF, 0, COLL_TMP, 0, cur, cur_off, n);
        sched_round(s);
        cur = COLL_RBUF;
        cur_off = 0;
    }
    coll_fold_out(s, &f, NULL);
    return sched_done(s);
}
