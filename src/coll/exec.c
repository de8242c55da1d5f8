/*
 * exec.c -- runs a schedule over p2p (round semantics in sched.h).
 *
 * Every message of a collective travels on the communicator's collective
 * context (ctx_off = 1) with one tag per collective call, taken from
 * comm->coll_seq, so two collectives in flight on one communicator (e.g. an
 * ibarrier and a later allreduce) never match each other's messages, and
 * user point-to-point traffic can never match them either.
 *
 * Blocking: post a round, p2p_waitall, run local steps, next round.
 * Non-blocking: the same state machine, driven by the request's advance()
 * hook from the progress engine (vc_test / vc_wait / any blocking call).
 *
 * Persistent: the same executor state, built once at init around a kept
 * schedule and scratch buffer, as an inactive request; every start resets
 * the round state and posts round 0 (no malloc, no building). Its tag was
 * taken at init from the persistent half of the tag space (coll.h).
 * A small persistent barrier or allreduce of a world on one node runs
 * instead through a slot set of the node's flag slots reserved for it
 * (shm_flags.c): a start publishes, progress polls, no messages at all.
 * A larger persistent allreduce that a blocking call would run through the
 * communicator's segment gets a segment of its own at init (one node
 * only): a start steps the segment reduction (shm_reduce.c) from progress,
 * never waiting inside it, since another rank may be starting some other
 * request first. Its own segment, because the counters of a shared one
 * assume every member runs the same calls in the same order.
 */
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "shm_run.h"
#include "p2p/p2p.h"
#include "progress/progress.h"
#include "dtype/dtype.h"

#define EXEC_STACK_REQS 16

typedef struct coll_exec {
    coll_sched_t s;                 /* owned */
    unsigned char *base[COLL_NBUF];
    void *tmp;                      /* owned scratch */
    struct vc_comm *comm;
    int tag;
    int round;
    int nreq;
    int err;
    int busy;                       /* re-entrancy guard for advance() */
    list_node_t kept;               /* persistent: on coll_state_t.kept */
    struct vc_request *req_handle;  /* persistent: the request it serves */
    struct vc_request **req;        /* s.max_comm entries */
    struct vc_request *req_inline[EXEC_STACK_REQS];
    /* a persistent barrier or allreduce through the node's flag slots
       (shm_flags.c) instead of a schedule: fslot > 0 is its slot set */
    int fslot, fkind, fpub;
    int fnext;                      /* first rank not yet seen this start */
    uint64_t fseq;                  /* starts so far */
    size_t fcount;
    vc_dtype_t fdt;
    vc_op_t fop;
    const void *fin;
    /* a persistent allreduce through a segment of its own (owned) */
    struct coll_shmseg *seg;
    coll_redop_t sop;
    coll_shm_red_t sred;
} coll_exec_t;

/* Post the comm steps of round `round`: receives first so eager data finds
   its buffer, then sends. On a posting error the already posted requests
   still have to complete; the error is returned and nothing more posted. */
static int post_round(const coll_sched_t *s, unsigned char *const *base, int round,
                      struct vc_comm *comm, int tag, struct vc_request **req,
                      int *nreq, int blocking)
{
    int b = s->round[round], e = s->round[round + 1], n = 0, rc = VC_SUCCESS;
    for (int i = b; i < e && !rc; i++) {
        const coll_step_t *st = &s->steps[i];
        if (st->kind == STEP_RECV)
            rc = p2p_irecv(base[st->dbuf] + st->doff, st->bytes, st->peer, tag, comm, 1,
                           s->folds ? P2P_RECV_HOT : 0, &req[n++]);
    }
    for (int i = b; i < e && !rc; i++) {
        const coll_step_t *st = &s->steps[i];
        if (st->kind != STEP_SEND)
            continue;
        /* a blocking collective's small sends usually fit in the transport
           right away: no request to allocate, wait on and free */
        if (blocking && p2p_send_fast(base[st->abuf] + st->aoff, st->bytes, st->peer, tag,
                                      comm, 1,
                                      st->flags & STEP_F_FANIN ? P2P_SEND_EAGER : 0) ==
                                VC_SUCCESS)
            continue;
        rc = p2p_isend(base[st->abuf] + st->aoff, st->bytes, st->peer, tag, comm, 1, &req[n++]);
    }
    if (rc)
        n--;            /* the failed call produced no request */
    *nreq = n;
    return rc;
}

/* Errors of finished requests; a receive must bring exactly what the
   schedule expects (anything else means the ranks disagree on the call). */
static int reap(struct vc_request **req, int n)
{
    int err = VC_SUCCESS;
    for (int i = 0; i < n; i++) {
        struct vc_request *r = req[i];
        int e = r->status.error;
        if (!e && r->kind == REQ_RECV && r->status.bytes != r->bytes)
            e = VC_ERR_TRUNCATE;
        if (e && !err)
            err = e;
        req_free(r);
    }
    return err;
}

static void local_round(const coll_sched_t *s, unsigned char *const *base, int round)
{
    int b = s->round[round], e = s->round[round + 1];
    for (int i = b; i < e; i++)
        sched_local_step(s, &s->steps[i], base);
}

int coll_exec_blocking(const coll_sched_t *s, void *const base_in[COLL_NBUF],
                       struct vc_comm *comm, int tag)
{
    struct vc_request *stack_req[EXEC_STACK_REQS], **req = stack_req;
    unsigned char *base[COLL_NBUF];
    int err = VC_SUCCESS;

    for (int i = 0; i < COLL_NBUF; i++)
        base[i] = base_in[i];
    if (s->max_comm > EXEC_STACK_REQS) {
        req = malloc((size_t)s->max_comm * sizeof *req);
        if (!req)
            return VC_ERR_NOMEM;
    }
    for (int rd = 0; rd < s->nrounds; rd++) {
        int n = 0;
        err = post_round(s, base, rd, comm, tag, req, &n, 1);
        if (n) {
            p2p_waitall(comm->p2p, n, req);
            int e = reap(req, n);
            if (!err)
                err = e;
        }
        if (err)
            break;
        local_round(s, base, rd);
    }
    if (req != stack_req)
        free(req);
    return err;
}

/* A shared-memory runner's messages beside its own work: round 0 of s
   posted, not waited for (n requests in req, room for s->max_comm), then
   finished and checked as a blocking schedule's are. */
int coll_exec_post(const coll_sched_t *s, void *const base_in[COLL_NBUF], struct vc_comm *comm,
                   int tag, struct vc_request **req, int *n)
{
    unsigned char *base[COLL_NBUF];
    for (int i = 0; i < COLL_NBUF; i++)
        base[i] = base_in[i];
    *n = 0;
    return s->nrounds ? post_round(s, base, 0, comm, tag, req, n, 0) : VC_SUCCESS;
}

int coll_exec_reap(struct vc_comm *comm, struct vc_request **req, int n)
{
    if (!n)
        return VC_SUCCESS;
    p2p_waitall(comm->p2p, n, req);
    return reap(req, n);
}

/* ---- non-blocking and persistent ---- */

/* Sub-requests a start left behind (it failed before they finished: a
   peer died): out of the p2p queues and back to the pool, so the next
   start, or the release, begins from none. */
static void exec_drop(coll_exec_t *x)
{
    for (int i = 0; i < x->nreq; i++) {
        if (!x->req[i]->done)
            p2p_cancel(x->comm->p2p, x->req[i]);
        req_free(x->req[i]);
    }
    x->nreq = 0;
}

static void exec_release(struct vc_request *r)
{
    coll_exec_t *x = r->coll;
    if (!x)
        return;
    /* only reached early when the job is failing (peer died), or a
       persistent request's last start failed: take the unfinished
       sub-requests out of the p2p queues before freeing them */
    exec_drop(x);
    if (r->persist)
        list_unlink(&x->kept);
    if (x->fslot)
        coll_flags_pset_give(x->comm, x->fslot, x->fseq);
    if (x->req != x->req_inline)
        free(x->req);
    coll_shmseg_free(x->seg);
    sched_free(&x->s);
    free(x->tmp);
    free(x);
    r->coll = NULL;
}

/* the progress engine asks a waiting collective whom it waits on */
static void exec_watch(struct vc_request *r)
{
    coll_exec_t *x = r->coll;
    if (x && x->fslot && !coll_flags_ready(x->comm, x->fslot, x->fseq, &x->fnext))
        prog_peer_probe(p2p_prog(x->comm->p2p), comm_world_rank(x->comm, x->fnext));
    int lag = x && x->seg && !r->done ? coll_shm_red_lagging(&x->sred) : -1;
    if (lag >= 0)
        prog_peer_probe(p2p_prog(x->comm->p2p), comm_world_rank(x->comm, lag));
    for (int i = 0; x && i < x->nreq; i++)
        if (!x->req[i]->done)
            prog_peer_probe(p2p_prog(x->comm->p2p), x->req[i]->world_peer);
}

/* a start through the flag slots: publish once, then done when every
   rank's contribution is there (a dead rank fails it) */
static void flags_advance(struct vc_request *r, coll_exec_t *x)
{
    if (!x->fpub) {
        coll_flags_publish(x->comm, x->fslot, x->fin,
                           x->fkind == COLL_BARRIER ? 0 : x->fcount * dtype_size(x->fdt),
                           x->fseq);
        x->fpub = 1;
    }
    if (!coll_flags_ready(x->comm, x->fslot, x->fseq, &x->fnext)) {
        if (!prog_comm_has_dead(p2p_prog(x->comm->p2p), x->comm))
            return;
        x->err = VC_ERR_PEER_FAILED;
    } else if (x->fkind == COLL_ALLREDUCE) {
        coll_flags_combine(x->comm, x->fslot, x->fseq, 0, x->base[COLL_RBUF], x->fcount, x->fdt,
                           x->fop);
    }
    r->status.error = x->err;
    r->done = 1;
}

/* A blocking wait on a start through the flag slots runs the blocking
   call's wait (coll_flags_await: the slots on every look, the whole
   progress loop only now and then). p2p_wait's loop would poll every
   transport and poller between two looks at the slots: np 4 on 2 cores,
   8 B, a start cost 1.01-1.13x the blocking call. The occasional progress
   loop (p2p_poll advances every started collective) or another thread
   may finish it meanwhile: r->done is read after every step. */
static int flags_wait(struct vc_request *r)
{
    coll_exec_t *x = r->coll;
    if (!r->done)
        flags_advance(r, x);        /* publishes; done if everyone has */
    if (!r->done) {
        int rc = coll_flags_await(x->comm, x->fslot, x->fseq);
        if (!r->done && rc) {
            r->status.error = rc;
            r->done = 1;
        } else if (!r->done) {
            flags_advance(r, x);    /* everyone's is there: combine */
        }
    }
    if (r->link.next)       /* still on p2p's queue of started collectives */
        list_unlink(&r->link);
    return r->status.error;
}

/* a start through its segment: begin once, then step; done when the
   reduction is (a dead member fails it). What the step did, for waits. */
static int seg_advance(struct vc_request *r, coll_exec_t *x)
{
    if (!x->fpub) {
        coll_shm_red_begin(&x->sred, x->seg, x->fin, x->base[COLL_RBUF], x->fcount, &x->sop,
                           x->comm->rank);
        x->fpub = 1;
    }
    int st = coll_shm_red_step(&x->sred);
    if (st != COLL_RED_DONE) {
        if (!prog_comm_has_dead(p2p_prog(x->comm->p2p), x->comm))
            return st;
        x->err = VC_ERR_PEER_FAILED;
    } else {
        coll_shm_count(x->comm, COLL_ALLREDUCE);
    }
    r->status.error = x->err;
    r->done = 1;
    return COLL_RED_DONE;
}

/* A blocking wait on it steps it between idle steps (as the blocking
   segment call does), not through p2p_wait's whole loop per look. */
static int seg_wait(struct vc_request *r)
{
    coll_exec_t *x = r->coll;
    unsigned idle = 0;
    double next_check = 0;
    while (!r->done) {
        if (seg_advance(r, x) != COLL_RED_STUCK) {
            idle = 0;
            continue;
        }
        int lag = coll_shm_red_lagging(&x->sred);
        int rc = prog_wait_step(p2p_prog(x->comm->p2p), x->comm, &idle, &next_check,
                                lag >= 0 ? comm_world_rank(x->comm, lag) : -1);
        if (rc && !r->done) {
            r->status.error = rc;
            r->done = 1;
        }
    }
    if (r->link.next)       /* still on p2p's queue of started collectives */
        list_unlink(&r->link);
    return r->status.error;
}

static int exec_advance(struct vc_request *r)
{
    coll_exec_t *x = r->coll;
    if (r->done || x->busy)
        return VC_SUCCESS;
    if (x->fslot) {
        flags_advance(r, x);
        return VC_SUCCESS;
    }
    if (x->seg) {
        seg_advance(r, x);
        return VC_SUCCESS;
    }
    x->busy = 1;
    for (;;) {
        if (x->nreq) {
            for (int i = 0; i < x->nreq; i++)
                if (!x->req[i]->done && !p2p_fail_if_dead(x->comm->p2p, x->req[i]))
                    goto out;
            int e = reap(x->req, x->nreq);
            x->nreq = 0;
            if (e && !x->err)
                x->err = e;
            if (x->err)
                break;
            local_round(&x->s, x->base, x->round);
            x->round++;
        }
        if (x->round >= x->s.nrounds || x->err)
            break;
        int e = post_round(&x->s, x->base, x->round, x->comm, x->tag, x->req, &x->nreq, 0);
        if (e) {
            x->err = e;
            if (x->nreq)
                goto out;   /* let posted ones finish first */
            break;
        }
        if (!x->nreq) {     /* purely local round */
            local_round(&x->s, x->base, x->round);
            x->round++;
        }
    }
    r->status.error = x->err;
    r->done = 1;
out:
    x->busy = 0;
    return VC_SUCCESS;
}

/* The executor's state around s (moved) and tmp (owned), as a request
   that has not started: NULL on no memory (s and tmp freed). */
static struct vc_request *exec_new(coll_sched_t *s, void *sbuf, void *rbuf, void *tmp,
                                   struct vc_comm *comm, int tag)
{
    coll_exec_t *x = calloc(1, sizeof *x);
    struct vc_request *r = x ? p2p_req_alloc(comm->p2p, REQ_COLL) : NULL;
    if (!r) {
        free(x);
        sched_free(s);
        free(tmp);
        return NULL;
    }
    x->s = *s;
    memset(s, 0, sizeof *s);
    x->base[COLL_SBUF] = sbuf;
    x->base[COLL_RBUF] = rbuf;
    x->base[COLL_TMP] = tmp;
    x->tmp = tmp;
    x->comm = comm;
    x->tag = tag;
    x->req = x->req_inline;
    r->coll = x;
    r->release = exec_release;
    if (x->s.max_comm > EXEC_STACK_REQS) {
        x->req = malloc((size_t)x->s.max_comm * sizeof *x->req);
        if (!x->req) {
            x->req = x->req_inline;
            req_free(r);
            return NULL;
        }
    }
    r->comm = comm;
    r->world_peer = -1;
    r->peer = VC_ANY_SOURCE;
    r->advance = exec_advance;
    r->watch = exec_watch;
    return r;
}

/* From round 0: what a non-blocking call does once and a persistent one
   on every start. Only the round state is reset; nothing is allocated. */
static void exec_go(struct vc_request *r)
{
    coll_exec_t *x = r->coll;
    x->round = 0;
    x->err = VC_SUCCESS;
    x->fseq++;
    x->fpub = 0;
    x->fnext = 0;
    r->status.source = VC_ANY_SOURCE;
    r->status.tag = VC_ANY_TAG;
    r->status.error = VC_SUCCESS;
    r->status.bytes = 0;
    r->done = 0;
    /* start the first round now so the peers can make progress even if
       this rank does not call into the library for a while */
    exec_advance(r);
    if (!r->done)
        p2p_coll_activate(x->comm->p2p, r);
}

int coll_exec_start(coll_sched_t *s, void *sbuf, void *rbuf, void *tmp,
                    struct vc_comm *comm, int tag, struct vc_request **out)
{
    struct vc_request *r = exec_new(s, sbuf, rbuf, tmp, comm, tag);
    if (!r)
        return VC_ERR_NOMEM;
    exec_go(r);
    *out = r;
    return VC_SUCCESS;
}

int coll_exec_init(coll_sched_t *s, void *sbuf, void *rbuf, void *tmp,
                   struct vc_comm *comm, int tag, struct vc_request **out)
{
    struct vc_request *r = exec_new(s, sbuf, rbuf, tmp, comm, tag);
    if (!r)
        return VC_ERR_NOMEM;
    coll_exec_t *x = r->coll;
    coll_state_t *cs = comm->coll;
    if (!cs->kept.h.next)
        list_init(&cs->kept);
    list_push_back(&cs->kept, &x->kept);
    x->req_handle = r;
    r->persist = PERSIST_INACTIVE;
    r->done = 1;            /* nothing in flight: waits return at once */
    *out = r;
    return VC_SUCCESS;
}

/* an inactive persistent request with no schedule, run by its own wait
   and advance (flag slots, a segment): NULL on failure */
static coll_exec_t *exec_init_bare(struct vc_comm *comm, const void *sbuf, void *rbuf,
                                   size_t count, int tag, int (*wait)(struct vc_request *),
                                   struct vc_request **out, int *rc)
{
    coll_sched_t s;
    memset(&s, 0, sizeof s);
    if ((*rc = coll_exec_init(&s, NULL, rbuf, NULL, comm, tag, out)))
        return NULL;
    coll_exec_t *x = (*out)->coll;
    (*out)->wait = wait;
    x->fin = sbuf == VC_IN_PLACE || !sbuf ? rbuf : sbuf;
    x->fcount = count;
    return x;
}

int coll_exec_flags_init(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
                         size_t count, vc_dtype_t dt, vc_op_t op, int slot, uint64_t starts,
                         int tag, struct vc_request **out)
{
    int rc;
    coll_exec_t *x = exec_init_bare(comm, sbuf, rbuf, count, tag, flags_wait, out, &rc);
    if (!x)
        return rc;
    x->fslot = slot;
    x->fseq = starts;       /* the set's count goes on (coll_flags_pset_take) */
    x->fkind = kind;
    x->fdt = dt;
    x->fop = op;
    return VC_SUCCESS;
}

int coll_exec_seg_init(struct vc_comm *comm, struct coll_shmseg *g, const void *sbuf,
                       void *rbuf, size_t count, vc_dtype_t dt, vc_op_t op,
                       const struct ops_user *ufn, int tag, struct vc_request **out)
{
    int rc;
    coll_exec_t *x = exec_init_bare(comm, sbuf, rbuf, count, tag, seg_wait, out, &rc);
    if (!x)
        return rc;
    x->seg = g;
    x->sop = (coll_redop_t){dt, op, dtype_size(dt), ufn};
    return VC_SUCCESS;
}

int coll_exec_flags_set(const struct vc_request *r)
{
    /* (a request of shm_flags_nb.c has another kind of state) */
    const coll_exec_t *x = r && r->release == exec_release ? r->coll : NULL;
    return x ? x->fslot : 0;
}

int coll_exec_restart(struct vc_request *r)
{
    if (r->kind != REQ_COLL || r->persist != PERSIST_INACTIVE || !r->coll)
        return VC_ERR_REQUEST;
    exec_drop(r->coll);
    r->persist = PERSIST_ACTIVE;
    exec_go(r);
    return VC_SUCCESS;
}

void coll_exec_free_kept(coll_state_t *cs)
{
    if (!cs->kept.h.next)
        return;
    LIST_FOR_EACH_SAFE(n, nx, &cs->kept) {
        coll_exec_t *x = LIST_ENTRY(n, coll_exec_t, kept);
        struct vc_request *r = x->req_handle;
        if (!r->done)       /* still started: on p2p's queue of collectives */
            list_unlink(&r->link);
        req_free(r);        /* exec_release unlinks n */
    }
}
