/*
 * barrier_hier.c -- two-level barrier: members tell their node's leader
 * they arrived, the leaders run the flat barrier chosen for nnodes ranks,
 * and each leader releases its node. Across nodes only the leaders talk,
 * so the network sees a barrier over nnodes ranks instead of p.
 *
 * On one node the flat algorithm over the node is used unchanged.
 */
#include "hier.h"

int coll_barrier_hier(const coll_args_t *a, coll_sched_t *s)
{
    coll_hier_t h;
    coll_args_t sub;
    coll_bufmap_t m;
    int rc = coll_hier_init(&h, a, -1);

    if (rc)
        return rc;
    if (h.nnodes == 1) {
        rc = coll_hier_one_node(s, COLL_BARRIER, a, &h);
        coll_hier_fini(&h);
        return rc;
    }
    int head = h.mates[h.head_local];
    for (int j = 0; j < h.nlocal; j++)
        if (h.is_head && j != h.local)
            sched_recv(s, COLL_RBUF, 0, 0, h.mates[j]);
    if (!h.is_head)
        sched_send(s, COLL_RBUF, 0, 0, head);
    if (h.is_head) {
        coll_hier_args(a, &sub, COLL_BARRIER, h.node, h.nnodes, 0, 0, 0);
        coll_bufmap_ident(&m);
        coll_hier_phase(s, COLL_BARRIER, &sub, h.heads, 0, &m);
    }
    sched_round(s);
    for (int j = 0; j < h.nlocal; j++)
        if (h.is_head && j != h.local)
            sched_send(s, COLL_RBUF, 0, 0, h.mates[j]);
    if (!h.is_head)
        sched_recv(s, COLL_RBUF, 0, 0, head);
    coll_hier_fini(&h);
    return sched_done(s);
}
