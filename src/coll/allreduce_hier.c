/*
 * allreduce_hier.c -- two-level allreduce: each node reduces into its
 * leader's RBUF, the leaders allreduce in place, each leader broadcasts the
 * result on its node; every phase uses the flat algorithm chosen for its
 * group. Only leaders compute final values (the flat allreduces give them
 * identical bits), the rest receive copies, so every rank gets the same
 * bits.
 *
 * On one node the flat algorithm over the node is used unchanged: reduce
 * plus broadcast would only add a phase there.
 *
 * Non-commutative ops need rank order, which a node-first order breaks
 * when ranks are not placed in blocks: they get flat recursive doubling.
 */
#include "hier.h"

int coll_allreduce_hier(const coll_args_t *a, coll_sched_t *s)
{
    coll_hier_t h;
    coll_args_t sub;
    coll_bufmap_t m;
    int rc, in;
    size_t in_off;

    if (a->noncomm)
        return coll_allreduce_recursive_doubling(a, s);
    if ((rc = coll_hier_init(&h, a, -1)))
        return rc;
    if (h.nnodes == 1) {
        rc = coll_hier_one_node(s, COLL_ALLREDUCE, a, &h);
        coll_hier_fini(&h);
        return rc;
    }
    coll_input(a, &in, &in_off);
    if (h.nlocal > 1) {
        /* the leader's result goes to RBUF; the others only read input */
        coll_hier_args(a, &sub, COLL_REDUCE, h.local, h.nlocal, h.head_local, a->count,
                       h.is_head && a->inplace);
        coll_bufmap_ident(&m);
        m.buf[COLL_SBUF] = in;
        m.off[COLL_SBUF] = in_off;
        coll_hier_phase(s, COLL_REDUCE, &sub, h.mates, h.oversub, &m);
    }
    if (h.is_head) {
        coll_hier_args(a, &sub, COLL_ALLREDUCE, h.node, h.nnodes, -1, a->count,
                       h.nlocal > 1 || a->inplace);
        coll_bufmap_ident(&m);
        coll_hier_phase(s, COLL_ALLREDUCE, &sub, h.heads, 0, &m);
    }
    coll_hier_node_bcast(s, a, &h, 0, a->count);
    coll_hier_fini(&h);
    return sched_done(s);
}
