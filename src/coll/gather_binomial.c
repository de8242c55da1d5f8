/*
 * gather_binomial.c -- binomial tree towards the root (ranks relative to the
 * root); the small-message choice: log2(p) rounds of latency instead of the
 * root taking p-1 messages one after another.
 *
 * A rank's subtree is a run of consecutive relative ranks starting at
 * itself, so an inner rank collects its children's runs behind its own block
 * in TMP (relative order) and forwards the whole run in one message. The
 * root receives each child's run straight into RBUF where it belongs; only
 * the one run that wraps past rank p-1 (root != 0) lands in TMP and is
 * copied out in two pieces. Leaves send from their input; non-roots never
 * touch RBUF (MPI lets it be NULL there).
 */
#include "sched.h"

static int gather_root(const coll_args_t *a, coll_sched_t *s, int in, size_t in_off,
                       size_t blk)
{
    int p = a->size, root = a->root;
    size_t wrap_start = 0, wrap_n = 0;

    for (int k = 1; k < p; k <<= 1) {
        size_t cs = (size_t)(k < p - k ? k : p - k);
        size_t start = (size_t)((root + k) % p);
        if (start + cs <= (size_t)p) {
            sched_recv(s, COLL_RBUF, start * blk, cs * blk, (root + k) % p);
        } else {
            sched_need_tmp(s, cs * blk);
            sched_recv(s, COLL_TMP, 0, cs * blk, (root + k) % p);
            wrap_start = start;
            wrap_n = cs;
        }
    }
    sched_copy(s, COLL_RBUF, (size_t)root * blk, in, in_off, blk);
    if (wrap_n) {
        size_t head = (size_t)p - wrap_start;
        sched_copy(s, COLL_RBUF, wrap_start * blk, COLL_TMP, 0, head * blk);
        sched_copy(s, COLL_RBUF, 0, COLL_TMP, head * blk, (wrap_n - head) * blk);
    }
    return sched_done(s);
}

int coll_gather_binomial(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    int vr = (a->rank - root + p) % p, pmask;
    int span = coll_binomial_span(vr, p, &pmask);
    size_t blk = a->count * a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!blk)
        return sched_done(s);
    if (vr == 0)
        return gather_root(a, s, in, in_off, blk);
    int parent = (vr - pmask + root) % p;
    if (span == 1) {
        sched_send_fanin(s, in, in_off, blk, parent);
        return sched_done(s);
    }
    sched_need_tmp(s, (size_t)span * blk);
    for (int k = 1; k < span; k <<= 1) {
        size_t cs = (size_t)(k < span - k ? k : span - k);
        sched_recv(s, COLL_TMP, (size_t)k * blk, cs * blk, (vr + k + root) % p);
    }
    sched_copy(s, COLL_TMP, 0, in, in_off, blk);
    sched_round(s);
    sched_send_fanin(s, COLL_TMP, 0, (size_t)span * blk, parent);
    return sched_done(s);
}
