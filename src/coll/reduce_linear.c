/*
 * reduce_linear.c -- every rank sends its vector straight to the root,
 * which folds them in rank order (((x0 op x1) op x2) ...). One message
 * latency and one scheduling pass per non-root, whatever p is: when ranks
 * outnumber cores, a tree's inner ranks wait for their children to be
 * scheduled before they can forward, and the root waits for that chain;
 * here only the root waits. The root does O(p) receives and folds, so only
 * for small communicators and small vectors. Rank order holds for any op,
 * whatever the root.
 *
 * Buffers: the root receives rank r's vector into TMP slot r (r < root) or
 * r - 1 (r > root); when its own input is RBUF (in place) and the fold
 * would overwrite it before its turn (root >= 2), it first copies it to
 * TMP slot p - 1.
 */
#include "sched.h"

int coll_reduce_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    size_t n = a->count * a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (!n)
        return sched_done(s);
    if (a->rank != root) {
        sched_send(s, in, in_off, n, root);
        return sched_done(s);
    }
    if (p == 1) {
        sched_copy(s, COLL_RBUF, 0, in, in_off, n);
        return sched_done(s);
    }
    int keep = in == COLL_RBUF && root >= 2;
    sched_need_tmp(s, (size_t)(keep ? p : p - 1) * n);
    if (keep) {
        sched_copy(s, COLL_TMP, (size_t)(p - 1) * n, COLL_RBUF, 0, n);
        in = COLL_TMP;
        in_off = (size_t)(p - 1) * n;
    }
    for (int r = 0; r < p; r++)
        if (r != root)
            sched_recv(s, COLL_TMP, (size_t)(r < root ? r : r - 1) * n, n, r);
    /* x0 op x1 first, then each next rank's vector on the right */
    for (int r = 1; r < p; r++) {
        int lb = COLL_RBUF, rb = COLL_TMP;
        size_t lo = 0, ro = (size_t)(r < root ? r : r - 1) * n;
        if (r == 1) {
            lb = root == 0 ? in : COLL_TMP;
            lo = root == 0 ? in_off : 0;
        }
        if (r == root) {
            rb = in;
            ro = in_off;
        }
        sched_reduce(s, COLL_RBUF, 0, lb, lo, rb, ro, n);
    }
    return sched_done(s);
}
