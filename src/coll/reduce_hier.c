/*
 * reduce_hier.c -- two-level reduce: each node reduces to its acting
 * leader (the root on the root's node), then the leaders reduce to the
 * root, each phase with the flat algorithm chosen for its group's size.
 * Each element's expression tree is fixed by the layout and the root, so
 * results do not depend on timing.
 *
 * Buffers: the root's node result lands in RBUF and the leaders' phase
 * runs in place there; another node's leader keeps its node result in
 * TMP[0, n) and gives the leaders' phase TMP from n on; a node of one rank
 * hands its input to the leaders' phase directly.
 *
 * Non-commutative ops need rank order, which a node-first order breaks
 * when ranks are not placed in blocks: they get the flat binomial tree.
 */
#include "hier.h"

int coll_reduce_hier(const coll_args_t *a, coll_sched_t *s)
{
    coll_hier_t h;
    coll_args_t sub;
    coll_bufmap_t m;
    int rc, in, me_root = a->rank == a->root;
    size_t in_off, n = a->count * a->esize;

    if (a->noncomm)
        return coll_reduce_binomial(a, s);
    if ((rc = coll_hier_init(&h, a, a->root)))
        return rc;
    coll_input(a, &in, &in_off);
    int part = in;          /* where my node's partial result will be */
    size_t part_off = in_off;
    if (h.nlocal > 1) {
        coll_hier_args(a, &sub, COLL_REDUCE, h.local, h.nlocal, h.head_local, a->count,
                       me_root && a->inplace);
        coll_bufmap_ident(&m);
        if (!sub.inplace) {
            m.buf[COLL_SBUF] = in;
            m.off[COLL_SBUF] = in_off;
        }
        if (me_root) {
            part = COLL_RBUF;
            part_off = 0;
        } else if (h.is_head) {
            /* the node phase's result buffer is my TMP[0, n): say so here,
               since that phase may not need scratch of its own */
            sched_need_tmp(s, n);
            m.buf[COLL_RBUF] = COLL_TMP;
            m.off[COLL_TMP] = n;
            part = COLL_TMP;
            part_off = 0;
        }
        coll_hier_phase(s, COLL_REDUCE, &sub, h.mates, h.oversub, &m);
    }
    if (h.is_head && (h.nnodes > 1 || h.nlocal == 1)) {
        int inpl = me_root && part == COLL_RBUF;
        coll_hier_args(a, &sub, COLL_REDUCE, h.node, h.nnodes, h.L->node[a->root],
                       a->count, inpl);
        coll_bufmap_ident(&m);
        if (!inpl) {
            m.buf[COLL_SBUF] = part;
            m.off[COLL_SBUF] = part_off;
        }
        if (part == COLL_TMP)
            m.off[COLL_TMP] = n;
        coll_hier_phase(s, COLL_REDUCE, &sub, h.heads, 0, &m);
    }
    coll_hier_fini(&h);
    return sched_done(s);
}
