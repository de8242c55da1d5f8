/*
 * bcast_binomial.c -- binomial tree rooted at root (ranks renumbered
 * relative to the root). One round to receive from the parent, one round
 * posting all sends to the children, biggest subtree first so the longest
 * chain starts earliest. Best for small messages: log2(p) latency terms.
 */
#include "sched.h"

int coll_bcast_binomial(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size;
    int vr = (a->rank - a->root + p) % p;
    size_t bytes = a->count * a->esize;
    int mask = 1;

    if (!bytes || p == 1)
        return sched_done(s);
    /* my parent is vr minus my lowest set bit; the root has none */
    while (mask < p) {
        if (vr & mask) {
            sched_recv(s, COLL_RBUF, 0, bytes, (vr - mask + a->root) % p);
            sched_round(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            sched_send(s, COLL_RBUF, 0, bytes, (vr + mask + a->root) % p);
    return sched_done(s);
}
