/*
 * scatterv_linear.c -- the root sends each rank its block from SBUF at its
 * displacement. Only the root knows the counts (a->counts is NULL
 * elsewhere), so each rank receives exactly its own count in one message;
 * empty blocks are skipped on both sides. The root copies its own block at
 * the root's count (the API refuses an rcount smaller than that).
 */
#include "sched.h"

int coll_scatterv_linear(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    size_t es = a->esize;

    if (a->rank != root) {
        if (a->count)
            sched_recv(s, COLL_RBUF, 0, a->count * es, root);
        return sched_done(s);
    }
    for (int i = 1; i < p; i++) {
        int r = (root + i) % p;
        if (a->counts[r])
            sched_send(s, COLL_SBUF, a->displs[r] * es, a->counts[r] * es, r);
    }
    if (!a->inplace)
        sched_copy(s, COLL_RBUF, 0, COLL_SBUF, a->displs[root] * es, a->counts[root] * es);
    return sched_done(s);
}
