/*
 * shm_node.c -- the "shm" algorithms: collectives whose intra-node phases
 * go through shared segments instead of messages.
 *
 * On a communicator that lives on one node, the whole call runs in its
 * segment (shm_seg.c, shm_reduce.c). Over several nodes it is the
 * two-level form of hier.c with the node phases moved into memory:
 *   barrier    node flag barrier, leaders' barrier, node flag barrier
 *   bcast      leaders' bcast from the root, node segment bcast
 *   reduce     node segment reduce to the acting leader, leaders' reduce
 *   allreduce  node segment reduce to the leader, leaders' allreduce,
 *              node segment bcast
 * (allgather over several nodes keeps hier's schedule). The node phases
 * run on a communicator of my node's members, made once (collectively over
 * comm) from the layout; the leaders' phase is the flat schedule hier
 * would build for the leaders, run on comm itself. A node whose segment
 * cannot be had (VCOLL_SHM_COLL_MAX reached, no shm transport) runs its
 * node phases as ordinary collectives on that node communicator: the
 * other nodes never see the difference.
 *
 * Only blocking calls come here (registry.c: it has no schedule). A
 * one-node communicator without a segment declines, and selection picks
 * again among the schedules, on every member alike.
 *
 * Non-commutative ops: a segment reduction combines in rank order, and
 * node-first order is rank order when every node holds consecutive ranks
 * (L->blocked), the leaders' phase then being a rank-ordered algorithm
 * (flat selection with noncomm). Otherwise coll_shm_fits says no.
 */
#include <stdlib.h>
#include <string.h>
#include "core/copy.h"
#include "comm_priv.h"
#include "hier.h"
#include "shm_run.h"
#include "core/ops.h"
#include "core/log.h"
#include "core/ops.h"
#include "dtype/dtype.h"

/* my node's communicator: comm itself on one node */
static int node_of(struct vc_comm *comm, coll_comm_t *cc, struct vc_comm **out)
{
    int rc = VC_SUCCESS;
    if (!cc->node_state) {
        cc->node_state = -1;
        if (cc->layout.nnodes == 1)
            cc->node = comm;
        else
            rc = coll_comm_node(comm, &cc->layout, &cc->node);
        if (!rc)
            cc->node_state = 1;
    }
    *out = cc->node;
    return cc->node ? rc : rc ? rc : VC_ERR_INTERNAL;
}

/* one call's facts */
typedef struct shm_call {
    int kind, root;
    struct vc_comm *comm, *node;
    struct coll_shmseg *seg;    /* the node's, or NULL: messages on node */
    const void *in;             /* my input (reduce kinds) */
    void *rbuf;
    size_t count;
    coll_redop_t o;
    coll_hier_t h;
    coll_args_t a;
} shm_call_t;

/* ---- node phases: the segment, or the node communicator's messages ---- */

static int node_barrier(shm_call_t *c)
{
    if (c->h.nlocal == 1)
        return VC_SUCCESS;
    if (c->seg)
        return coll_shm_seg_barrier(c->seg, c->h.local);
    return coll_run_msgs(COLL_BARRIER, c->node, NULL, NULL, 0, VC_BYTE, VC_SUM, 0);
}

static int node_bcast(shm_call_t *c, void *buf, int root)
{
    if (c->h.nlocal == 1 || !c->count)
        return VC_SUCCESS;
    if (c->seg)
        return coll_shm_bcast(c->seg, buf, c->count * c->o.esize, root, c->h.local);
    return coll_run_msgs(COLL_BCAST, c->node, NULL, buf, c->count, c->o.dt, VC_SUM, root);
}

/* reduce my node's inputs into out at local member root (-1: everyone) */
static int node_reduce(shm_call_t *c, void *out, int root)
{
    int me = c->h.local, mine = root < 0 || root == me;
    if (c->h.nlocal == 1 || !c->count) {
        if (mine && out && out != c->in && c->count)
            core_copy(out, c->in, c->count * c->o.esize);
        return VC_SUCCESS;
    }
    if (c->seg)
        return coll_shm_reduce(c->seg, c->in, mine ? out : NULL, c->count, &c->o, me, root);
    const void *s = mine && c->in == out ? VC_IN_PLACE : c->in;
    if (root < 0)
        return coll_run_msgs(COLL_ALLREDUCE, c->node, s, out, c->count, c->o.dt, c->o.op, 0);
    return coll_run_msgs(COLL_REDUCE, c->node, s, mine ? out : NULL, c->count, c->o.dt, c->o.op,
                    root);
}

/* ---- the leaders' phase: hier's flat schedule over the acting leaders ---- */

static int leaders(shm_call_t *c, int tag, const void *sbuf, void *rbuf)
{
    coll_args_t sub;
    coll_bufmap_t m;
    coll_sched_t s;
    int sroot = c->root >= 0 ? c->h.L->node[c->root] : 0;
    void *tmp = NULL;

    if (!c->h.is_head || c->h.nnodes == 1)
        return VC_SUCCESS;
    int reduces = c->kind == COLL_REDUCE || c->kind == COLL_ALLREDUCE;
    coll_hier_args(&c->a, &sub, c->kind, c->h.node, c->h.nnodes, sroot, c->count,
                   reduces && !sbuf);
    coll_bufmap_ident(&m);
    sched_init(&s, &sub);
    coll_hier_phase(&s, c->kind, &sub, c->h.heads, 0, &m);
    int rc = sched_done(&s);
    if (!rc && s.tmp_bytes && !(tmp = malloc(s.tmp_bytes)))
        rc = VC_ERR_NOMEM;
    if (!rc) {
        void *base[COLL_NBUF] = {(void *)sbuf, rbuf, tmp};
        rc = coll_exec_blocking(&s, base, c->comm, tag);
    }
    free(tmp);
    sched_free(&s);
    return rc;
}

/* ---- the collectives ---- */

static int run_barrier(shm_call_t *c, int tag)
{
    int rc = node_barrier(c);
    if (!rc)
        rc = leaders(c, tag, NULL, NULL);
    if (!rc && c->h.nnodes > 1)
        rc = node_barrier(c);
    return rc;
}

static int run_bcast(shm_call_t *c, int tag)
{
    int rc = leaders(c, tag, NULL, c->rbuf);
    return rc ? rc : node_bcast(c, c->rbuf, c->h.head_local);
}

static int run_reduce(shm_call_t *c, int tag)
{
    int me_root = c->a.rank == c->root, rc;
    size_t n = c->count * c->o.esize;
    void *part = NULL;

    if (c->h.nnodes == 1)
        return node_reduce(c, c->rbuf, c->h.head_local);
    /* a leader keeps its node's result for the leaders' phase: the root
       in its own buffer, another leader in scratch */
    if (me_root)
        part = c->rbuf;
    else if (c->h.is_head && c->h.nlocal > 1 && n && !(part = malloc(n)))
        return VC_ERR_NOMEM;    /* like a schedule whose scratch cannot be had */
    rc = node_reduce(c, part, c->h.head_local);
    if (!rc && c->h.is_head) {
        const void *src = me_root ? NULL : part ? part : c->in;
        rc = leaders(c, tag, src, me_root ? c->rbuf : NULL);
    }
    if (!me_root)
        free(part);
    return rc;
}

static int run_allreduce(shm_call_t *c, int tag)
{
    if (c->h.nnodes == 1)
        return node_reduce(c, c->rbuf, -1);
    int rc = node_reduce(c, c->rbuf, c->h.head_local);
    if (!rc)
        rc = leaders(c, tag, NULL, c->rbuf);
    return rc ? rc : node_bcast(c, c->rbuf, c->h.head_local);
}

/* What "shm" needs of a call (the rules decide when it is worth it): two
   members; across nodes, allgather(v) and alltoall(v) stay with messages, and a
   non-commutative op only where nodes hold consecutive ranks (node-first
   order is then rank order); a reduction window holds at least one whole
   element only up to 8 KiB elements (two chunks of the smallest
   segment): larger opaque ones (vc_dtype_opaque) reduce by messages. */
int coll_shm_fits(const coll_query_t *q)
{
    if (q->ranks < 2)
        return 0;
    if (q->nodes > 1 && (q->kind == COLL_ALLGATHER || q->kind == COLL_ALLGATHERV ||
                         q->kind == COLL_ALLTOALL || q->kind == COLL_ALLTOALLV ||
                         (q->noncomm && !q->blocked)))
        return 0;
    /* alltoallv's stream header (2p + 1 words) fits the smallest chunk */
    if (q->kind == COLL_ALLTOALLV && q->ranks > 255)
        return 0;
    return !((q->kind == COLL_REDUCE || q->kind == COLL_ALLREDUCE) && q->esize > 8192);
}

static void log_choice(shm_call_t *c, coll_comm_t *cc)
{
    if (cc->seg_logged[c->kind] == c->count + 1)
        return;
    cc->seg_logged[c->kind] = c->count + 1;
    LOG_DEBUG("coll: %s on comm ctx %u (size %d): shm (%d node%s, node phases %s), "
              "count %zu", coll_kind_name(c->kind), c->comm->ctx, c->comm->size,
              c->h.nnodes, c->h.nnodes > 1 ? "s" : "",
              c->seg ? "in a segment" : "by messages", c->count);
}

int coll_shm_run(const coll_call_t *call, int *rc)
{
    int kind = call->kind, root = call->root;
    struct vc_comm *comm = call->comm;
    const void *sbuf = call->sbuf;
    void *rbuf = call->rbuf;
    size_t count = call->count;
    coll_comm_t *cc = coll_priv(comm);
    int commutative = 1;
    shm_call_t c = {.kind = kind, .root = kind == COLL_ALLREDUCE || kind == COLL_BARRIER
                                              ? -1 : root,
                    .comm = comm, .rbuf = rbuf, .count = count};

    *rc = VC_SUCCESS;
    if (!cc)
        return (*rc = VC_ERR_NOMEM), 1;
    c.o.dt = call->dt;
    c.o.op = call->op;
    c.o.esize = kind == COLL_BARRIER ? 1 : dtype_size(call->dt);
    if (ops_is_user(call->op) && (*rc = ops_lookup(comm->coll->ops, call->op, &c.o.ufn, &commutative)))
        return 1;
    /* collective over comm, the same on every member */
    if ((*rc = node_of(comm, cc, &c.node)) || (*rc = coll_shmseg_of(c.node, &c.seg)))
        return 1;
    if (cc->layout.nnodes == 1 && !c.seg)
        return 0;   /* the schedule, on every member alike (agreed in create) */
    if (kind == COLL_ALLTOALLV && c.seg && coll_shm_alltoallv_declines(c.seg))
        return 0;   /* the last one was big: messages, on every member alike */
    coll_args_set(&c.a, kind, comm->rank, comm->size, c.root, count, call->dt, call->op, 0);
    c.a.ufn = c.o.ufn;
    c.a.noncomm = !commutative;
    c.a.layout = &cc->layout;
    if ((*rc = coll_hier_init(&c.h, &c.a, c.root)))
        return 1;
    c.in = sbuf == VC_IN_PLACE || !sbuf ? rbuf : sbuf;
    log_choice(&c, cc);
    int tag = coll_next_tag(comm);
    switch (kind) {
    case COLL_BARRIER: *rc = run_barrier(&c, tag); break;
    case COLL_BCAST: *rc = run_bcast(&c, tag); break;
    case COLL_REDUCE: *rc = run_reduce(&c, tag); break;
    case COLL_ALLREDUCE: *rc = run_allreduce(&c, tag); break;
    case COLL_ALLGATHER:
        *rc = coll_shm_allgather(c.seg, sbuf, rbuf, count * c.o.esize, comm->rank);
        break;
    case COLL_ALLTOALL:
        *rc = coll_shm_alltoall(c.seg, sbuf, rbuf, count * c.o.esize, comm->rank);
        break;
    case COLL_ALLTOALLV:
        *rc = call->v ? coll_shm_alltoallv(c.seg, comm, tag, sbuf, rbuf, call->v->counts,
                                           call->v->displs, call->v->rcounts,
                                           call->v->rdispls, c.o.esize)
                      : VC_ERR_INTERNAL;
        break;
    case COLL_ALLGATHERV:
        *rc = call->v ? coll_shm_allgatherv(c.seg, sbuf, rbuf, call->v->counts,
                                            call->v->displs, c.o.esize, comm->rank)
                      : VC_ERR_INTERNAL;
        break;
    default: *rc = VC_ERR_INTERNAL; break;
    }
    coll_hier_fini(&c.h);
    if (c.seg)
        cc->seg_calls[kind]++;
    return 1;
}

uint64_t coll_shm_calls(struct vc_comm *comm, int kind)
{
    coll_comm_t *cc = comm->coll_priv;
    return cc && kind >= 0 && kind < COLL_NKINDS ? cc->seg_calls[kind] : 0;
}

void coll_shm_count(struct vc_comm *comm, int kind)
{
    coll_comm_t *cc = comm->coll_priv;
    if (cc && kind >= 0 && kind < COLL_NKINDS)
        cc->seg_calls[kind]++;
}
