/*
 * bcast_scatter_allgather.c -- van de Geijn broadcast for large messages:
 * the root scatters p blocks down a binomial tree (each subtree receives
 * exactly its blocks), then a ring allgather completes every copy. Moves
 * ~2x the data once instead of log2(p) times. Blocks are numbered by rank
 * relative to the root, so a subtree's blocks are contiguous in the buffer.
 * Empty blocks (count < p) are skipped on both sides.
 */
#include "sched.h"

/* byte range of relative blocks [b0, b1) */
static void range(const coll_args_t *a, int b0, int b1, size_t *off, size_t *len)
{
    size_t f0, c0, f1, c1;
    coll_block(a->count, a->size, b0, &f0, &c0);
    coll_block(a->count, a->size, b1 - 1, &f1, &c1);
    *off = f0 * a->esize;
    *len = (f1 + c1 - f0) * a->esize;
}

int coll_bcast_scatter_allgather(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    int vr = (a->rank - root + p) % p;
    size_t off, len;
    int mask = 1;

    if (!a->count || p == 1)
        return sched_done(s);

    /* scatter: receive my subtree's blocks [vr, vr+mask) from my parent */
    while (mask < p) {
        if (vr & mask) {
            int hi = vr + mask < p ? vr + mask : p;
            range(a, vr, hi, &off, &len);
            if (len) {
                sched_recv(s, COLL_RBUF, off, len, (vr - mask + root) % p);
                sched_round(s);
            }
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask >= p)
            continue;
        int hi = vr + 2 * mask < p ? vr + 2 * mask : p;
        range(a, vr + mask, hi, &off, &len);
        if (len)
            sched_send(s, COLL_RBUF, off, len, (vr + mask + root) % p);
    }
    sched_round(s);

    /* ring allgather over relative ranks: step k passes block vr-k on */
    int next = (vr + 1) % p, prev = (vr - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (vr - k + p) % p, rb = (vr - k - 1 + 2 * p) % p;
        size_t soff, slen, roff, rlen;
        range(a, sb, sb + 1, &soff, &slen);
        range(a, rb, rb + 1, &roff, &rlen);
        if (rlen)
            sched_recv(s, COLL_RBUF, roff, rlen, (prev + root) % p);
        if (slen)
            sched_send(s, COLL_RBUF, soff, slen, (next + root) % p);
        sched_round(s);
    }
    return sched_done(s);
}
