/*
 * progress.c -- the progress engine and the wait loop.
 *
 * No hidden threads: progress happens inside blocking calls, vc_test and
 * vc_wait. A waiting rank polls for a while (lowest latency), then yields
 * the core on every empty poll, because on an oversubscribed node the peer
 * it waits for may need exactly this core to make progress. While it waits
 * it also checks every VCOLL_PEER_CHECK seconds that its peers are alive,
 * so a killed peer turns into VC_ERR_PEER_FAILED instead of a hang.
 *
 * Under VC_THREAD_MULTIPLE a waiting call gives the library lock up on
 * every idle step (vc_backoff -> vc_lock_idle): requests may complete in
 * another thread's vc_progress, which is why every loop re-reads r->done.
 */
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include "vcoll.h"
#include "../core/ctx.h"
#include "../core/comm.h"
#include "../core/log.h"
#include "p2p.h"
#include "p2p_state.h"

#define NNETS (int)(sizeof vc_ctx.net_err / sizeof vc_ctx.net_err[0])

static void nets_of(const struct vc_ctx *c, net_t *nets[NNETS])
{
    nets[0] = c->self;
    nets[1] = c->shm;
    nets[2] = c->rc;
    nets[3] = c->ud;
}

/* A transport whose progress failed (a CQ that cannot be polled) will not
 * deliver anything again: remember its error, say so once, stop polling. */
static void net_failed(struct vc_ctx *c, int i, const net_t *n, int err)
{
    if (err <= VC_SUCCESS || err > VC_ERR_INTERNAL)
        err = VC_ERR_TRANSPORT;     /* not a VC_ERR_* code: still a failure */
    c->net_err[i] = err;
    c->net_failed = 1;
    LOG_ERR("%s transport failed while polling: %s; the operations that use it fail",
            n->name, vc_strerror(err));
}

int vc_progress(void)
{
    struct vc_ctx *c = &vc_ctx;
    int events = 0;
    net_t *nets[NNETS];
    nets_of(c, nets);
    for (int i = 0; i < NNETS; i++) {
        if (!nets[i] || c->net_err[i])
            continue;
        int e = nets[i]->ops->progress(nets[i]);
        if (e > 0)
            events += e;
        else if (e < 0)
            net_failed(c, i, nets[i], -e);
    }
    if (c->p2p->pend_head)
        events += p2p_retry_pending();
    /* advance active non-blocking collectives; they may complete here */
    LIST_FOR_EACH_SAFE(n, nx, &c->p2p->coll) {
        struct vc_request *r = LIST_ENTRY(n, struct vc_request, link);
        int rc = r->advance(r);
        if (rc)
            r->status.error = rc;
        if (r->done || rc) {
            r->done = 1;
            list_unlink(&r->link);
            events++;
        }
    }
    return events;
}

void vc_coll_activate(struct vc_request *r)
{
    list_push_back(&vc_ctx.p2p->coll, &r->link);
}

/* The idle hook runs only once a wait has found nothing this many times
   in a row, and then once per IDLE_HOOK_EVERY: a collective whose data is
   on its way never pays for it (an MPI progress call costs about a
   microsecond, as much as a small collective here), while a peer that
   needs the other library's progress waits microseconds more, not
   forever. */
#define IDLE_HOOK_AFTER 256
#define IDLE_HOOK_EVERY 64

static __thread int in_idle_hook;

static void idle_hook(unsigned idle)
{
    /* cheapest test first: every wait step comes through here, and the
       thread-local flag costs a __tls_get_addr call in a shared library */
    if (idle < IDLE_HOOK_AFTER || (idle % IDLE_HOOK_EVERY))
        return;
    void (*fn)(void *) = __atomic_load_n(&vc_ctx.idle_hook.fn, __ATOMIC_ACQUIRE);
    if (!fn || in_idle_hook)
        return;
    in_idle_hook = 1;
    fn(vc_ctx.idle_hook.arg);
    in_idle_hook = 0;
}

void vc_backoff(unsigned *idle)
{
    idle_hook(*idle);
    if (vc_ctx.thread_multiple) {
        /* every wait loop comes through here: the one place where other
           threads get the lock while this one waits */
        vc_lock_idle(++*idle < (unsigned)vc_ctx.p2p->spin);
        return;
    }
    if (++*idle < (unsigned)vc_ctx.p2p->spin) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    sched_yield();
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Probe the same-node peers by pid (cheap; ANY_SOURCE receives and
   collectives could be waiting on any of them). */
static void probe_local_peers(void)
{
    struct vc_ctx *c = &vc_ctx;
    for (int i = 0; i < c->boot.local_size; i++) {
        int p = c->boot.local_peers[i];
        net_t *n = c->net_of[p];
        if (p != c->rank && !c->dead[p] && n->ops->check_peer && n->ops->check_peer(n, p))
            p2p_on_peer_failed(NULL, p, "process is gone (killed or exited without vc_finalize)");
    }
}

int vc_peer_probe(int w)
{
    struct vc_ctx *c = &vc_ctx;
    if (w < 0 || w >= c->size || w == c->rank)
        return 0;
    if (c->dead[w])
        return 1;
    net_t *n = c->net_of[w];
    if (n->ops->check_peer && n->ops->check_peer(n, w)) {
        p2p_on_peer_failed(NULL, w, "process is gone (killed or exited without vc_finalize)");
        return 1;
    }
    if (c->live.watch && (c->boot.node_of[w] != c->boot.node_id || n != c->shm)) {
        /* another node: only its heartbeats can tell. A same-node peer over
           verbs is watched too: it is alive (pid probe), but its end of the
           connection may have failed, and only its DOWN tells us so. */
        char why[200];
        if (c->live.watch(c->live.h, w, why, sizeof why)) {
            p2p_on_peer_failed(NULL, w, why);
            return 1;
        }
    }
    return 0;
}

static int net_error(const struct vc_ctx *c, const net_t *n)
{
    net_t *nets[NNETS];
    nets_of(c, nets);
    for (int i = 0; i < NNETS; i++)
        if (n && nets[i] == n)
            return c->net_err[i];
    return VC_SUCCESS;
}

/* (p2p.h) */
int req_net_error(const struct vc_request *r)
{
    const struct vc_ctx *c = &vc_ctx;
    if (!c->net_failed)
        return VC_SUCCESS;
    if (r->kind != REQ_COLL && r->world_peer >= 0)
        return net_error(c, c->net_of[r->world_peer]);
    const struct vc_comm *comm = r->comm;
    int n = comm ? comm->size : c->size;
    for (int i = 0; i < n; i++) {
        int e = net_error(c, c->net_of[comm ? comm_world_rank(comm, i) : i]);
        if (e)
            return e;
    }
    return VC_SUCCESS;
}

/* Communicators up to this size have every member watched while a
 * collective or a wildcard receive on them waits: a rank stuck in a
 * barrier behind a live rank that is itself stuck behind the dead one must
 * find out too, and nothing else would tell it. Larger ones watch only the
 * peers of their own unfinished messages (a ping storm of p^2 heartbeats
 * per second would cost more than it saves). */
#define WATCH_ALL_MAX 256

/* Probe what r waits on: its peer; for a collective (or a message of one:
   odd contexts are collective traffic) or a wildcard receive, the members
   of its communicator; plus this node's peers by pid. */
static void probe_for(struct vc_request *r)
{
    int group = r->kind == REQ_COLL || r->world_peer < 0 || (r->ctx & 1);
    if (group)
        probe_local_peers();
    if (group && r->comm && r->comm->size <= WATCH_ALL_MAX) {
        for (int i = 0; i < r->comm->size; i++)
            vc_peer_probe(comm_world_rank(r->comm, i));
    } else if (r->kind == REQ_COLL) {
        if (r->watch)
            r->watch(r);
    } else if (r->world_peer >= 0) {
        vc_peer_probe(r->world_peer);
    }
}

static void fail_wait(struct vc_request *r, int err)
{
    p2p_cancel(r);
    if (r->kind == REQ_COLL)
        list_unlink(&r->link);
    r->status.error = err;
    r->done = 1;
}

/* 1 when a waiting loop's peers are due for a probe: every
   VCOLL_PEER_CHECK seconds, looked at only after the spin phase */
static int probe_due(unsigned idle, double *next_check)
{
    if (idle < (unsigned)vc_ctx.p2p->spin || (idle & 63))
        return 0;
    double t = now();
    if (*next_check == 0) {
        *next_check = t + vc_ctx.cfg.peer_check;
        return 0;
    }
    if (t < *next_check)
        return 0;
    *next_check = t + vc_ctx.cfg.peer_check;
    return 1;
}

/* r is unfinished after a poll: fail it if the transport it depends on
 * failed or a peer it involves is known dead (a failed completion or a UD
 * timeout is acted on at once, not at the next probe); when due, probe the
 * peers it depends on first. Failures are scoped: a dead peer fails only
 * the requests that involve it (p2p_fail_if_dead), not every wait. */
static void watch(struct vc_request *r, int due)
{
    int err = req_net_error(r);
    if (err) {
        fail_wait(r, err);
        return;
    }
    if (vc_ctx.ndead && r->kind != REQ_COLL && p2p_fail_if_dead(r))
        return;
    if (!due)
        return;
    probe_for(r);
    if (vc_ctx.ndead && r->kind != REQ_COLL)
        p2p_fail_if_dead(r);
}

void vc_idle_step(unsigned *idle, double *next_check, struct vc_request *r)
{
    vc_backoff(idle);
    /* another thread may have finished r while the lock was given up */
    if (!r->done)
        watch(r, probe_due(*idle, next_check));
}

/* a clock read only every 256 unfinished tests: a test loop must stay
   cheap, yet the peers it waits on must be probed every VCOLL_PEER_CHECK */
static int test_probe_due(void)
{
    struct vc_ctx *c = &vc_ctx;
    if (++c->p2p->test_polls & 255)
        return 0;
    double t = now();
    if (t < c->p2p->test_next_check)
        return 0;
    int first = c->p2p->test_next_check == 0;
    c->p2p->test_next_check = t + c->cfg.peer_check;
    return !first;
}

void vc_test_idle_n(int n, struct vc_request *const *rs)
{
    int due = test_probe_due();
    for (int i = 0; i < n; i++)
        if (rs[i] && !rs[i]->done)
            watch(rs[i], due);
}

void vc_test_idle(struct vc_request *r)
{
    vc_test_idle_n(1, &r);
}

/* A wait first polls the transports back to back, P2P_HOT_POLLS times:
 * an answer due within microseconds (a ping-pong's reply) is seen one poll
 * sooner, with no back-off pause, liveness or clock bookkeeping between
 * polls. Profiling vcoll_osu_latency on rc showed that bookkeeping taking
 * as long as the polls themselves. Short enough that failures and other
 * threads (which get the lock only through the idle step) wait no longer
 * than a few microseconds more. */
#define P2P_HOT_POLLS 64

int p2p_wait(struct vc_request *r)
{
    unsigned idle = 0;
    double next_check = 0;
    if (!vc_ctx.thread_multiple)
        for (int i = 0; i < P2P_HOT_POLLS && !r->done && !vc_ctx.net_failed; i++)
            vc_progress();
    while (!r->done) {
        int events = vc_progress();
        if (r->done)
            break;
        int err = req_net_error(r);
        if (err)
            fail_wait(r, err);
        else if (events > 0) {
            idle = 0;
            if (vc_ctx.thread_multiple)
                vc_lock_pass();
        } else {
            vc_idle_step(&idle, &next_check, r);
        }
    }
    return r->status.error;
}

/* index of a done entry of rs (NULLs skipped), else -1; *live: some
   entry is not NULL */
static int first_done(int n, struct vc_request *const *rs, int *live)
{
    *live = 0;
    for (int i = 0; i < n; i++) {
        if (!rs[i])
            continue;
        if (rs[i]->done)
            return i;
        *live = 1;
    }
    return -1;
}

int p2p_waitany(int n, struct vc_request *const *rs)
{
    unsigned idle = 0;
    double next_check = 0;
    for (;;) {
        int live, i = first_done(n, rs, &live);
        if (i >= 0 || !live)
            return i;
        int events = vc_progress();
        if ((i = first_done(n, rs, &live)) >= 0)
            return i;
        /* one back-off for all; each request is watched as p2p_wait
           watches its one, and one that fails is the one returned */
        int due = 0;
        if (events > 0) {
            idle = 0;
            if (vc_ctx.thread_multiple)
                vc_lock_pass();
        } else {
            vc_backoff(&idle);
            due = probe_due(idle, &next_check);
        }
        for (i = 0; i < n; i++)
            if (rs[i] && !rs[i]->done)
                watch(rs[i], due);
    }
}

int p2p_waitall(int n, struct vc_request **rs)
{
    int err = VC_SUCCESS;
    for (int i = 0; i < n; i++) {
        int rc = p2p_wait(rs[i]);
        if (rc && !err)
            err = rc;
    }
    return err;
}

/* One idle step of a wait that is not tied to a request (collectives that
 * wait on shared-memory flags): drive progress now and then so p2p backlogs
 * and non-blocking collectives still move, back off, and probe the node's
 * peers every VCOLL_PEER_CHECK seconds. */
int vc_wait_step(const struct vc_comm *comm, unsigned *idle, double *next_check)
{
    if (vc_ctx.ndead && p2p_comm_has_dead(comm))
        return VC_ERR_PEER_FAILED;
    if ((*idle & 15) == 15 && vc_progress() > 0)
        return VC_SUCCESS;
    vc_backoff(idle);
    if (*idle < (unsigned)vc_ctx.p2p->spin || (*idle & 63))
        return VC_SUCCESS;
    double t = now();
    if (*next_check == 0 || t >= *next_check) {
        if (*next_check)
            probe_local_peers();
        *next_check = t + vc_ctx.cfg.peer_check;
    }
    return vc_ctx.ndead && p2p_comm_has_dead(comm) ? VC_ERR_PEER_FAILED : VC_SUCCESS;
}
