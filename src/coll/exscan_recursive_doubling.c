/*
 * exscan_recursive_doubling.c -- exclusive prefix reduction: rank r gets
 * x0 op ... op x(r-1), rank 0's RBUF is never written (MPI leaves it
 * undefined; callers rely on it being untouched). The rounds are scan's
 * (scan_recursive_doubling.c) with the result starting empty: the first
 * lower partner's group reduction is copied rather than combined.
 */
#include "sched.h"

int coll_exscan_recursive_doubling(const coll_args_t *a, coll_sched_t *s)
{
    return coll_scan_build(a, s, 1);
}
