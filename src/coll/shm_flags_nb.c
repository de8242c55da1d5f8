/*
 * shm_flags_nb.c -- small non-blocking barrier, bcast, reduce, allreduce,
 * gather, scatter, allgather and alltoall of a world on one node through
 * the node's flag slots, as the blocking ones go (shm_flags.c): a start
 * publishes a line, progress looks at the others' lines, no messages.
 *
 * Why: as schedules these are messages, a request per message and a
 * request for the call; through the drop-in at np 2 an 8-byte ibcast +
 * wait took 0.90-0.97 us where the blocking bcast takes 0.1-0.2 (and
 * plain Open MPI's ibcast 0.51-0.61).
 *
 * The calls go round their own pair of slots (NB_SET), counted by their
 * own sequence (cc->nb_seq): MPI has every rank start a communicator's
 * non-blocking collectives in one order, so the k-th is the same call on
 * every rank, whatever blocking calls (set 0) or persistent starts (their
 * own sets) come between. Unlike blocking calls they overlap and may be
 * waited for in any order, so a rank's calls are kept in issue order
 * (cc->nbf_q) and moved only in that order:
 *   - a rank publishes call k only once it has read everything of call
 *     k - 1 it needs (the queue's head goes first);
 *   - a rank writes call k over call k - 2's slot only once every rank has
 *     published call k - 1, which by the rule above means every rank is
 *     done reading call k - 2.
 * So a call that cannot publish yet stays queued, and any progress (a
 * wait or test on any request, vcoll's blocking calls, the drop-in's
 * hook) moves the queue on; it never waits inside a start.
 *
 * A line is a header (the kind and the block size, checked by every
 * reader: ranks that disagree about the call fail it with VC_ERR_ARG
 * instead of reading a wrong layout; the slot is another process's
 * memory) and the data: the block (allreduce, reduce, allgather, gather,
 * bcast's root), every block (alltoall), the others' blocks in rank order
 * (scatter's root), or nothing (barrier, the others of bcast and scatter).
 */
#include <stdlib.h>
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "comm_priv.h"
#include "shm_run.h"
#include "shm_slots.h"
#include "core/log.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"
#include "progress/progress.h"

/* a call's state, which its request keeps (r->coll) */
typedef struct coll_nbf {
    list_node_t fifo;           /* on cc->nbf_q, in issue order, until done */
    struct vc_request *r;       /* the request it completes */
    struct vc_comm *comm;
    int kind, root, inplace;
    int pub;                    /* my line is out */
    int from;                   /* the first rank whose line I have not seen */
    int err;
    uint64_t seq;               /* its number among the non-blocking calls */
    size_t count, blk;          /* elements and bytes of one block */
    vc_dtype_t dt;
    vc_op_t op;
    const void *in;
    void *out;
} coll_nbf_t;

#define NB_MAGIC 0x6e620000u    /* "nb" | kind */

typedef struct nb_hdr {
    uint32_t magic, pad;
    uint64_t blk;       /* bytes of one block */
} nb_hdr_t;

/* the data bytes of a line of kind from rank `who` (root: the call's);
   the kinds are those whose "flags" descriptor has this file's start
   (registry.c) */
static size_t line_bytes(int kind, int who, int root, int p, size_t blk)
{
    switch (kind) {
    case COLL_BARRIER: return 0;
    case COLL_BCAST: return who == root ? blk : 0;
    case COLL_SCATTER: return who == root ? (size_t)(p - 1) * blk : 0;
    case COLL_ALLTOALL: return (size_t)p * blk;
    default: return blk;    /* reduce, allreduce, gather, allgather */
    }
}

/* the root's p - 1 blocks of a scatter line: rank r's at r's place among
   the others */
static size_t scatter_at(int r, int root, size_t blk)
{
    return (size_t)(r < root ? r : r - 1) * blk;
}

static void publish(coll_nbf_t *f)
{
    const struct vc_comm *comm = f->comm;
    int me = comm->rank, p = comm->size;
    shm_slot_t *mine = coll_slot_of(coll_flags_slots(comm), NB_SET, me, f->seq);
    nb_hdr_t h = {NB_MAGIC | (uint32_t)f->kind, 0, f->blk};
    uint8_t *d = mine->data + sizeof h;
    memcpy(mine->data, &h, sizeof h);
    if (f->kind == COLL_SCATTER && me == f->root) {
        for (int r = 0; r < p; r++)
            if (r != me)
                core_copy(d + scatter_at(r, me, f->blk), (const uint8_t *)f->in + (size_t)r * f->blk,
                       f->blk);
    } else {
        size_t n = line_bytes(f->kind, me, f->root, p, f->blk);
        if (n)
            core_copy(d, f->in, n);
    }
    __atomic_store_n(&mine->seq, f->seq, __ATOMIC_RELEASE);
}

/* rank r's line of f's call */
static const shm_slot_t *slot(const coll_nbf_t *f, int r)
{
    return coll_slot_of(coll_flags_slots(f->comm), NB_SET, r, f->seq);
}

/* its data, its header already checked */
static const uint8_t *data(const coll_nbf_t *f, int r)
{
    return slot(f, r)->data + sizeof(nb_hdr_t);
}

/* its data, once its header (copied out first: the slot is another
   process's memory) says it is this call's; NULL for a rank that
   disagrees about the call */
static const uint8_t *line_of(const coll_nbf_t *f, int r)
{
    nb_hdr_t h;
    memcpy(&h, slot(f, r)->data, sizeof h);
    if (h.magic != (NB_MAGIC | (uint32_t)f->kind) || h.blk != f->blk) {
        LOG_WARN("coll: non-blocking %s: rank %d's line in the node's slots is not this call's "
                 "(kind %#x, %llu-byte blocks; mine: %zu-byte blocks)",
                 coll_kind_name(f->kind), r, h.magic, (unsigned long long)h.blk, f->blk);
        return NULL;
    }
    return data(f, r);
}

/* whose lines this rank reads: every rank's, the root's, or none */
enum { READ_NONE, READ_ROOT, READ_ALL };
static int reads(const coll_nbf_t *f)
{
    int root = f->comm->rank == f->root;
    switch (f->kind) {
    case COLL_BCAST:
    case COLL_SCATTER: return root ? READ_NONE : READ_ROOT;
    case COLL_REDUCE:
    case COLL_GATHER: return root ? READ_ALL : READ_NONE;
    default: return READ_ALL;
    }
}

/* read what this rank needs of f's call; 1 when done (f->err says how),
   0 when a line is still missing */
static int take(coll_nbf_t *f, coll_comm_t *cc)
{
    const struct vc_comm *comm = f->comm;
    int p = comm->size, me = comm->rank, how = reads(f);
    size_t blk = f->blk;
    uint8_t *out = f->out;
    if (how == READ_NONE)
        return 1;
    if (how == READ_ROOT) {
        if (__atomic_load_n(&slot(f, f->root)->seq, __ATOMIC_ACQUIRE) < f->seq)
            return 0;
        const uint8_t *d = line_of(f, f->root);
        if (!d)
            f->err = VC_ERR_ARG;
        else if (f->kind == COLL_BCAST)
            core_copy(out, d, blk);
        else
            core_copy(out, d + scatter_at(me, f->root, blk), blk);
        return 1;
    }
    if (!coll_flags_ready(comm, NB_SET, f->seq, &f->from))
        return 0;
    cc->nb_seen = f->seq;
    /* every header first: a call some rank disagrees about writes nothing */
    for (int r = 0; r < p; r++)
        if (!line_of(f, r)) {
            f->err = VC_ERR_ARG;
            return 1;
        }
    switch (f->kind) {
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
        coll_flags_combine(comm, NB_SET, f->seq, sizeof(nb_hdr_t), out, f->count, f->dt, f->op);
        break;
    case COLL_GATHER:
    case COLL_ALLGATHER:
        for (int r = 0; r < p; r++)
            if (blk && !(r == me && f->inplace))
                core_copy(out + (size_t)r * blk, data(f, r), blk);
        break;
    case COLL_ALLTOALL:
        for (int r = 0; r < p; r++)
            if (blk)
                core_copy(out + (size_t)r * blk, data(f, r) + (size_t)me * blk, blk);
        break;
    default: break;     /* barrier: the lines are the news */
    }
    return 1;
}

/* may call seq overwrite call seq - 2's slot: has every rank published
   seq - 1? (a look, never a wait) */
static int settled(coll_nbf_t *f, coll_comm_t *cc)
{
    if (f->seq <= 2 || cc->nb_seen >= f->seq - 1)
        return 1;
    int from = 0;
    if (!coll_flags_ready(f->comm, NB_SET, f->seq - 1, &from))
        return 0;
    cc->nb_seen = f->seq - 1;
    return 1;
}

static void finish(coll_nbf_t *f, int err)
{
    list_unlink(&f->fifo);
    f->r->status.error = err ? err : f->err;
    f->r->done = 1;
}

static void fail_all(coll_comm_t *cc, int err)
{
    LIST_FOR_EACH_SAFE(n, nx, &cc->nbf_q)
        finish(LIST_ENTRY(n, coll_nbf_t, fifo), err);
}

/* move the queue as far as the lines allow, never waiting (a dead rank
   fails every call still queued) */
static void pump(struct vc_comm *comm, coll_comm_t *cc)
{
    LIST_FOR_EACH_SAFE(n, nx, &cc->nbf_q) {
        coll_nbf_t *f = LIST_ENTRY(n, coll_nbf_t, fifo);
        if (!f->pub) {
            if (!settled(f, cc))
                break;
            publish(f);
            f->pub = 1;
        }
        if (!take(f, cc))
            break;
        finish(f, VC_SUCCESS);
    }
    if (!list_empty(&cc->nbf_q) && prog_comm_has_dead(p2p_prog(comm->p2p), comm))
        fail_all(cc, VC_ERR_PEER_FAILED);
}

/* ---- the request: progress pumps the queue, whichever call it is for;
   a call done by another's pump may still be on p2p's queue of started
   collectives, which its release (or its wait) leaves ---- */

static int nb_advance(struct vc_request *r)
{
    coll_nbf_t *f = r->coll;
    if (!r->done)
        pump(f->comm, f->comm->coll_priv);
    return VC_SUCCESS;
}

/* a blocking wait: the queue pumped between idle steps (the slots on
   every look, the whole progress loop now and then, as coll_flags_await) */
static int nb_wait(struct vc_request *r)
{
    coll_nbf_t *f = r->coll;
    struct vc_comm *comm = f->comm;
    unsigned idle = 0;
    double next_check = 0;
    for (;;) {
        pump(comm, comm->coll_priv);
        if (r->done)
            break;
        int rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check, -1);
        if (rc && !r->done)
            fail_all(comm->coll_priv, rc);
    }
    if (r->link.next)
        list_unlink(&r->link);
    return r->status.error;
}

static void nb_watch(struct vc_request *r)
{
    const coll_nbf_t *f = r->coll;
    if (r->done || !f->fifo.next)
        return;
    int on = reads(f) == READ_ROOT ? f->root : f->from;
    prog_peer_probe(p2p_prog(f->comm->p2p), comm_world_rank(f->comm, on));
}

static void nb_release(struct vc_request *r)
{
    coll_nbf_t *f = r->coll;
    if (!f)
        return;
    if (f->fifo.next)       /* (a failing job's: freed unfinished) */
        list_unlink(&f->fifo);
    if (r->link.next)
        list_unlink(&r->link);
    free(f);
    r->coll = NULL;
}

int coll_flags_nb_start(const coll_call_t *c, struct vc_request **req, int *rc)
{
    struct vc_comm *comm = c->comm;
    coll_comm_t *cc = c->cc;
    int p = comm->size, me = comm->rank;
    size_t blk = c->count * dtype_size(c->dt);
    *rc = VC_SUCCESS;
    /* the largest line any rank writes, header included, must fit: the
       same answer on every rank (kind, block and ranks agree) */
    size_t most = line_bytes(c->kind, c->root, c->root, p, blk);
    if (sizeof(nb_hdr_t) + most > sizeof(((shm_slot_t *)0)->data) ||
        (c->kind == COLL_ALLTOALL && most / (size_t)p != blk))
        return 0;
    coll_nbf_t *f = malloc(sizeof *f);
    struct vc_request *r = f ? p2p_req_alloc(comm->p2p, REQ_COLL) : NULL;
    if (!r) {
        free(f);
        *rc = VC_ERR_NOMEM;
        return 1;
    }
    *f = (coll_nbf_t){.r = r, .comm = comm, .kind = c->kind, .count = c->count, .blk = blk,
                      .dt = c->dt, .op = c->op, .out = c->rbuf, .in = c->sbuf,
                      .inplace = c->sbuf == VC_IN_PLACE};
    f->root = c->kind == COLL_BCAST || c->kind == COLL_REDUCE || c->kind == COLL_GATHER ||
                      c->kind == COLL_SCATTER
                  ? c->root : 0;
    switch (c->kind) {
    case COLL_BCAST: f->in = c->rbuf; break;
    case COLL_ALLTOALL:
    case COLL_ALLREDUCE:
    case COLL_REDUCE:
        if (f->inplace)
            f->in = c->rbuf;
        break;
    case COLL_ALLGATHER:
    case COLL_GATHER:
        if (f->inplace)
            f->in = (uint8_t *)c->rbuf + (size_t)me * blk;
        break;
    case COLL_SCATTER:
        /* in place: the root's block stays where it is in sbuf */
        f->inplace = me == c->root && c->rbuf == VC_IN_PLACE;
        if (me == c->root && !f->inplace && blk)
            core_copy(c->rbuf, (const uint8_t *)c->sbuf + (size_t)me * blk, blk);
        break;
    default: break;
    }
    r->coll = f;
    r->comm = comm;
    r->world_peer = -1;
    r->peer = VC_ANY_SOURCE;
    r->status.source = VC_ANY_SOURCE;
    r->status.tag = VC_ANY_TAG;
    r->advance = nb_advance;
    r->wait = nb_wait;
    r->watch = nb_watch;
    r->release = nb_release;
    r->done = 0;
    f->seq = ++cc->nb_seq;
    if (!cc->nbf_q.h.next)
        list_init(&cc->nbf_q);
    list_push_back(&cc->nbf_q, &f->fifo);
    cc->nb_calls++;
    pump(comm, cc);
    if (!r->done)
        p2p_coll_activate(comm->p2p, r);
    *req = r;
    return 1;
}

uint64_t coll_flags_nb_calls(struct vc_comm *comm)
{
    const coll_comm_t *cc = comm->coll_priv;
    return cc ? cc->nb_calls : 0;
}
