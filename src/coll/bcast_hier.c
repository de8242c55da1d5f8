/*
 * bcast_hier.c -- two-level broadcast: the root sends to one acting leader
 * per node (the root itself on its own node) with the flat algorithm
 * chosen for nnodes ranks, then each leader broadcasts on its node with
 * the flat algorithm chosen for that node's size. Across nodes the data
 * crosses each node boundary once (a flat tree over all ranks crosses it
 * up to log2(ppn) more times when ranks are not placed in blocks).
 */
#include "hier.h"

int coll_bcast_hier(const coll_args_t *a, coll_sched_t *s)
{
    coll_hier_t h;
    coll_args_t sub;
    coll_bufmap_t m;
    int rc = coll_hier_init(&h, a, a->root);

    if (rc)
        return rc;
    if (h.is_head && h.nnodes > 1) {
        coll_hier_args(a, &sub, COLL_BCAST, h.node, h.nnodes, h.L->node[a->root],
                       a->count, 0);
        coll_bufmap_ident(&m);
        coll_hier_phase(s, COLL_BCAST, &sub, h.heads, 0, &m);
    }
    coll_hier_node_bcast(s, a, &h, 0, a->count);
    coll_hier_fini(&h);
    return sched_done(s);
}
