/*
 * barrier_dissemination.c -- ceil(log2 p) rounds; in round k every rank
 * signals rank+2^k and waits for rank-2^k. After the last round every rank
 * has (transitively) heard from every other, for any p, not only powers of
 * two.
 */
#include "sched.h"

int coll_barrier_dissemination(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;

    for (int d = 1; d < p; d <<= 1) {
        sched_recv(s, COLL_RBUF, 0, 0, (r - d + p) % p);
        sched_send(s, COLL_SBUF, 0, 0, (r + d) % p);
        sched_round(s);
    }
    return sched_done(s);
}
