/*
 * allreduce_recursive_doubling.c -- log2(p) full-vector exchanges; best for
 * small messages (latency bound).
 *
 * Not a power of two: rem = p - pof2. Among ranks < 2*rem, odd rank r sends
 * its vector to r-1 and waits for the final result; even r folds it in
 * (mine op r+1's) and joins the power-of-two core as nr = r/2; ranks >= 2*rem
 * join as nr = r - rem. In the core, partners combine "lower nr op higher
 * nr"; both compute the same value from the same operands, so every rank
 * ends with identical bits.
 *
 * Buffers: accumulate in RBUF, receive into TMP[0,n). The first combine
 * reads SBUF directly (no initial copy).
 */
#include "sched.h"

int coll_allreduce_recursive_doubling(const coll_args_t *a, coll_sched_t *s)
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
    sched_need_tmp(s, n);
    if (r < 2 * rem) {
        if (r & 1) {
            sched_send(s, cur, cur_off, n, r - 1);
            sched_round(s);
            sched_recv(s, COLL_RBUF, 0, n, r - 1);
            return sched_done(s);
        }
        sched_recv(s, COLL_TMP, 0, n, r + 1);
        sched_reduce(s, COLL_RBUF, 0, cur, cur_off, COLL_TMP, 0, n);
        sched_round(s);
        cur = COLL_RBUF;
        cur_off = 0;
        nr = r / 2;
    } else {
        nr = r - rem;
    }
    for (int m = 1; m < pof2; m <<= 1) {
        int pn = nr ^ m;
        int peer = pn < rem ? 2 * pn : pn + rem;
        sched_recv(s, COLL_TMP, 0, n, peer);
        sched_send(s, cur, cur_off, n, peer);
        if (nr < pn)
            sched_reduce(s, COLL_RBUF, 0, cur, cur_off, COLL_TMP, 0, n);
        else
            sched_reduce(s, COLL_RBUF, 0, COLL_TMP, 0, cur, cur_off, n);
        sched_round(s);
        cur = COLL_RBUF;
        cur_off = 0;
    }
    if (r < 2 * rem)
        sched_send(s, COLL_RBUF, 0, n, r + 1);
    return sched_done(s);
}
