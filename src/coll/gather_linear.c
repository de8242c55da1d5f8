/*
 * gather_linear.c -- every rank sends its block straight to the root, which
 * posts all p-1 receives into RBUF at once. Each byte crosses one link
 * once (the binomial tree forwards inner blocks up to log2(p) times), so
 * this is the large-message choice.
 */
#include "sched.h"

int coll_gather_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    size_t blk = a->count * a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!blk)
        return sched_done(s);
    if (a->rank != root) {
        sched_send_fanin(s, in, in_off, blk, root);
        return sched_done(s);
    }
    for (int i = 1; i < p; i++) {
        int r = (root + i) % p;
        sched_recv(s, COLL_RBUF, (size_t)r * blk, blk, r);
    }
    sched_copy(s, COLL_RBUF, (size_t)root * blk, in, in_off, blk);
    return sched_done(s);
}
