/*
 * barrier_linear.c -- everyone signals rank 0, rank 0 releases everyone.
 * Two message latencies regardless of p, and every rank needs to run only
 * twice (arrive, leave), which is what matters when ranks outnumber cores
 * and each round of a log-depth algorithm waits for the scheduler. O(p) work
 * at rank 0, so only for small communicators.
 */
#include "sched.h"

int coll_barrier_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size;

    if (p == 1)
        return sched_done(s);
    if (a->rank == 0) {
        for (int r = 1; r < p; r++)
            sched_recv(s, COLL_RBUF, 0, 0, r);
        sched_round(s);
        for (int r = 1; r < p; r++)
            sched_send(s, COLL_SBUF, 0, 0, r);
    } else {
        sched_send(s, COLL_SBUF, 0, 0, 0);
        sched_round(s);
        sched_recv(s, COLL_RBUF, 0, 0, 0);
    }
    return sched_done(s);
}
