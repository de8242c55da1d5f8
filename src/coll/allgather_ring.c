/*
 * allgather_ring.c -- p-1 rounds, each passing one block to the right
 * neighbour. Bandwidth optimal for any p; the large-message choice.
 * The first round sends straight from the input (no copy on the critical
 * path); the copy of my own block into RBUF runs after that round.
 */
#include "sched.h"

int coll_allgather_ring(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    size_t blk = a->count * a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!blk)
        return sched_done(s);
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + 2 * p) % p;
        sched_recv(s, COLL_RBUF, (size_t)rb * blk, blk, prev);
        if (k == 0)
            sched_send(s, in, in_off, blk, next);
        else
            sched_send(s, COLL_RBUF, (size_t)sb * blk, blk, next);
        if (k == 0)
            sched_copy(s, COLL_RBUF, (size_t)r * blk, in, in_off, blk);
        sched_round(s);
    }
    if (p == 1)
        sched_copy(s, COLL_RBUF, 0, in, in_off, blk);
    return sched_done(s);
}
