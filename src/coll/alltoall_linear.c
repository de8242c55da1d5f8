/*
 * alltoall_linear.c -- every block posted at once: one round in which a
 * rank sends its p-1 blocks and receives p-1 (in the order of the pairwise
 * rounds, r+k out and r-k in, so no receiver is everyone's first target).
 * A rank has to be scheduled once to start all its traffic, not once per
 * round: the small-message alltoall when ranks outnumber cores, where each
 * round of pairwise or Bruck waits for the scheduler to run that round's
 * peer. Buffers and in-place handling are alltoallv_pairwise.c's.
 */
#include "sched.h"

int coll_alltoall_linear(const coll_args_t *a, coll_sched_t *s)
{
    if (!a->count)
        return sched_done(s);
    return coll_a2a_pairwise(a, s, coll_a2a_uniform_layout, 1);
}
