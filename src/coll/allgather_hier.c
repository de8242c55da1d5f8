/*
 * allgather_hier.c -- two-level allgather: each node's leader gathers its
 * members' blocks, the leaders allgather whole nodes' worth of blocks with
 * the flat algorithm chosen for nnodes ranks, and each leader broadcasts
 * the complete result on its node.
 *
 * The leaders exchange nodes as equal blocks of max_ppn rank blocks (a
 * flat allgather needs equal blocks; uneven nodes pad). When every node
 * holds the same number of consecutive ranks those node blocks are already
 * in rank order in RBUF, and everything happens there; otherwise the
 * leader packs its node into TMP (node k at k * max_ppn blocks, members in
 * local order), the leaders allgather TMP, and the leader unpacks into
 * rank order before the broadcast.
 *
 * On one node the flat algorithm over the node is used unchanged.
 */
#include "hier.h"

/* copy node k's packed blocks to their ranks' places in RBUF, one copy per
   run of consecutive ranks */
static void unpack(coll_sched_t *s, const coll_layout_t *L, int k, size_t node_off,
                   size_t blk)
{
    const int *mem = &L->members[L->start[k]];
    int c = coll_layout_ppn(L, k);
    for (int j = 0; j < c;) {
        int e = j + 1;
        while (e < c && mem[e] == mem[e - 1] + 1)
            e++;
        sched_copy(s, COLL_RBUF, (size_t)mem[j] * blk, COLL_TMP, node_off + (size_t)j * blk,
                   (size_t)(e - j) * blk);
        j = e;
    }
}

int coll_allgather_hier(const coll_args_t *a, coll_sched_t *s)
{
    coll_hier_t h;
    coll_args_t sub;
    coll_bufmap_t m;
    int rc, in;
    size_t in_off, blk = a->count * a->esize;

    if ((rc = coll_hier_init(&h, a, -1)))
        return rc;
    if (h.nnodes == 1 || !blk) {
        rc = coll_hier_one_node(s, COLL_ALLGATHER, a, &h);
        coll_hier_fini(&h);
        return rc;
    }
    const coll_layout_t *L = h.L;
    int direct = L->blocked && L->min_ppn == L->max_ppn;
    int pk = direct ? COLL_RBUF : COLL_TMP;     /* where node blocks are packed */
    size_t nodeb = (size_t)L->max_ppn * blk;
    size_t total = (size_t)h.nnodes * nodeb;
    size_t mine = (size_t)h.node * nodeb;

    coll_input(a, &in, &in_off);
    /* gather on the node: rank j's block goes to slot j of my node's area
       (in direct mode that is its own place in RBUF) */
    if (!h.is_head) {
        sched_send(s, in, in_off, blk, h.mates[h.head_local]);
    } else {
        for (int j = 0; j < h.nlocal; j++) {
            size_t at = mine + (size_t)j * blk;
            if (j == h.local)
                sched_copy(s, pk, at, in, in_off, blk);
            else
                sched_recv(s, pk, at, blk, h.mates[j]);
        }
        if (!direct)
            sched_need_tmp(s, total);
        coll_hier_args(a, &sub, COLL_ALLGATHER, h.node, h.nnodes, -1,
                       (size_t)L->max_ppn * a->count, 1);
        coll_bufmap_ident(&m);
        m.buf[COLL_RBUF] = pk;
        m.off[COLL_TMP] = direct ? 0 : total;
        coll_hier_phase(s, COLL_ALLGATHER, &sub, h.heads, 0, &m);
        if (!direct)
            for (int k = 0; k < h.nnodes; k++)
                unpack(s, L, k, (size_t)k * nodeb, blk);
    }
    sched_round(s);
    coll_hier_node_bcast(s, a, &h, 0, a->count * (size_t)a->size);
    coll_hier_fini(&h);
    return sched_done(s);
}
