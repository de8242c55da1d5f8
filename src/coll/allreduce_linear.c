/*
 * allreduce_linear.c -- gather every vector at rank 0, fold them in rank
 * order (((x0 op x1) op x2) ...), send the result back to all. Two message
 * latencies and two scheduling passes per rank, whatever p is: the
 * small-message choice when ranks outnumber cores. Rank 0 does O(p) work,
 * so only for small communicators and small vectors.
 *
 * Buffers: rank 0 receives rank r's vector into TMP slot r-1.
 */
#include "sched.h"

int coll_allreduce_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size;
    size_t n = a->count * a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!n)
        return sched_done(s);
    if (a->rank != 0) {
        sched_send(s, in, in_off, n, 0);
        sched_round(s);
        sched_recv(s, COLL_RBUF, 0, n, 0);
        return sched_done(s);
    }
    if (p == 1) {
        sched_copy(s, COLL_RBUF, 0, in, in_off, n);
        return sched_done(s);
    }
    sched_need_tmp(s, (size_t)(p - 1) * n);
    for (int r = 1; r < p; r++)
        sched_recv(s, COLL_TMP, (size_t)(r - 1) * n, n, r);
    sched_reduce(s, COLL_RBUF, 0, in, in_off, COLL_TMP, 0, n);
    for (int r = 2; r < p; r++)
        sched_reduce(s, COLL_RBUF, 0, COLL_RBUF, 0, COLL_TMP, (size_t)(r - 1) * n, n);
    sched_round(s);
    for (int r = 1; r < p; r++)
        sched_send(s, COLL_RBUF, 0, n, r);
    return sched_done(s);
}
