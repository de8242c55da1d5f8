/*
 * reduce_scatter_pairwise.c -- reduce_scatter and reduce_scatter_block
 * (uniform blocks when counts is NULL) in p-1 rounds: in round k rank r
 * sends its input block for r+k to r+k and receives r-k's input for its own
 * block. Each rank reduces only its own block, every block is computed
 * once, on its owner: no data moves twice, results need no agreement.
 *
 * Rank order: the contributions arrive from r-1, r-2, ..., 0 and then from
 * p-1, p-2, ..., r+1. The first run is put in front of the prefix
 * ("recv op prefix"), the second in front of a separate suffix, and the
 * last round joins prefix op suffix: x0 op ... op x(p-1) for any op, so
 * this is the algorithm for non-commutative ops.
 *
 * Buffers: the prefix accumulates in RBUF (in place: in TMP, since RBUF
 * still holds blocks to send until the last round); TMP also holds the
 * suffix and the incoming block.
 */
#include <stdlib.h>
#include "sched.h"

int coll_reduce_scatter_pairwise(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    size_t es = a->esize;
    size_t *off = coll_rs_offsets(a, s);
    int pre, in;
    size_t pre_off, in_off;

    if (!off)
        return sched_done(s);
    coll_input(a, &in, &in_off);
    size_t n = (off[r + 1] - off[r]) * es;
    /* TMP: [prefix (in place only)] [suffix] [incoming] */
    int acc = a->inplace ? COLL_TMP : COLL_RBUF;
    size_t suf = a->inplace ? n : 0, rv = suf + n;
    int have_suf = 0;
    pre = in;
    pre_off = in_off + off[r] * es;
    if (n && p > 1)
        sched_need_tmp(s, rv + n);
    for (int k = 1; k < p; k++) {
        int dst = (r + k) % p, src = (r - k + p) % p;
        if (n)
            sched_recv(s, COLL_TMP, src > r && !have_suf ? suf : rv, n, src);
        if (off[dst + 1] > off[dst])
            sched_send(s, in, in_off + off[dst] * es, (off[dst + 1] - off[dst]) * es, dst);
        if (src < r) {
            sched_reduce(s, acc, 0, COLL_TMP, rv, pre, pre_off, n);
            pre = acc;
            pre_off = 0;
        } else if (have_suf) {
            sched_reduce(s, COLL_TMP, suf, COLL_TMP, rv, COLL_TMP, suf, n);
        }
        have_suf |= src > r;
        if (k == p - 1 && have_suf)
            sched_reduce(s, COLL_RBUF, 0, pre, pre_off, COLL_TMP, suf, n);
        sched_round(s);
    }
    if (!have_suf)
        sched_copy(s, COLL_RBUF, 0, pre, pre_off, n);
    free(off);
    return sched_done(s);
}
