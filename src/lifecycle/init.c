/*
 * init.c -- what vc_init / vc_finalize do (the API's src/api/init.c calls
 * in here, holding the lock): parse config, bootstrap, open the transports
 * with a single data-collecting fence, build each layer's state and the
 * world. The one place that knows every layer, so it sits above all of
 * them (core <- boot <- net <- progress <- p2p <- coll <- lifecycle) and
 * none includes it.
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
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "lifecycle.h"
#include "net/net.h"
#include "p2p/p2p.h"
#include "p2p/p2p_state.h"
#include "coll/coll.h"

static const char *getenv_c(const char *n) { return getenv(n); }

static void set_initialized(struct vc_ctx *c, int v)
{
    __atomic_store_n(&c->initialized, v, __ATOMIC_RELEASE);
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
    coll_teardown();
    net_hb_liveness(NULL, &c->prog.live);
    net_hb_close(c->net_env.hb);  /* first: its thread must not outlive the device */
    c->net_env.hb = NULL;
    net_t **nets[] = {&c->rc, &c->ud, &c->shm, &c->self};
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        if (*nets[i]) {
            (*nets[i])->ops->close(*nets[i]);
            *nets[i] = NULL;
        }
    p2p_fini(c->p2p);
    c->p2p = NULL;
    req_pool_fini(&c->reqs);
    prog_fini(&c->prog);
    boot_info_free(&c->boot);
}

static const char *const net_cfg_names[] = {"auto", "shm", "rc", "ud", NULL};

/* Everything that must be the same on every rank, or ranks pick different
 * transports, size shared rings differently or run different collective
 * schedules (which hangs). Checked after the endpoint fence. */
static int agree_settings(struct vc_ctx *c, const net_plan_t *plan)
{
    boot_info_t *b = &c->boot;
    const vc_config_t *f = &c->cfg;
    b->nagree = 0;
    int rc = boot_agree_add(b, "VCOLL_NET", f->net, net_cfg_names);
    rc |= boot_agree_add(b, "VCOLL_RC_MAX_PEERS", f->rc_max_peers, NULL);
    rc |= boot_agree_add(b, "VCOLL_EAGER_LIMIT", (int64_t)f->eager_limit, NULL);
    rc |= boot_agree_add(b, "VCOLL_SHM_CELLS", f->shm_cells, NULL);
    /* every collective's forced algorithm in one value, and the rules
       table in force (its digest): the same facts must pick the same
       schedule on every rank */
    rc |= boot_agree_add_shown(b, "VCOLL_<COLL>_ALG", coll_forced_pack(f), coll_forced_show);
    rc |= boot_agree_add(b, "the collective rules table (VCOLL_TUNE_FILE; digest)",
                         coll_rules_digest(), NULL);
    /* the derived facts too: equal inputs with unequal maps would still split
       the job between RC and UD */
    rc |= boot_agree_add(b, "the number of nodes (PMIx)", b->nnodes, NULL);
    rc |= boot_agree_add(b, "the most remote peers of a rank", plan->max_remote, NULL);
    rc |= boot_agree_add(b, "the node map digest (PMIx)",
                         (int64_t)boot_nodemap_digest(b->size, b->node_of), NULL);
    rc |= boot_agree_add(b, "the transport to other nodes", plan->remote, net_kind_names);
    return rc ? VC_ERR_ARG : boot_agree_publish(b);
}

/* What each node's lowest rank publishes of its node, for collective
 * selection: every rank reads the same keys, so every rank comes to the
 * same answer (agree_node_facts). */
#define NODE_FACTS_KEY "vc.node"
typedef struct node_facts {
    int32_t oversub;    /* more ranks here than online cores */
    int32_t pad;
    uint64_t pull;      /* from this size a pull pays here (net.h:
                           pull_pays); UINT64_MAX never (CMA off); 0: no
                           vote (a single rank, no shared memory) */
} node_facts_t;

/* More ranks on this node than online cores? */
static int32_t node_oversubscribed(const struct vc_ctx *c)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 && c->boot.local_size > online;
}

static node_facts_t node_facts(const struct vc_ctx *c)
{
    node_facts_t f = {.oversub = node_oversubscribed(c)};
    if (c->boot.local_size > 1 && c->shm)
        f.pull = c->shm->pull_pays ? (uint64_t)c->shm->pull_pays : UINT64_MAX;
    return f;
}

/* Which ranks of my node are bound to a core of mine? Each rank publishes
 * its CPU set with the endpoints (one key, no extra fence). A peer is near
 * when both of us are bound (fewer CPUs than the node has), our sets meet,
 * and more ranks are bound into my set than it has CPUs: only then must
 * one of us be off the CPU while the other runs. Ranks that merely share
 * a job's allocation (8 ranks unbound in 8 CPUs of 64) are not near, nor
 * are unbound ranks: the kernel moves them, so the plain spin stays
 * (prog_spin_for). */
#define CPUS_KEY "vc.cpus"

static int bound_cpus(cpu_set_t *set, long online)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) != 0)
        return 0;
    return online > 0 && CPU_COUNT(set) < online;
}

/* mine: my CPU set as published (bound_cpus) */
static int find_near(struct vc_ctx *c, const cpu_set_t *mine, long online)
{
    cpu_set_t theirs, both;
    const boot_info_t *b = &c->boot;
    if (b->local_size < 2)
        return VC_SUCCESS;
    uint8_t *near = calloc((size_t)c->size, 1);
    if (!near)
        return VC_ERR_NOMEM;
    int n = 0;
    for (int i = 0; i < b->local_size; i++) {
        int w = b->local_peers[i];
        size_t len = sizeof theirs;
        if (w == c->rank || boot_get(&c->boot, w, CPUS_KEY, &theirs, &len) ||
            len != sizeof theirs)
            continue;
        CPU_AND(&both, mine, &theirs);
        /* a peer bound to every CPU would meet mine without sharing it */
        if (CPU_COUNT(&both) && CPU_COUNT(&theirs) < online) {
            near[w] = 1;
            n++;
        }
    }
    if (n + 1 <= CPU_COUNT(mine))
        n = 0;      /* my CPUs are enough for all of us */
    if (!n) {
        free(near);
        return VC_SUCCESS;
    }
    LOG_DEBUG("%d rank(s) of this node bound to CPUs of mine, more ranks than CPUs: waits "
              "for them yield at once", n);
    c->prog.near = near;
    return VC_SUCCESS;
}

/* After the endpoint fence: is any node oversubscribed, and from which
 * size do a node's ranks copy a message once (the largest over the nodes:
 * rank to rank timings differ a little, and selection must not)? One Get
 * per node (its lowest rank's facts), not per rank, and no message. */
static int agree_node_facts(struct vc_ctx *c, const node_facts_t *mine)
{
    boot_info_t *b = &c->boot;
    c->coll.any_node_oversub = mine->oversub;
    c->coll.node_pull = mine->pull;
    if (!b->node_of || b->nnodes < 1)
        return VC_SUCCESS;
    char *seen = calloc((size_t)b->nnodes, 1);
    if (!seen)
        return VC_ERR_NOMEM;
    int rc = VC_SUCCESS, ovs = 0;
    uint64_t pull = 0;
    for (int r = 0; r < c->size; r++) {
        int n = b->node_of[r];
        if (n < 0 || n >= b->nnodes || seen[n])
            continue;
        seen[n] = 1;
        node_facts_t f = *mine;
        size_t len = sizeof f;
        if (r != c->rank && (rc = boot_get(&c->boot, r, NODE_FACTS_KEY, &f, &len)) == VC_SUCCESS &&
            len != sizeof f) {
            LOG_ERR("rank %d published %zu bytes of node facts, not %zu: mixed vcoll "
                    "versions in one job?", r, len, sizeof f);
            rc = VC_ERR_BOOTSTRAP;
        }
        if (rc)
            break;
        ovs |= f.oversub != 0;
        if (f.pull > pull)
            pull = f.pull;
    }
    if (!rc) {
        c->coll.any_node_oversub = ovs;
        c->coll.node_pull = pull;
        char p[32] = "never";
        if (pull != UINT64_MAX)
            snprintf(p, sizeof p, pull ? "%llu bytes" : "- (no two ranks on a node)",
                     (unsigned long long)pull);
        if (c->rank == 0)
            LOG_DEBUG("collective selection: %s node oversubscribed; a pull (one copy) "
                      "pays between ranks of a node from: %s", ovs ? "a" : "no", p);
    }
    free(seen);
    return rc;
}

static net_t *kind_net(struct vc_ctx *c, int kind)
{
    return kind == NET_KIND_SHM ? c->shm : kind == NET_KIND_RC ? c->rc
         : kind == NET_KIND_UD ? c->ud : NULL;
}

static int open_transports(struct vc_ctx *c)
{
    net_upcalls_t up = {p2p_on_packet, p2p_on_get_done, p2p_on_peer_failed, c->p2p};
    net_plan_t plan;
    char err[640];
    int rc = net_plan(&c->cfg, &c->boot, &plan, err, sizeof err);
    if (rc) {
        LOG_ERR("%s", err);
        return rc;
    }
    char layout[256] = "";
    boot_nodemap_describe(&c->boot, layout, sizeof layout);
    if (c->boot.local_rank == 0)
        LOG_INFO("node layout: %s (map from %s)", layout, c->boot.map_source);
    if (c->rank == 0)
        LOG_INFO("transports: same node %s, other nodes %s%s%s%s",
                 net_kind_names[plan.local], net_kind_names[plan.remote],
                 plan.why[0] ? " (" : "", plan.why, plan.why[0] ? ")" : "");

    /* the transports see this, never the context; it stays put in the
       context until teardown has closed them */
    net_env_t *env = &c->net_env;
    *env = (net_env_t){.rank = c->rank, .size = c->size, .cfg = &c->cfg, .boot = &c->boot,
                       .vdev = &c->net_vdev};
    int want[] = {plan.local, plan.remote};
    if ((rc = net_self_open(env, &up, &c->self)))
        return rc;
    for (int i = 0; i < 2; i++) {
        if (want[i] == NET_KIND_SHM && !c->shm)
            rc = net_shm_open(env, &up, &c->shm);
        else if (want[i] == NET_KIND_RC && !c->rc)
            rc = net_rc_open(env, &up, &c->rc);
        else if (want[i] == NET_KIND_UD && !c->ud)
            rc = net_ud_open(env, &up, &c->ud);
        if (rc)
            return rc;
    }
    if ((rc = agree_settings(c, &plan)))
        return rc;
    /* verbs peers get a liveness detector: no launcher tells us when a
       rank on another node dies, and UD must tell a busy peer (its detector
       answers) from a stopped one. A rank that cannot start one still
       runs; it only loses the bounded detection of silent deaths. */
    if ((c->rc || c->ud) && c->size > 1 && c->cfg.peer_timeout > 0 &&
        net_hb_open(env, &env->hb))
        LOG_WARN("no liveness detector: a remote peer that dies silently is noticed "
                 "only by a failed transfer");
    net_hb_liveness(env->hb, &c->prog.live);

    node_facts_t facts = node_facts(c);
    if ((rc = boot_put(&c->boot, NODE_FACTS_KEY, &facts, sizeof facts)))
        return rc;
    /* the whole set only where bound (an unbound rank is near no one): one
       byte instead of 128 per rank in the job-wide exchange */
    cpu_set_t cpus;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int bound = bound_cpus(&cpus, online);
    if (c->boot.local_size > 1 &&
        (rc = boot_put(&c->boot, CPUS_KEY, &cpus, bound ? sizeof cpus : 1)))
        return rc;
    /* the one fence that publishes every endpoint blob */
    if ((rc = boot_fence(&c->boot, 1)))
        return rc;
    /* One Get, and no rank goes on with settings rank 0 does not share. A
     * rank cannot make the others leave their next fence, so a mismatch ends
     * the job (with the message) rather than leaving it hanging. */
    if (c->rank != 0 && (rc = boot_agree_check(&c->boot, 0, err, sizeof err)))
        boot_abort(&c->boot, VC_ERR_ARG, err);
    if ((rc = agree_node_facts(c, &facts)) || (bound && (rc = find_near(c, &cpus, online))))
        return rc;

    /* the progress layer polls them in this order, and knows which one
       each peer is reached through */
    net_t *order[] = {c->self, c->shm, c->rc, c->ud};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (order[i] && (rc = prog_add_net(&c->prog, order[i])))
            return rc;
    c->prog.node_net = c->shm;
    net_t **net_of = c->prog.net_of;
    for (int r = 0; r < c->size; r++)
        net_of[r] = r == c->rank ? c->self
                  : kind_net(c, c->boot.node_of[r] == c->boot.node_id ? plan.local
                                                                        : plan.remote);
    if (c->shm && (rc = net_shm_connect(c->shm)))
        return rc;
    if (c->rc) {
        int *rc_peers = malloc((size_t)c->size * sizeof(int)), nrc = 0;
        if (!rc_peers)
            return VC_ERR_NOMEM;
        for (int r = 0; r < c->size; r++)
            if (net_of[r] == c->rc)
                rc_peers[nrc++] = r;
        rc = net_rc_connect(c->rc, rc_peers, nrc);
        free(rc_peers);
        if (rc)
            return rc;
    }
    /* UD connects lazily, on the first packet to or from a peer */
    /* second fence: everyone has mapped the shm segment, its name can go */
    if (c->size > 1 && (rc = boot_fence(&c->boot, 0)))
        return rc;
    if (c->shm)
        net_shm_after_fence(c->shm);
    return VC_SUCCESS;
}

/* the collective layer's state: what it needs of the others */
static void coll_state_set(struct vc_ctx *c)
{
    coll_state_t *cs = &c->coll;
    cs->rank = c->rank;
    cs->size = c->size;
    cs->boot = &c->boot;
    cs->node_net = c->shm;
    cs->shm_coll_max = c->cfg.shm_coll_max;
    cs->coll_alg = (const char (*)[32])c->cfg.coll_alg;
    cs->ops = &c->ops;
    cs->next_ctx = 2;
}

int life_init(struct vc_comm *world)
{
    struct vc_ctx *c = &ctx_lib;
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
        log_setup(-1, 0, CFG_LOG_ERROR);
        LOG_ERR("%s", err);
        return rc;
    }
    log_setup(-1, 0, c->cfg.log_level);
    if ((rc = coll_setup(&c->cfg, err, sizeof err))) {
        LOG_ERR("%s", err);
        return rc;
    }
    if ((rc = boot_init(&c->boot))) {
        boot_info_free(&c->boot);
        return rc;
    }
    c->rank = c->boot.rank;
    c->size = c->boot.size;
    log_setup(c->rank, c->size, c->cfg.log_level);
    if ((rc = prog_init(&c->prog, c->rank, c->size, &c->boot, c->cfg.peer_check,
                        resolve_spin(c))) ||
        (rc = p2p_init(&c->prog, &c->reqs, c->cfg.eager_limit, &c->p2p))) {
        teardown(c);
        boot_finalize(&c->boot);
        return rc;
    }
    if ((rc = open_transports(c))) {
        LOG_ERR("vc_init failed: %s", core_strerror(rc));
        teardown(c);
        boot_finalize(&c->boot);
        return rc;
    }

    coll_state_set(c);
    struct vc_comm *w = world;      /* VC_COMM_WORLD's object, the API's */
    memset(w, 0, sizeof *w);
    w->magic = COMM_MAGIC;
    w->ctx = 0;
    w->rank = c->rank;
    w->size = c->size;
    w->p2p = c->p2p;
    w->coll = &c->coll;
    c->thread_level = VC_THREAD_SINGLE;
    set_initialized(c, 1);
    if ((rc = coll_comm_init(w))) {
        set_initialized(c, 0);
        teardown(c);
        boot_finalize(&c->boot);
        return rc;
    }
    LOG_INFO("initialized: %d ranks, %d on this node, launcher %s, transports%s%s%s",
             c->size, c->boot.local_size, c->boot.launcher, c->shm ? " shm" : "",
             c->rc ? " rc" : "", c->ud ? " ud" : "");
    return VC_SUCCESS;
}

/* Finalize is collective: no peer may still be reading our memory. Every
 * live rank joins the fence, also one that saw a peer fail -- a rank that
 * saw nothing (its pair with the failed one was fine, or it never talked to
 * it) waits in the same fence, and would wait forever for ranks that
 * skipped it. Once a failure is known, the wait is bounded: a dead rank
 * never arrives. Progress runs meanwhile, so peers still finishing get
 * their acknowledgements. */
static int closing_fence(struct vc_ctx *c)
{
    if (c->prog.dead_peer >= 0 && boot_exch_armed(&c->boot))
        return VC_SUCCESS;      /* the caller's exchange blocks: not with a dead peer */
    int rc = boot_fence_begin(&c->boot);
    if (rc)
        return rc;
    unsigned idle = 0;
    double deadline = 0, bound = c->cfg.peer_timeout > 3 ? c->cfg.peer_timeout : 3.0;
    while ((rc = boot_fence_poll(&c->boot)) == 0) {
        if (c->prog.dead_peer >= 0) {
            double t = core_wtime();
            if (deadline == 0) {
                deadline = t + bound;
            } else if (t > deadline) {
                LOG_WARN("vc_finalize: rank %d failed and the closing fence is still "
                         "incomplete after %.0f s; finalizing without it", c->prog.dead_peer,
                         bound);
                return VC_SUCCESS;
            }
        }
        if (prog_poll(&c->prog) == 0)
            prog_backoff(&c->prog, &idle);
    }
    return rc == 1 ? VC_SUCCESS : rc;
}

int life_finalize(struct vc_comm *world)
{
    struct vc_ctx *c = &ctx_lib;
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
        if (c->prog.dead_peer >= 0 || c->prog.failed || (!c->p2p->pend_head && !inflight))
            break;
        if (!c->p2p->pend_head) {
            double t = core_wtime();
            if (deadline == 0) {
                deadline = t + 10.0;
            } else if (t > deadline) {
                LOG_WARN("vc_finalize: %d packets still unacknowledged after 10 s; "
                         "finalizing anyway", inflight);
                break;
            }
        }
        if (prog_poll(&c->prog) == 0)
            prog_backoff(&c->prog, &idle);
    }
    int rc = c->size > 1 ? closing_fence(c) : VC_SUCCESS;
    coll_comm_fini(world);
    world->magic = COMM_FREED;
    teardown(c);
    int brc = boot_finalize(&c->boot);
    set_initialized(c, 0);
    c->finalized = 1;
    return rc ? rc : brc;
}
