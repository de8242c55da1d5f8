/*
 * scatter_binomial.c -- gather_binomial run backwards; the small-message
 * choice (log2(p) rounds instead of p-1 sends from the root).
 *
 * A rank's subtree is a run of consecutive relative ranks starting at
 * itself: an inner rank receives its whole run into TMP (own block first)
 * and hands each child its part, biggest subtree first so the deepest chain
 * starts earliest. The root sends each run straight from SBUF; the one run
 * that wraps past rank p-1 (root != 0) is first packed into TMP, which
 * costs a round with no messages. Leaves receive straight into RBUF.
 */
#include "sched.h"

static int scatter_root(const coll_args_t *a, coll_sched_t *s, size_t blk)
{
    int p = a->size, root = a->root, top = coll_pof2_floor(p > 1 ? p - 1 : 1);

    for (int k = top; k >= 1 && p > 1; k >>= 1) {
        size_t cs = (size_t)(k < p - k ? k : p - k);
        size_t start = (size_t)((root + k) % p);
        if (start + cs > (size_t)p) {
            size_t head = (size_t)p - start;
            sched_need_tmp(s, cs * blk);
            sched_copy(s, COLL_TMP, 0, COLL_SBUF, start * blk, head * blk);
            sched_copy(s, COLL_TMP, head * blk, COLL_SBUF, 0, (cs - head) * blk);
            sched_round(s);
        }
    }
    for (int k = top; k >= 1 && p > 1; k >>= 1) {
        size_t cs = (size_t)(k < p - k ? k : p - k);
        size_t start = (size_t)((root + k) % p);
        if (start + cs > (size_t)p)
            sched_send(s, COLL_TMP, 0, cs * blk, (root + k) % p);
        else
            sched_send(s, COLL_SBUF, start * blk, cs * blk, (root + k) % p);
    }
    if (!a->inplace)
        sched_copy(s, COLL_RBUF, 0, COLL_SBUF, (size_t)root * blk, blk);
    return sched_done(s);
}

int coll_scatter_binomial(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    int vr = (a->rank - root + p) % p, pmask;
    int span = coll_binomial_span(vr, p, &pmask);
    size_t blk = a->count * a->esize;

    if (!blk)
        return sched_done(s);
    if (vr == 0)
        return scatter_root(a, s, blk);
    int parent = (vr - pmask + root) % p;
    if (span == 1) {
        sched_recv(s, COLL_RBUF, 0, blk, parent);
        return sched_done(s);
    }
    sched_need_tmp(s, (size_t)span * blk);
    sched_recv(s, COLL_TMP, 0, (size_t)span * blk, parent);
    sched_round(s);
    for (int k = coll_pof2_floor(span - 1); k >= 1; k >>= 1) {
        size_t cs = (size_t)(k < span - k ? k : span - k);
        sched_send(s, COLL_TMP, (size_t)k * blk, cs * blk, (vr + k + root) % p);
    }
    sched_copy(s, COLL_RBUF, 0, COLL_TMP, 0, blk);
    return sched_done(s);
}
