/*
 * reduce_scatter_linear.c -- reduce_scatter and reduce_scatter_block in one
 * round: every rank sends each other rank its input block for it, at once,
 * and folds the p contributions to its own block in rank order
 * (((x0 op x1) op x2) ...). This is pairwise's traffic with every exchange
 * posted together: when ranks outnumber cores, each of pairwise's p-1
 * rounds waits for a peer to be scheduled; here a rank is scheduled once
 * to start all its traffic. p-1 incoming blocks are held at once, so only
 * for small communicators and small blocks. Rank order holds for any op.
 *
 * Buffers: TMP slot q (q < rank) or q - 1 (q > rank) receives rank q's
 * block; in place the fold accumulates in TMP slot p - 1 (RBUF still holds
 * the input, whose own block the fold reads) and is copied to RBUF last.
 */
#include <stdlib.h>
#include "sched.h"

int coll_reduce_scatter_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    size_t es = a->esize;
    size_t *off = coll_rs_offsets(a, s);
    int in;
    size_t in_off;

    if (!off)
        return sched_done(s);
    coll_input(a, &in, &in_off);
    size_t n = (off[r + 1] - off[r]) * es;
    int acc = a->inplace ? COLL_TMP : COLL_RBUF;
    size_t acc_off = a->inplace ? (size_t)(p - 1) * n : 0;
    if (n && p > 1)
        sched_need_tmp(s, (size_t)(a->inplace ? p : p - 1) * n);
    for (int k = 1; k < p; k++) {
        int dst = (r + k) % p, src = (r - k + p) % p;
        if (n)
            sched_recv(s, COLL_TMP, (size_t)(src < r ? src : src - 1) * n, n, src);
        if (off[dst + 1] > off[dst])
            sched_send(s, in, in_off + off[dst] * es, (off[dst + 1] - off[dst]) * es, dst);
    }
    /* the executor runs a round's local steps once its messages are done:
       every block has left before RBUF is written */
    for (int q = 1; q < p; q++) {
        int lb = acc, rb = COLL_TMP;
        size_t lo = acc_off, ro = (size_t)(q < r ? q : q - 1) * n;
        if (q == 1) {
            lb = r == 0 ? in : COLL_TMP;
            lo = r == 0 ? in_off + off[0] * es : 0;
        }
        if (q == r) {
            rb = in;
            ro = in_off + off[r] * es;
        }
        sched_reduce(s, acc, acc_off, lb, lo, rb, ro, n);
    }
    if (p == 1 ? !a->inplace : a->inplace)
        sched_copy(s, COLL_RBUF, 0, p == 1 ? in : acc, p == 1 ? in_off : acc_off, n);
    free(off);
    return sched_done(s);
}
