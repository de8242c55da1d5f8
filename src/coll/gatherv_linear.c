/*
 * gatherv_linear.c -- every rank sends its block to the root, which
 * receives each into RBUF at its displacement. Only the root knows the
 * counts (a->counts is NULL elsewhere), so a tree could not size its
 * forwarded runs without an extra exchange; one message per rank needs no
 * such knowledge. Empty blocks are skipped on both sides: the sender's
 * count and the root's counts[r] agree in a correct program.
 */
#include "sched.h"

int coll_gatherv_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    size_t es = a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (a->rank != root) {
        if (a->count)
            sched_send_fanin(s, in, in_off, a->count * es, root);
        return sched_done(s);
    }
    for (int i = 1; i < p; i++) {
        int r = (root + i) % p;
        if (a->counts[r])
            sched_recv(s, COLL_RBUF, a->displs[r] * es, a->counts[r] * es, r);
    }
    sched_copy(s, COLL_RBUF, a->displs[root] * es, in, in_off, a->count * es);
    return sched_done(s);
}
