/*
 * alltoallv_linear.c -- alltoall_linear.c's one round with per-peer blocks:
 * every exchange posted at once, for ranks that share cores.
 */
#include "sched.h"

int coll_alltoallv_linear(const coll_args_t *a, coll_sched_t *s)
{
    return coll_alltoallv_build(a, s, 1);
}
