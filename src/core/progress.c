/*
 * progress.c -- the progress engine and the wait loop.
 *
 * No hidden threads: progress happens inside blocking calls, vc_test and
 * vc_wait. A waiting rank polls for a while (lowest latency), then yields
 * the core on every empty poll, because on an oversubscribed node the peer
 * it waits for may need exactly this core to make progress. While it waits
 * it also checks every VCOLL_PEER_CHECK seconds that its peers are alive,
 * so a killed peer turns into VC_ERR_PEER_FAILED instead of a hang.
 */
#include <sched.h>
#include <time.h>
#include "vcoll.h"
#include "ctx.h"
#include "log.h"
#include "../p2p/p2p.h"
#include "../p2p/p2p_state.h"

int vc_progress(void)
{
    struct vc_ctx *c = &vc_ctx;
    int events = 0;
    net_t *nets[4] = {c->self, c->shm, c->rc, c->ud};
    for (int i = 0; i < 4; i++) {
        if (!nets[i])
            continue;
        int e = nets[i]->ops->progress(nets[i]);
        if (e > 0)
            events += e;
    }
    if (c->p2p->pend_head)
        events += p2p_retry_pending();
    /* advance active non-blocking collectives; they may complete here */
    struct vc_request *r = c->p2p->coll.head;
    while (r) {
        struct vc_request *next = r->next;
        int rc = r->advance(r);
        if (rc)
            r->status.error = rc;
        if (r->done || rc) {
            r->done = 1;
            p2p_queue_remove(&c->p2p->coll, r);
            events++;
        }
        r = next;
    }
    return events;
}

void vc_coll_activate(struct vc_request *r)
{
    p2p_queue_push(&vc_ctx.p2p->coll, r);
}

void vc_backoff(unsigned *idle)
{
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

/* Is the peer this request depends on gone? (ANY_SOURCE: any peer) */
static int peer_dead(const struct vc_request *r)
{
    struct vc_ctx *c = &vc_ctx;
    if (c->dead_peer >= 0)
        return 1;
    if (r->kind == REQ_COLL || r->world_peer < 0) {
        /* only transports that can probe cheaply (shm) are asked */
        for (int i = 0; i < c->boot.local_size; i++) {
            int p = c->boot.local_peers[i];
            net_t *n = c->net_of[p];
            if (p != c->rank && n->ops->check_peer && n->ops->check_peer(n, p)) {
                p2p_on_peer_failed(NULL, p, "process is gone (killed or exited without vc_finalize)");
                return 1;
            }
        }
        return 0;
    }
    net_t *n = c->net_of[r->world_peer];
    if (n->ops->check_peer && n->ops->check_peer(n, r->world_peer)) {
        p2p_on_peer_failed(NULL, r->world_peer, "process is gone (killed or exited without vc_finalize)");
        return 1;
    }
    return 0;
}

/* Back off once, and every VCOLL_PEER_CHECK seconds (looked at only after
 * the spin phase) probe the peers r depends on. 1 = one of them is dead. */
static int idle_step(unsigned *idle, double *next_check, const struct vc_request *r)
{
    vc_backoff(idle);
    /* a transport already reported a failure (failed completion, UD
       timeout): no need to wait for the next probe to act on it */
    if (vc_ctx.dead_peer >= 0)
        return 1;
    if (*idle < (unsigned)vc_ctx.p2p->spin || (*idle & 63))
        return 0;
    double t = now();
    if (*next_check == 0) {
        *next_check = t + vc_ctx.cfg.peer_check;
        return 0;
    }
    if (t < *next_check)
        return 0;
    *next_check = t + vc_ctx.cfg.peer_check;
    return peer_dead(r);
}

int p2p_wait(struct vc_request *r)
{
    unsigned idle = 0;
    double next_check = 0;
    while (!r->done) {
        if (vc_progress() > 0) {
            idle = 0;
            continue;
        }
        if (r->done)
            break;
        if (idle_step(&idle, &next_check, r)) {
            p2p_cancel(r);
            if (r->kind == REQ_COLL)
                p2p_queue_remove(&vc_ctx.p2p->coll, r);
            r->status.error = VC_ERR_PEER_FAILED;
            r->done = 1;
        }
    }
    return r->status.error;
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
int vc_wait_step(unsigned *idle, double *next_check)
{
    static const struct vc_request any = {.kind = REQ_COLL, .world_peer = -1};
    if ((*idle & 15) == 15 && vc_progress() > 0)
        return VC_SUCCESS;
    return idle_step(idle, next_check, &any) ? VC_ERR_PEER_FAILED : VC_SUCCESS;
}
