/*
 * reduce_scatter_ring.c -- reduce_scatter(_block) for large vectors and
 * commutative ops: p-1 rounds, each passing one partially reduced block to
 * the right neighbour. Block b starts at rank b+1 and is completed at rank
 * b, so every rank sends (p-1)/p of the vector and reduces as much, and
 * only ever talks to its two neighbours (friendlier to a real network than
 * pairwise's changing partners). The chain b+1, ..., p-1, 0, ..., b is not
 * rank order: commutative ops only. Each block is computed once, on its
 * owner, so all results are exact copies of one expression.
 *
 * Buffers: TMP holds the partial being passed on and the incoming one (the
 * partial sent in round k is written in round k-1's local steps).
 */
#include <stdlib.h>
#include "sched.h"

int coll_reduce_scatter_ring(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    size_t es = a->esize, most = 0;
    size_t *off = coll_rs_offsets(a, s);
    int in;
    size_t in_off;

    if (!off)
        return sched_done(s);
    coll_input(a, &in, &in_off);
    for (int b = 0; b < p; b++)
        if ((off[b + 1] - off[b]) * es > most)
            most = (off[b + 1] - off[b]) * es;
    size_t rv = most;   /* TMP: [partial to send] [incoming] */
    if (p > 1)
        sched_need_tmp(s, 2 * most);
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - 1 - k + p) % p, rb = (r - 2 - k + 2 * p) % p;
        size_t sn = (off[sb + 1] - off[sb]) * es, rn = (off[rb + 1] - off[rb]) * es;
        if (rn)
            sched_recv(s, COLL_TMP, rv, rn, prev);
        if (sn) {
            /* round 0 sends my raw block; later ones the partial */
            if (k == 0)
                sched_send(s, in, in_off + off[sb] * es, sn, next);
            else
                sched_send(s, COLL_TMP, 0, sn, next);
        }
        if (rb != r) {
            sched_reduce(s, COLL_TMP, 0, COLL_TMP, rv, in, in_off + off[rb] * es, rn);
        } else if (a->inplace) {
            /* my block and RBUF[0, rn) may overlap: go through TMP */
            sched_reduce(s, COLL_TMP, rv, COLL_TMP, rv, in, in_off + off[r] * es, rn);
            sched_copy(s, COLL_RBUF, 0, COLL_TMP, rv, rn);
        } else {
            sched_reduce(s, COLL_RBUF, 0, COLL_TMP, rv, in, in_off + off[r] * es, rn);
        }
        sched_round(s);
    }
    if (p == 1)
        sched_copy(s, COLL_RBUF, 0, in, in_off, off[1] * es);
    free(off);
    return sched_done(s);
}
