/*
 * allgather_recursive_doubling.c -- log2(p) rounds; the small-message choice.
 *
 * Power of two: at distance m partners swap their aligned groups of m
 * blocks, in place in RBUF.
 * Otherwise Bruck's variant (any p, ceil(log2 p) rounds): blocks are kept
 * rotated in TMP (slot i = block of rank r+i); at distance d I send my first
 * min(d, p-d) slots to r-d and receive r+d's into slots [d, ...); a final
 * local rotation puts blocks in rank order in RBUF.
 */
#include "sched.h"

static int allgather_pof2(const coll_args_t *a, coll_sched_t *s, int in,
                          size_t in_off, size_t blk)
{
    int p = a->size, r = a->rank;

    for (int m = 1; m < p; m <<= 1) {
        int peer = r ^ m;
        size_t g = (size_t)(r & ~(m - 1)), pg = (size_t)(peer & ~(m - 1));
        sched_recv(s, COLL_RBUF, pg * blk, (size_t)m * blk, peer);
        if (m == 1) {
            sched_send(s, in, in_off, blk, peer);
            sched_copy(s, COLL_RBUF, (size_t)r * blk, in, in_off, blk);
        } else {
            sched_send(s, COLL_RBUF, g * blk, (size_t)m * blk, peer);
        }
        sched_round(s);
    }
    if (p == 1)
        sched_copy(s, COLL_RBUF, 0, in, in_off, blk);
    return sched_done(s);
}

static int allgather_bruck(const coll_args_t *a, coll_sched_t *s, int in,
                           size_t in_off, size_t blk)
{
    int p = a->size, r = a->rank;

    sched_need_tmp(s, (size_t)p * blk);
    sched_copy(s, COLL_TMP, 0, in, in_off, blk);
    sched_round(s);
    for (int d = 1; d < p; d <<= 1) {
        size_t nb = (size_t)(d < p - d ? d : p - d);
        sched_recv(s, COLL_TMP, (size_t)d * blk, nb * blk, (r + d) % p);
        sched_send(s, COLL_TMP, 0, nb * blk, (r - d + p) % p);
        sched_round(s);
    }
    /* slot i holds rank (r+i)%p: two contiguous pieces */
    sched_copy(s, COLL_RBUF, (size_t)r * blk, COLL_TMP, 0, (size_t)(p - r) * blk);
    sched_copy(s, COLL_RBUF, 0, COLL_TMP, (size_t)(p - r) * blk, (size_t)r * blk);
    return sched_done(s);
}

int coll_allgather_recursive_doubling(const coll_args_t *a, coll_sched_t *s)
{
    size_t blk = a->count * a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!blk)
        return sched_done(s);
    if ((a->size & (a->size - 1)) == 0)
        return allgather_pof2(a, s, in, in_off, blk);
    return allgather_bruck(a, s, in, in_off, blk);
}
