/*
 * alltoall_bruck.c -- Bruck's alltoall: ceil(log2 p) rounds instead of p-1,
 * at the price of sending each block ~log2(p)/2 times and packing; the
 * choice when blocks are small and latency dominates.
 *
 * TMP holds p slots; slot i starts as my block for rank r+i. In the round
 * for bit d every slot whose index has bit d set moves to rank r+d, into
 * the same slot index there. A block for r+i thus travels i ranks in total
 * and, when all bits are done, slot i at rank r holds the block from rank
 * r-i. The slots of one round are not contiguous, so they are packed into
 * a send area before the round and unpacked from a receive area after it
 * (both in TMP after the slots); packing for round d+1 runs in round d's
 * local steps, so no round is spent on copies alone.
 *
 * In place needs nothing special: RBUF is only read by the first rotation
 * and only written by the final unrotation.
 */
#include "sched.h"

/* pack (dir = 0) or unpack (dir = 1) the slots with bit d between the slot
   area at TMP 0 and the area at TMP `area` */
static void move_slots(coll_sched_t *s, int p, int d, size_t blk, size_t area, int dir)
{
    size_t k = 0;
    for (int i = d; i < p; i++) {
        if (!(i & d))
            continue;
        if (dir == 0)
            sched_copy(s, COLL_TMP, area + k * blk, COLL_TMP, (size_t)i * blk, blk);
        else
            sched_copy(s, COLL_TMP, (size_t)i * blk, COLL_TMP, area + k * blk, blk);
        k++;
    }
}

static size_t nslots(int p, int d)
{
    size_t k = 0;
    for (int i = d; i < p; i++)
        k += (i & d) != 0;
    return k;
}

int coll_alltoall_bruck(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    size_t blk = a->count * a->esize, most = 0;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!blk)
        return sched_done(s);
    for (int d = 1; d < p; d <<= 1)
        if (nslots(p, d) > most)
            most = nslots(p, d);
    size_t pk = (size_t)p * blk, rv = pk + most * blk;
    sched_need_tmp(s, rv + most * blk);

    /* rotate: slot i = my block for rank (r + i) % p */
    sched_copy(s, COLL_TMP, 0, in, in_off + (size_t)r * blk, (size_t)(p - r) * blk);
    sched_copy(s, COLL_TMP, (size_t)(p - r) * blk, in, in_off, (size_t)r * blk);
    if (p > 1)
        move_slots(s, p, 1, blk, pk, 0);
    sched_round(s);
    for (int d = 1; d < p; d <<= 1) {
        size_t bytes = nslots(p, d) * blk;
        sched_recv(s, COLL_TMP, rv, bytes, (r - d + p) % p);
        sched_send(s, COLL_TMP, pk, bytes, (r + d) % p);
        move_slots(s, p, d, blk, rv, 1);
        if (2 * d < p)
            move_slots(s, p, 2 * d, blk, pk, 0);
        sched_round(s);
    }
    /* unrotate: slot i came from rank (r - i) % p */
    for (int i = 0; i < p; i++)
        sched_copy(s, COLL_RBUF, (size_t)((r - i + p) % p) * blk, COLL_TMP,
                   (size_t)i * blk, blk);
    return sched_done(s);
}
