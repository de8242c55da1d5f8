/*
 * neighbor_shm.c -- the "shm" neighbourhood allgather and alltoall: on a
 * communicator whose members all share one node, a blocking call goes
 * through the communicator's segment (shm_seg.h) instead of a message per
 * edge.
 *
 * Why: with small blocks a neighbour exchange is all overhead, a matched
 * message per edge each way (a stencil on a 2-D grid: 4 sends and 4
 * receives, 8 queue operations and their matching). Here every member
 * writes its whole send buffer once into its own ring and each neighbour
 * copies its block out: one store of a counter to publish, one load per
 * source to see it. Blocks are copied twice (in and out), so past a few
 * tens of KiB, where a single-copy message wins, the rules send calls to
 * the schedule.
 *
 * A member's message for one call runs over as many chunks of its ring as
 * the largest member's needs (at most SEG_DEPTH, so the chunk counts stay
 * agreed and a writer only ever waits for reads of earlier calls):
 *   header   kind, the number of entries, the block size, then one entry
 *            per send edge in send order (graph.h): the destination and
 *            which block of the data goes there
 *   data     alltoall: the send buffer (outdeg blocks); allgather: the one
 *            block
 * A reader does not know its sources' destination lists (a general graph
 * gives each rank only its own), so it finds its blocks in the header: the
 * k-th entry naming me pairs with my k-th receive edge from that source,
 * MPI's pairing (the Cartesian swap is in the send order the writer used).
 * Edges to myself go through my own slot like any other.
 *
 * Every member writes the same number of chunks per call and every member
 * takes part in every call, so all know each member's chunk count (seq[])
 * as in the streams of shm_seg.c. A member may reuse a slot once every
 * other member has said it is done with the chunk written there SEG_DEPTH
 * chunks ago; members that are not my sources have nothing to read, so at
 * the end of a call I mark every member's chunks as done.
 *
 * The slot is another process's memory: the header fields are copied out
 * once, checked (kind, entries and blocks inside the slot, the block size
 * the call says) and only then used; a bad one fails the call on the
 * reader (VC_ERR_ARG: blocks of different sizes are an erroneous program)
 * after the reader has still marked every chunk done, so no member waits
 * on it.
 *
 * Fits: members on one node, and the largest send buffer of any member
 * with its header in SEG_DEPTH chunks (graph.h: maxout is agreed when the
 * communicator is made), so the answer is the same on every member.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/copy.h"
#include "comm_priv.h"
#include "graph.h"
#include "shm_run.h"
#include "shm_seg.h"
#include "core/log.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"
#include "progress/progress.h"

#define NBR_MAGIC 0x6e627200u   /* "nbr" | kind */
#define NO_RANK UINT32_MAX      /* an entry for a VC_PROC_NULL edge */

typedef struct nbr_hdr {
    uint32_t magic, n;      /* NBR_MAGIC | kind; entries */
    uint64_t blk;           /* bytes of one block */
} nbr_hdr_t;

typedef struct nbr_ent {
    uint32_t dst, idx;      /* destination (comm rank or NO_RANK); its block */
} nbr_ent_t;

static size_t hdr_bytes(size_t n)
{
    size_t b = sizeof(nbr_hdr_t) + n * sizeof(nbr_ent_t);
    return (b + SEG_LINE - 1) / SEG_LINE * SEG_LINE;
}

/* the chunks every member writes per call: what the largest writer needs
   (the same number on every member, so the chunk counts stay agreed);
   0 when that passes the ring (SEG_DEPTH chunks) or overflows */
static uint64_t chunks(int kind, const coll_graph_t *g, size_t blk, size_t C)
{
    size_t n = (size_t)g->maxout, data = kind == COLL_NEIGHBOR_ALLTOALL ? n * blk : blk;
    size_t room = (size_t)SEG_DEPTH * C, hdr = hdr_bytes(n);
    if ((n && kind == COLL_NEIGHBOR_ALLTOALL && data / n != blk) || hdr > room ||
        data > room - hdr)
        return 0;
    return (hdr + data + C - 1) / C;
}

/* a call's message is one run of bytes over chunks k, k+1, ... of member
   s's ring; copy len bytes at off of it from buf (in) or into buf */
static void span(struct coll_shmseg *g, int s, uint64_t k, size_t off, void *buf, size_t len,
                 int in)
{
    uint8_t *p = buf;
    while (len) {
        size_t o = off % g->chunk, n = g->chunk - o < len ? g->chunk - o : len;
        uint8_t *slot = seg_slot(g, s, k + off / g->chunk) + o;
        core_copy(in ? slot : p, in ? p : slot, n);
        p += n;
        off += n;
        len -= n;
    }
}

int coll_nbr_shm_fits(const coll_query_t *q)
{
    return q->ranks >= 2 && q->nodes == 1;
}

/* my nch chunks: header, entries in send order, data */
static void publish(struct coll_shmseg *g, int me, int kind, const coll_graph_t *gr,
                    const void *sbuf, size_t blk, uint64_t nch)
{
    uint64_t k = g->seq[me];
    nbr_hdr_t h = {NBR_MAGIC | (uint32_t)kind, (uint32_t)gr->outdeg, blk};
    int all = kind == COLL_NEIGHBOR_ALLTOALL;
    span(g, me, k, 0, &h, sizeof h, 1);
    for (int s = 0; s < gr->outdeg; s++) {
        int i = coll_graph_send_index(gr, s), d = gr->dst[i];
        nbr_ent_t x = {d == VC_PROC_NULL ? NO_RANK : (uint32_t)d, all ? (uint32_t)i : 0};
        span(g, me, k, sizeof h + (size_t)s * sizeof x, &x, sizeof x, 1);
    }
    size_t bytes = gr->outdeg ? all ? (size_t)gr->outdeg * blk : blk : 0;
    if (bytes)
        span(g, me, k, hdr_bytes((size_t)gr->outdeg), (void *)sbuf, bytes, 1);
    seg_store(seg_posted(g, me), k + nch);
}

/* copy member s's blocks for me into my receive edges from s (j: the
   first of them, in source order); 0 or VC_ERR_ARG for a message that
   does not say what this call needs */
static int take(struct coll_shmseg *g, int me, int s, int j, int kind, const coll_graph_t *gr,
                void *rbuf, size_t blk, uint64_t nch)
{
    uint64_t k = g->seq[s];
    size_t room = (size_t)nch * g->chunk;
    nbr_hdr_t h;
    span(g, s, k, 0, &h, sizeof h, 0);
    size_t n = h.n, data = hdr_bytes(n);
    int all = kind == COLL_NEIGHBOR_ALLTOALL;
    if (h.magic != (NBR_MAGIC | (uint32_t)kind) || h.blk != blk || n > room || data > room ||
        (all && n && blk > (room - data) / n) || blk > room - data) {
        LOG_WARN("coll: neighbour exchange: member %d's message does not match this call "
                 "(block %llu bytes, %zu entries; mine: %zu-byte blocks)", s,
                 (unsigned long long)h.blk, n, blk);
        return VC_ERR_ARG;
    }
    for (size_t x = 0; x < n && j < gr->indeg; x++) {
        nbr_ent_t e;
        span(g, s, k, sizeof h + x * sizeof e, &e, sizeof e, 0);
        if (e.dst != (uint32_t)me)
            continue;
        if (e.idx >= (all ? n : 1))
            return VC_ERR_ARG;
        if (blk)
            span(g, s, k, data + (size_t)e.idx * blk, (uint8_t *)rbuf + (size_t)j * blk, blk, 0);
        /* my next receive edge from s */
        while (++j < gr->indeg && gr->src[j] != s)
            ;
    }
    /* fewer entries for me than edges from s: the graph was agreed, so
       only a message rewritten under us gets here */
    return j < gr->indeg ? VC_ERR_ARG : VC_SUCCESS;
}

/* is j the first receive edge from its source (a real one)? */
static int first_from(const coll_graph_t *gr, int j)
{
    int s = gr->src[j];
    if (s == VC_PROC_NULL)
        return 0;
    for (int i = 0; i < j; i++)
        if (gr->src[i] == s)
            return 0;
    return 1;
}

static int exchange(struct coll_shmseg *g, struct vc_comm *comm, int kind,
                    const coll_graph_t *gr, const void *sbuf, void *rbuf, size_t blk,
                    uint64_t nch)
{
    int me = comm->rank, p = g->p, rc = VC_SUCCESS, bad = VC_SUCCESS;
    unsigned idle = 0;
    double next_check = 0;
    uint8_t doneb[64], *done = gr->indeg <= 64 ? doneb : calloc((size_t)gr->indeg, 1);
    if (!done)
        return VC_ERR_NOMEM;
    /* my slots are free once every member has read what I wrote there
       before: earlier calls only (nch <= SEG_DEPTH), so no member waits
       on this call's reads to write */
    while (!coll_seg_slot_free(g, me, g->seq[me] + nch - 1))
        if ((rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check, -1)))
            goto out;
    publish(g, me, kind, gr, sbuf, blk, nch);
    /* one look per distinct source: its first edge stands for all of them */
    int left = 0;
    for (int j = 0; j < gr->indeg; j++) {
        done[j] = !first_from(gr, j);
        left += !done[j];
    }
    idle = 0;
    while (left) {
        int moved = 0, wait_for = -1;
        for (int j = 0; j < gr->indeg; j++) {
            int s = gr->src[j];
            if (done[j])
                continue;
            if (seg_load(seg_posted(g, s)) < g->seq[s] + nch) {
                wait_for = s;
                continue;
            }
            int r = take(g, me, s, j, kind, gr, rbuf, blk, nch);
            if (r && !bad)
                bad = r;
            done[j] = 1;
            left--;
            moved = 1;
        }
        if (moved) {
            idle = 0;
            continue;
        }
        if ((rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check,
                                 wait_for < 0 ? -1 : comm_world_rank(comm, wait_for))))
            goto out;
    }
    /* done with this call's chunk of every member, read or not */
    for (int s = 0; s < p; s++) {
        if (s != me)
            seg_store(seg_done(g, me, s), g->seq[s] + nch);
        g->seq[s] += nch;
    }
out:
    if (done != doneb)
        free(done);
    return rc ? rc : bad;
}

int coll_nbr_shm_run(const coll_call_t *c, int *rc)
{
    coll_comm_t *cc = c->cc;
    const coll_graph_t *gr = cc->graph;
    struct coll_shmseg *g;
    size_t blk = c->count * dtype_size(c->dt);

    *rc = VC_SUCCESS;
    /* no graph: the schedule says so (VC_ERR_COMM), on every member */
    if (!gr)
        return 0;
    if ((*rc = coll_shmseg_of(c->comm, &g)))
        return 1;
    uint64_t nch = g ? chunks(c->kind, gr, blk, g->chunk) : 0;
    if (!nch)
        return 0;   /* every member alike: the segment was agreed, maxout too */
    *rc = exchange(g, c->comm, c->kind, gr, c->sbuf, c->rbuf, blk, nch);
    cc->seg_calls[c->kind]++;
    return 1;
}
