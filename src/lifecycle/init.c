/*
 * init.c -- vc_init / vc_finalize: parse config, bootstrap, open the
 * transports with a single data-collecting fence, build the world.
 * The one place that knows every layer, so it sits above all of them
 * (core <- boot, net <- p2p <- coll <- lifecycle) and none includes it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "vcoll.h"
#include "core/ctx.h"
#include "core/comm.h"
#include "core/log.h"
#include "net/net.h"
#include "p2p/p2p.h"
#include "p2p/p2p_state.h"
#include "coll/coll.h"

static const char *getenv_c(const char *n) { return getenv(n); }

const char *vc_version_string(void)
{
    return "0.2.0 (verbs rc ud shm)";
}

double vc_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int vc_initialized(int *flag)
{
    if (!flag)
        return VC_ERR_ARG;
    *flag = vc_ctx.initialized;
    return VC_SUCCESS;
}

/* Spinning only helps while every rank has a core; past that, yield at once. */
static int resolve_spin(const struct vc_ctx *c)
{
    if (c->cfg.spin >= 0)
        return c->cfg.spin;
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0 && cores < online && c->boot.local_size > 1)
        cores = (int)online;  /* bound to one core by the launcher: count the node */
    return c->boot.local_size > cores ? 16 : 2000;
}

static void teardown(struct vc_ctx *c)
{
    net_hb_close(c->hb);     /* first: its thread must not outlive the device */
    c->hb = NULL;
    net_t **nets[] = {&c->rc, &c->ud, &c->shm, &c->self};
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        if (*nets[i]) {
            (*nets[i])->ops->close(*nets[i]);
            *nets[i] = NULL;
        }
    p2p_fini();
    req_pool_fini();
    free(c->net_of);
    c->net_of = NULL;
    free(c->dead);
    c->dead = NULL;
    boot_info_free(&c->boot);
}

static int open_transports(struct vc_ctx *c)
{
    net_upcalls_t up = {p2p_on_packet, p2p_on_get_done, p2p_on_peer_failed, NULL};
    int nremote = 0, rc;
    for (int r = 0; r < c->size; r++)
        if (c->boot.node_of[r] != c->boot.node_id)
            nremote++;

    /* which transport serves remote peers (or, when forced, every peer) */
    int want_shm = 0;
    net_t **remote = NULL;
    switch (c->cfg.net) {
    case CFG_NET_AUTO:
        want_shm = c->boot.local_size > 1;
        /* the ranks not known to share my node, not PMIX_NUM_NODES: when
           PMIx leaves out a key (PMIX_LOCAL_PEERS, PMIX_NUM_NODES) the two
           disagree, and these ranks still need a transport */
        if (nremote > 0) {
            /* a job-wide number, so every rank picks the same transport */
            int most = boot_max_remote_peers(&c->boot);
            if (c->cfg.rc_max_peers > 0 && most > c->cfg.rc_max_peers) {
                if (c->rank == 0)
                    LOG_INFO("%d remote peers exceed VCOLL_RC_MAX_PEERS=%d: remote "
                             "peers use UD", most, c->cfg.rc_max_peers);
                remote = &c->ud;
            } else {
                remote = &c->rc;
            }
        }
        break;
    case CFG_NET_SHM:
        if (nremote) {
            LOG_ERR("VCOLL_NET=shm, but %d of %d ranks are on other nodes: shared memory "
                    "cannot reach them; use VCOLL_NET=auto, rc or ud", nremote, c->size);
            return VC_ERR_TRANSPORT;
        }
        want_shm = c->boot.local_size > 1;
        break;
    case CFG_NET_RC:
        remote = c->size > 1 ? &c->rc : NULL;
        break;
    case CFG_NET_UD:
        remote = c->size > 1 ? &c->ud : NULL;
        break;
    }
    int forced = c->cfg.net == CFG_NET_RC || c->cfg.net == CFG_NET_UD;

    if ((rc = net_self_open(c, &up, &c->self)))
        return rc;
    if (want_shm && (rc = net_shm_open(c, &up, &c->shm)))
        return rc;
    if (remote == &c->rc && (rc = net_rc_open(c, &up, &c->rc)))
        return rc;
    if (remote == &c->ud && (rc = net_ud_open(c, &up, &c->ud)))
        return rc;
    /* verbs peers get a liveness detector: no launcher tells us when a
       rank on another node dies, and UD must tell a busy peer (its detector
       answers) from a stopped one. A rank that cannot start one still
       runs; it only loses the bounded detection of silent deaths. */
    if (remote && c->size > 1 && c->cfg.peer_timeout > 0 && net_hb_open(c, &c->hb))
        LOG_WARN("no liveness detector: a remote peer that dies silently is noticed "
                 "only by a failed transfer");

    /* the one fence that publishes every endpoint blob */
    if ((rc = boot_fence(1)))
        return rc;

    if (c->shm && (rc = net_shm_connect(c->shm, c)))
        return rc;
    if (c->rc) {
        int *rc_peers = malloc((size_t)c->size * sizeof(int)), nrc = 0;
        if (!rc_peers)
            return VC_ERR_NOMEM;
        for (int r = 0; r < c->size; r++)
            if (r != c->rank && (forced || c->boot.node_of[r] != c->boot.node_id))
                rc_peers[nrc++] = r;
        rc = net_rc_connect(c->rc, c, rc_peers, nrc);
        free(rc_peers);
        if (rc)
            return rc;
    }
    /* UD connects lazily, on the first packet to or from a peer */
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank)
            c->net_of[r] = c->self;
        else if (c->shm && c->boot.node_of[r] == c->boot.node_id && !forced)
            c->net_of[r] = c->shm;
        else if (remote && *remote)
            c->net_of[r] = *remote;
        else {
            LOG_ERR("no transport reaches rank %d: the launcher's node layout is "
                    "inconsistent (%d ranks on this node, %d nodes)", r,
                    c->boot.local_size, c->boot.nnodes);
            return VC_ERR_BOOTSTRAP;
        }
    }
    /* second fence: everyone has mapped the shm segment, its name can go */
    if (c->size > 1 && (rc = boot_fence(0)))
        return rc;
    if (c->shm)
        net_shm_after_fence(c->shm);
    return VC_SUCCESS;
}

int vc_init(int *argc, char ***argv)
{
    struct vc_ctx *c = &vc_ctx;
    (void)argc;
    (void)argv;
    if (c->initialized) {
        LOG_ERR("vc_init called twice");
        return VC_ERR_ARG;
    }
    if (c->finalized) {
        LOG_ERR("vc_init after vc_finalize: vcoll cannot be restarted in one process");
        return VC_ERR_NOT_INITIALIZED;
    }
    char err[512];
    int rc = cfg_parse(&c->cfg, getenv_c, err, sizeof err);
    if (rc) {
        c->cfg.log_level = CFG_LOG_ERROR;
        LOG_ERR("%s", err);
        return rc;
    }
    c->dead_peer = -1;
    if ((rc = boot_init(&c->boot))) {
        boot_info_free(&c->boot);
        return rc;
    }
    c->rank = c->boot.rank;
    c->size = c->boot.size;
    c->net_of = calloc((size_t)c->size, sizeof *c->net_of);
    c->dead = calloc((size_t)c->size, 1);
    if (!c->net_of || !c->dead || (rc = p2p_init())) {
        teardown(c);
        boot_finalize();
        return rc ? rc : VC_ERR_NOMEM;
    }
    c->p2p->spin = resolve_spin(c);
    if ((rc = open_transports(c))) {
        LOG_ERR("vc_init failed: %s", vc_strerror(rc));
        teardown(c);
        boot_finalize();
        return rc;
    }

    struct vc_comm *w = &vc_comm_world_obj;
    memset(w, 0, sizeof *w);
    w->magic = COMM_MAGIC;
    w->ctx = 0;
    w->rank = c->rank;
    w->size = c->size;
    c->next_ctx = 2;
    c->initialized = 1;
    if ((rc = coll_comm_init(w))) {
        c->initialized = 0;
        teardown(c);
        boot_finalize();
        return rc;
    }
    LOG_INFO("initialized: %d ranks, %d on this node, launcher %s, transports%s%s%s",
             c->size, c->boot.local_size, c->boot.launcher, c->shm ? " shm" : "",
             c->rc ? " rc" : "", c->ud ? " ud" : "");
    return VC_SUCCESS;
}

int vc_finalize(void)
{
    struct vc_ctx *c = &vc_ctx;
    VC_CHECK_INIT();
    /* Flush packets still waiting for ring space, or peers would wait
     * forever; then let unreliable transports (UD) hear that everything of
     * ours arrived and send the acknowledgements they owe. A peer that is
     * already in the fence below has acknowledged all it needed, so the
     * wait is bounded for what it never will. */
    unsigned idle = 0;
    double deadline = 0;
    for (;;) {
        int inflight = 0;
        net_t *nets[] = {c->rc, c->ud};
        for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
            if (nets[i] && nets[i]->ops->quiesce)
                inflight += nets[i]->ops->quiesce(nets[i]);
        /* a failed transport will deliver no acknowledgement again */
        if (c->dead_peer >= 0 || c->net_failed || (!c->p2p->pend_head && !inflight))
            break;
        if (!c->p2p->pend_head) {
            double t = vc_wtime();
            if (deadline == 0) {
                deadline = t + 10.0;
            } else if (t > deadline) {
                LOG_WARN("vc_finalize: %d packets still unacknowledged after 10 s; "
                         "finalizing anyway", inflight);
                break;
            }
        }
        if (vc_progress() == 0)
            vc_backoff(&idle);
    }
    int rc = VC_SUCCESS;
    /* finalize is collective: no peer may still be reading our memory */
    if (c->size > 1 && c->dead_peer < 0)
        rc = boot_fence(0);
    coll_comm_fini(&vc_comm_world_obj);
    vc_comm_world_obj.magic = COMM_FREED;
    teardown(c);
    int brc = boot_finalize();
    c->initialized = 0;
    c->finalized = 1;
    return rc ? rc : brc;
}

int vc_abort(vc_comm_t comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof msg, "vc_abort(%d) called by rank %d", errorcode, vc_ctx.rank);
    if (!vc_ctx.initialized) {
        fprintf(stderr, "vcoll: %s before vc_init\n", msg);
        _exit(errorcode ? errorcode : 1);
    }
    boot_abort(errorcode, msg);
    return VC_SUCCESS;
}
