/*
 * allreduce_ring.c -- ring reduce-scatter then ring allgather over p blocks:
 * 2(p-1) rounds, each moving n/p bytes to the right neighbour. Bandwidth
 * optimal for any p (no power-of-two folding), so it is the large-message
 * choice; latency grows linearly with p.
 *
 * Block b starts at rank b and travels b+1, b+2, ..., b-1; each hop does
 * "partial so far op my contribution". Each block is completed on exactly
 * one rank (b-1) and copied to the others, so all ranks get the same bits.
 *
 * Buffers: accumulate in RBUF, receive a block into TMP.
 */
#include "sched.h"

int coll_allreduce_ring(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    size_t n = a->count * a->esize, es = a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!n)
        return sched_done(s);
    if (p == 1) {
        sched_copy(s, COLL_RBUF, 0, in, in_off, n);
        return sched_done(s);
    }
    {
        size_t f, c;
        coll_block(a->count, p, 0, &f, &c);   /* block 0 is the largest */
        sched_need_tmp(s, c * es);
    }
    /* reduce-scatter: at step k send block r-k, fold in block r-k-1 */
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + 2 * p) % p;
        size_t sf, sc, rf, rc;
        coll_block(a->count, p, sb, &sf, &sc);
        coll_block(a->count, p, rb, &rf, &rc);
        if (rc)
            sched_recv(s, COLL_TMP, 0, rc * es, prev);
        if (sc) {
            /* step 0 sends my own raw block; later ones the partial */
            if (k == 0)
                sched_send(s, in, in_off + sf * es, sc * es, next);
            else
                sched_send(s, COLL_RBUF, sf * es, sc * es, next);
        }
        sched_reduce(s, COLL_RBUF, rf * es, COLL_TMP, 0, in, in_off + rf * es,
                     rc * es);
        sched_round(s);
    }
    /* allgather: I hold block r+1 complete; pass blocks along the ring */
    for (int k = 0; k < p - 1; k++) {
        int sb = (r + 1 - k + p) % p, rb = (r - k + p) % p;
        size_t sf, sc, rf, rc;
        coll_block(a->count, p, sb, &sf, &sc);
        coll_block(a->count, p, rb, &rf, &rc);
        if (rc)
            sched_recv(s, COLL_RBUF, rf * es, rc * es, prev);
        if (sc)
            sched_send(s, COLL_RBUF, sf * es, sc * es, next);
        sched_round(s);
    }
    return sched_done(s);
}
