/*
 * reduce_binomial.c -- binomial tree towards the root (ranks relative to
 * the root). A rank folds in its children's partial results, lowest-distance
 * child first, then sends to its parent. Every partial is "my block op the
 * next higher relative block", so the expression tree is fixed by (p, root)
 * alone. Best for small messages.
 *
 * The tree covers relative ranks in order, so the root gets x(root) op
 * ... op x(p-1) op x0 op ... : rank order only for root 0. A
 * non-commutative op therefore reduces on a tree rooted at rank 0, which
 * then sends the result to the root (one extra message).
 *
 * Buffers: the root accumulates in RBUF (its only valid buffer besides
 * SBUF), receiving its first child there too unless RBUF already holds its
 * input (in place) and later children into TMP[0, n); other ranks
 * accumulate in TMP[0, n) and receive into TMP[n, 2n), and never touch
 * RBUF (MPI lets it be NULL there).
 */
#include "sched.h"

int coll_reduce_binomial(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->noncomm ? 0 : a->root;   /* tree root */
    int vr = (a->rank - root + p) % p;
    size_t n = a->count * a->esize;
    int cur;            /* buffer holding my partial result */
    size_t cur_off;
    int is_root = a->rank == a->root;
    int acc = is_root ? COLL_RBUF : COLL_TMP;
    size_t in_off = is_root ? 0 : n;

    coll_input(a, &cur, &cur_off);
    if (!n)
        return sched_done(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            sched_send(s, cur, cur_off, n, (vr - mask + root) % p);
            sched_round(s);
            if (is_root)        /* from the tree root, rank 0 */
                sched_recv(s, COLL_RBUF, 0, n, root);
            return sched_done(s);
        }
        if (vr + mask < p) {
            int child = (vr + mask + root) % p;
            if (is_root && cur != COLL_RBUF) {
                /* the root's first child lands in RBUF itself and is folded
                   there (RBUF = mine op RBUF): no scratch, and the fold
                   reads what the copy just left in the cache */
                sched_recv(s, COLL_RBUF, 0, n, child);
                sched_reduce(s, COLL_RBUF, 0, cur, cur_off, COLL_RBUF, 0, n);
            } else {
                sched_need_tmp(s, in_off + n);
                sched_recv(s, COLL_TMP, in_off, n, child);
                sched_reduce(s, acc, 0, cur, cur_off, COLL_TMP, in_off, n);
            }
            sched_round(s);
            cur = acc;
            cur_off = 0;
        }
    }
    /* only the tree root gets here; with p == 1 it still owes RBUF a copy */
    if (is_root)
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, n);
    else
        sched_send(s, cur, cur_off, n, a->root);
    return sched_done(s);
}
