/*
 * wait.c -- waiting on requests: p2p_wait/waitany/waitall and the idle
 * steps of tests. The loop, back-off and liveness are the progress layer's
 * (src/progress); what is p2p's is what a request involves: which peers a
 * wait depends on, and failing a request whose peer or transport is gone.
 *
 * Under VC_THREAD_MULTIPLE a waiting call gives the library lock up on
 * every idle step (prog_backoff): requests may complete in another
 * thread's progress, which is why every loop re-reads r->done.
 */
#include <stdio.h>
#include "vcoll.h"
#include "../core/comm.h"
#include "../core/log.h"
#include "p2p.h"
#include "p2p_state.h"

/* p2p's poller (registered with the progress layer by p2p_init): retry
   queued sends, advance active non-blocking collectives */
int p2p_poll(void *arg)
{
    struct p2p_state *st = arg;
    int events = 0;
    if (st->pend_head)
        events += p2p_retry_pending(st);
    /* advance active non-blocking collectives; they may complete here */
    LIST_FOR_EACH_SAFE(n, nx, &st->coll) {
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

int p2p_progress(struct p2p_state *st)
{
    return prog_poll(st->prog);
}

void p2p_coll_activate(struct p2p_state *st, struct vc_request *r)
{
    list_push_back(&st->coll, &r->link);
}

int req_net_error(const struct p2p_state *st, const struct vc_request *r)
{
    const prog_t *p = st->prog;
    if (!p->failed)
        return VC_SUCCESS;
    if (r->kind != REQ_COLL && r->world_peer >= 0)
        return prog_net_error(p, p->net_of[r->world_peer]);
    const struct vc_comm *comm = r->comm;
    int n = comm ? comm->size : p->size;
    for (int i = 0; i < n; i++) {
        int e = prog_net_error(p, p->net_of[comm ? comm_world_rank(comm, i) : i]);
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
static void probe_for(prog_t *p, struct vc_request *r)
{
    int group = r->kind == REQ_COLL || r->world_peer < 0 || (r->ctx & 1);
    if (group)
        prog_probe_local(p);
    if (group && r->comm && r->comm->size <= WATCH_ALL_MAX) {
        for (int i = 0; i < r->comm->size; i++)
            prog_peer_probe(p, comm_world_rank(r->comm, i));
    } else if (r->kind == REQ_COLL) {
        if (r->watch)
            r->watch(r);
    } else if (r->world_peer >= 0) {
        prog_peer_probe(p, r->world_peer);
    }
}

static void fail_wait(struct p2p_state *st, struct vc_request *r, int err)
{
    p2p_cancel(st, r);
    if (r->kind == REQ_COLL)
        list_unlink(&r->link);
    r->status.error = err;
    r->done = 1;
}

/* r is unfinished after a poll: fail it if the transport it depends on
 * failed or a peer it involves is known dead (a failed completion or a UD
 * timeout is acted on at once, not at the next probe); when due, probe the
 * peers it depends on first. Failures are scoped: a dead peer fails only
 * the requests that involve it (p2p_fail_if_dead), not every wait. */
static void watch(struct p2p_state *st, struct vc_request *r, int due)
{
    int err = req_net_error(st, r);
    if (err) {
        fail_wait(st, r, err);
        return;
    }
    if (st->prog->ndead && r->kind != REQ_COLL && p2p_fail_if_dead(st, r))
        return;
    if (!due)
        return;
    probe_for(st->prog, r);
    if (st->prog->ndead && r->kind != REQ_COLL)
        p2p_fail_if_dead(st, r);
}

void p2p_idle_step(struct p2p_state *st, unsigned *idle, double *next_check,
                   struct vc_request *r, int spin)
{
    prog_backoff_spin(st->prog, idle, spin);
    /* another thread may have finished r while the lock was given up */
    if (!r->done)
        watch(st, r, prog_probe_due(st->prog, *idle, next_check));
}

/* a clock read only every 256 unfinished tests: a test loop must stay
   cheap, yet the peers it waits on must be probed every VCOLL_PEER_CHECK */
static int test_probe_due(struct p2p_state *st)
{
    if (++st->test_polls & 255)
        return 0;
    double t = prog_now();
    if (t < st->test_next_check)
        return 0;
    int first = st->test_next_check == 0;
    st->test_next_check = t + st->prog->peer_check;
    return !first;
}

void p2p_test_idle_n(struct p2p_state *st, int n, struct vc_request *const *rs)
{
    int due = test_probe_due(st);
    for (int i = 0; i < n; i++)
        if (rs[i] && !rs[i]->done)
            watch(st, rs[i], due);
}

void p2p_test_idle(struct p2p_state *st, struct vc_request *r)
{
    p2p_test_idle_n(st, 1, &r);
}

/* A wait first polls the transports back to back, P2P_HOT_POLLS times:
 * an answer due within microseconds (a ping-pong's reply) is seen one poll
 * sooner, with no back-off pause, liveness or clock bookkeeping between
 * polls. Profiling vcoll_osu_latency on rc showed that bookkeeping taking
 * as long as the polls themselves. Short enough that failures and other
 * threads (which get the lock only through the idle step) wait no longer
 * than a few microseconds more. */
#define P2P_HOT_POLLS 64

int p2p_wait(struct p2p_state *st, struct vc_request *r)
{
    prog_t *p = st->prog;
    unsigned idle = 0;
    double next_check = 0;
    if (r->wait && !r->done)
        return r->wait(r);
    int spin = prog_spin_for(p, r->world_peer);
    if (!p->yield && spin)
        for (int i = 0; i < P2P_HOT_POLLS && !r->done && !p->failed; i++)
            prog_poll(p);
    while (!r->done) {
        int events = prog_poll(p);
        if (r->done)
            break;
        int err = req_net_error(st, r);
        if (err)
            fail_wait(st, r, err);
        else if (events > 0) {
            idle = 0;
            if (p->pass)
                p->pass();
        } else {
            p2p_idle_step(st, &idle, &next_check, r, spin);
        }
    }
    return r->status.error;
}

/* index of a done entry of rs (NULLs and inactive persistent requests
   skipped, as MPI skips them), else -1; *live: some entry is neither */
static int first_done(int n, struct vc_request *const *rs, int *live)
{
    *live = 0;
    for (int i = 0; i < n; i++) {
        if (!rs[i] || req_inactive(rs[i]))
            continue;
        if (rs[i]->done)
            return i;
        *live = 1;
    }
    return -1;
}

int p2p_waitany(struct p2p_state *st, int n, struct vc_request *const *rs)
{
    prog_t *p = st->prog;
    unsigned idle = 0;
    double next_check = 0;
    for (;;) {
        int live, i = first_done(n, rs, &live);
        if (i >= 0 || !live)
            return i;
        int events = prog_poll(p);
        if ((i = first_done(n, rs, &live)) >= 0)
            return i;
        /* one back-off for all; each request is watched as p2p_wait
           watches its one, and one that fails is the one returned */
        int due = 0;
        if (events > 0) {
            idle = 0;
            if (p->pass)
                p->pass();
        } else {
            prog_backoff(p, &idle);
            due = prog_probe_due(p, idle, &next_check);
        }
        for (i = 0; i < n; i++)
            if (rs[i] && !rs[i]->done)
                watch(st, rs[i], due);
    }
}

int p2p_waitall(struct p2p_state *st, int n, struct vc_request **rs)
{
    int err = VC_SUCCESS;
    for (int i = 0; i < n; i++) {
        int rc = p2p_wait(st, rs[i]);
        if (rc && !err)
            err = rc;
    }
    return err;
}
