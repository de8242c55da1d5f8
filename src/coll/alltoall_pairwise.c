/*
 * alltoall_pairwise.c -- the large-message alltoall: p-1 rounds of one
 * exchange each (r sends to r+k, receives from r-k), every block sent once
 * straight from the user's buffer. Rounds and the in-place handling are
 * alltoallv_pairwise.c's, here with p equal blocks of count elements.
 */
#include "sched.h"

void coll_a2a_uniform_layout(const coll_args_t *a, int j, size_t *sc, size_t *sd,
                             size_t *rc, size_t *rd)
{
    *sc = *rc = a->count;
    *sd = *rd = (size_t)j * a->count;
}

int coll_alltoall_pairwise(const coll_args_t *a, coll_sched_t *s)
{
    if (!a->count)
        return sched_done(s);
    return coll_a2a_pairwise(a, s, coll_a2a_uniform_layout, 0);
}
