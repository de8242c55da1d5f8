/*
 * scatter_linear.c -- the root sends every rank its block straight from
 * SBUF, all p-1 sends posted at once. Each byte crosses one link once (the
 * binomial tree forwards blocks through up to log2(p) ranks), so this is the
 * large-message choice.
 */
#include "sched.h"

int coll_scatter_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    size_t blk = a->count * a->esize;

    if (!blk)
        return sched_done(s);
    if (a->rank != root) {
        sched_recv(s, COLL_RBUF, 0, blk, root);
        return sched_done(s);
    }
    for (int i = 1; i < p; i++) {
        int r = (root + i) % p;
        sched_send(s, COLL_SBUF, (size_t)r * blk, blk, r);
    }
    if (!a->inplace)
        sched_copy(s, COLL_RBUF, 0, COLL_SBUF, (size_t)root * blk, blk);
    return sched_done(s);
}
