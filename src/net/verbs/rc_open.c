/*
 * rc_open.c -- open the RC transport (a reference to the shared device,
 * CQ, SRQ, wire-up QP, endpoint blob) and close it. Per-peer QPs are made
 * on demand (rc_wire.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "boot/boot.h"
#include "net/verbs/rc.h"

static void rc_close(net_t *n);

static const net_ops_t rc_ops = {
    .send = rc_send,
    .progress = rc_progress,
    .mem_expose = rc_mem_expose,
    .mem_release = rc_mem_release,
    .get = rc_get,
    .check_peer = rc_check_peer,
    .quiesce = rc_quiesce,
    .close = rc_close,
};

/* Ranks this process needs a QP for. Mirrors the core: every other rank when
   VCOLL_NET=rc forces verbs, else only ranks on other nodes. */
static int rc_is_candidate(const net_env_t *env, int r)
{
    if (r == env->rank)
        return 0;
    if (env->cfg->net == CFG_NET_RC)
        return 1;
    return env->boot->node_of && env->boot->node_of[r] != env->boot->node_id;
}

/* Size queues for this job and the device's limits. Nothing here grows
   with the job until peers are used, except the SRQ ring and the CQ, which
   are bounded (RC_SRQ_MAX, RC_OPS_MAX) and hold no buffers. */
static int rc_size_queues(rc_net_t *r, const struct ibv_device_attr *da)
{
    const vc_config_t *cfg = r->env->cfg;
    int credits = cfg->ib_rx_depth - RC_CREDIT_RESERVE;
    if (credits > RC_PEER_CREDITS)
        credits = RC_PEER_CREDITS;
    if (credits < 4)
        credits = 4;          /* below this the window stalls every few packets */
    long per = credits + RC_CREDIT_RESERVE;
    long srq = (long)(r->ncand > 0 ? r->ncand : 1) * per;
    if (srq > RC_SRQ_MAX)
        srq = RC_SRQ_MAX;
    if (srq > da->max_srq_wr)
        srq = da->max_srq_wr;
    if (srq < per) {
        LOG_ERR("rc: one peer needs %ld receive buffers, more than %s's SRQ holds "
                "(max_srq_wr %d)", per, r->port.dev, da->max_srq_wr);
        return VC_ERR_UNSUPPORTED;
    }
    r->credits = credits;
    r->srq_cap = (int)srq;
    /* every QP the device has, unless VCOLL_RC_MAX_QP says fewer; other
       processes share the device, so ibv_create_qp may still fail first,
       and the peer goes to UD the same way */
    r->dev_max_qp = da->max_qp;
    r->max_qp = cfg->rc_max_qp > 0 && cfg->rc_max_qp < da->max_qp ? cfg->rc_max_qp
                                                                    : da->max_qp;

    r->sq_depth = cfg->ib_tx_depth < da->max_qp_wr ? cfg->ib_tx_depth : da->max_qp_wr;
    long ops = (long)(r->ncand > 0 ? r->ncand : 1) * r->sq_depth;
    if (ops > RC_OPS_MAX)
        ops = RC_OPS_MAX;     /* beyond this, sends just wait for completions */
    if (ops + r->srq_cap > da->max_cqe) {
        ops = da->max_cqe - r->srq_cap;
        if (ops < 16) {
            LOG_ERR("rc: CQ of %s too small (max_cqe %d) for %d receive buffers",
                    r->port.dev, da->max_cqe, r->srq_cap);
            return VC_ERR_UNSUPPORTED;
        }
    }
    r->op_count = (int)ops;
    r->tx_count = 2 * r->sq_depth < r->op_count ? 2 * r->sq_depth : r->op_count;
    r->max_send_sge = da->max_sge < 4 ? da->max_sge : 4;
    r->rd_atom = da->max_qp_rd_atom < 16 ? da->max_qp_rd_atom : 16;
    if (r->rd_atom < 1)
        r->rd_atom = 1;
    return VC_SUCCESS;
}

static int rc_alloc_resources(rc_net_t *r)
{
    struct ibv_device_attr da;
    int rc;
    if (ibv_query_device(r->ctx, &da)) {
        LOG_ERR("rc: ibv_query_device(%s): %s", r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    if ((rc = rc_size_queues(r, &da)))
        return rc;
    if (!(r->cq = ibv_create_cq(r->ctx, r->srq_cap + r->op_count, NULL, NULL, 0))) {
        LOG_ERR("rc: ibv_create_cq(%d) on %s: %s", r->srq_cap + r->op_count,
                r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    struct ibv_srq_init_attr sa;
    memset(&sa, 0, sizeof sa);
    sa.attr.max_wr = (uint32_t)r->srq_cap;
    sa.attr.max_sge = 1;
    if (!(r->srq = ibv_create_srq(r->pd, &sa))) {
        LOG_ERR("rc: ibv_create_srq(%d) on %s: %s", r->srq_cap, r->port.dev,
                strerror(errno));
        return VC_ERR_TRANSPORT;
    }

    size_t mp = r->base.max_packet;
    r->tx_buf = aligned_alloc(4096, ((mp * (size_t)r->tx_count) + 4095) & ~(size_t)4095);
    r->tx_free = malloc(sizeof(int) * (size_t)r->tx_count);
    r->op = calloc((size_t)r->op_count, sizeof *r->op);
    if (!r->tx_buf || !r->tx_free || !r->op)
        return VC_ERR_NOMEM;
    r->tx_mr = ibv_reg_mr(r->pd, r->tx_buf, mp * (size_t)r->tx_count, 0);
    if (!r->tx_mr) {
        LOG_ERR("rc: registering %zu bytes of send buffers on %s failed: %s "
                "(ulimit -l?)", mp * (size_t)r->tx_count, r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    for (int i = 0; i < r->tx_count; i++)
        r->tx_free[i] = i;
    r->tx_nfree = r->tx_count;
    for (int i = 0; i < r->op_count; i++)
        r->op[i].next_free = i + 1 < r->op_count ? i + 1 : -1;
    r->op_free = 0;
    return rc_hs_open(r);
}

static int rc_publish(rc_net_t *r)
{
    rc_blob_t b;
    memset(&b, 0, sizeof b);
    b.magic = RC_BLOB_MAGIC;
    b.hs_qpn = r->hs_qp ? r->hs_qp->qp_num : 0;
    b.lid = r->port.lid;
    b.mtu = (uint8_t)r->port.active_mtu;
    b.link_layer = (uint8_t)r->port.link_layer;
    memcpy(b.gid, r->port.gid.raw, 16);
    b.gid_index = r->port.gid_index;
    b.max_packet = (uint32_t)r->base.max_packet;
    b.credits = (uint32_t)r->credits;
    b.rd_atom = (uint32_t)r->rd_atom;
    b.pid = (int32_t)getpid();
    return boot_put(r->env->boot, RC_BLOB_KEY, &b, sizeof b);
}

int net_rc_open(const net_env_t *env, const net_upcalls_t *up, net_t **out)
{
    if (!env || !up || !out)
        return VC_ERR_ARG;
    *out = NULL;
    const vc_config_t *cfg = env->cfg;
    int ncand = 0;
    for (int p = 0; p < env->size; p++)
        ncand += rc_is_candidate(env, p);
    if (cfg->rc_max_peers > 0 && ncand > cfg->rc_max_peers) {
        LOG_INFO("rc: %d peers exceed VCOLL_RC_MAX_PEERS=%d; not building an RC mesh",
                 ncand, cfg->rc_max_peers);
        return VC_ERR_UNSUPPORTED;
    }

    rc_net_t *r = calloc(1, sizeof *r);
    if (!r)
        return VC_ERR_NOMEM;
    list_init(&r->live);
    r->base.ops = &rc_ops;
    r->base.name = "rc";
    r->base.up = *up;
    r->env = env;
    r->me = env->rank;
    r->size = env->size;
    r->ncand = ncand;
    if (net_fault_spec(env, "VCOLL_FAULT_RC_ERR", cfg->fault_rc_err, &r->fault_peer,
                       &r->fault_after)) {
        free(r);
        return VC_ERR_ARG;
    }
    /* one eager message (p2p header + up to VCOLL_EAGER_LIMIT) per packet,
       capped so the SRQ's memory stays bounded */
    r->base.max_packet = net_verbs_max_packet(cfg->eager_limit);

    /* O(N) only in untouched zero pages until peers are used */
    r->peer = calloc((size_t)env->size, sizeof *r->peer);
    r->hs_ah = calloc((size_t)env->size, sizeof *r->hs_ah);
    r->hs_qpn = calloc((size_t)env->size, sizeof *r->hs_qpn);
    int rc = VC_ERR_NOMEM;
    if (!r->peer || !r->hs_ah || !r->hs_qpn)
        goto fail;

    if (ncand > 0) {
        if ((rc = net_vdev_get(env, "rc", &r->dev)))
            goto fail;
        r->ctx = r->dev->ctx;
        r->pd = r->dev->pd;
        r->port = r->dev->port;
        snprintf(r->why, sizeof r->why, "%s", r->dev->why);
        if ((rc = rc_alloc_resources(r)) || (rc = rc_reg_open(r)))
            goto fail;
        char gid[64];
        net_vdev_gid_str(&r->port.gid, gid, sizeof gid);
        LOG_INFO("rc: %s:%d (%s, MTU %d, LID %u, GID[%d] %s %s), %d peers, each connected on "
                 "first use (wire-up QP 0x%x), at most %d QPs, %d credits/peer, SRQ up to %d x "
                 "%zu B; %s",
                 r->port.dev, r->port.port,
                 net_vdev_link_layer_str(r->port.link_layer),
                 net_vdev_mtu_bytes(r->port.active_mtu), r->port.lid,
                 r->port.gid_index, r->port.gid_index >= 0 ? gid : "-",
                 r->port.gid_index >= 0 ? net_vdev_gid_type_str(r->port.gid_type) : "",
                 ncand, r->hs_qp->qp_num, r->max_qp, r->credits, r->srq_cap,
                 r->base.max_packet,
                 r->why);
    }
    if ((rc = rc_publish(r)))
        goto fail;
    *out = &r->base;
    return VC_SUCCESS;
fail:
    rc_close(&r->base);
    return rc;
}

/* After the fence: nothing to do any more but check the count; QPs are
   made when a peer is first addressed (rc_wire.c). */
int net_rc_connect(net_t *n, const int *peers, int npeers)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r || npeers < 0 || (npeers && !peers))
        return VC_ERR_ARG;
    const vc_config_t *cfg = r->env->cfg;
    if (cfg->rc_max_peers > 0 && npeers > cfg->rc_max_peers) {
        LOG_INFO("rc: %d peers exceed VCOLL_RC_MAX_PEERS=%d", npeers, cfg->rc_max_peers);
        return VC_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < npeers; i++)
        if (peers[i] < 0 || peers[i] >= r->size || peers[i] == r->me) {
            LOG_ERR("rc: asked to serve rank %d (self or out of range)", peers[i]);
            return VC_ERR_ARG;
        }
    return VC_SUCCESS;
}

static void rc_close(net_t *n)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r)
        return;
    if (r->fb)
        r->fb->base.ops->close(&r->fb->base);
    for (int p = 0; r->peer && p < r->size; p++)
        if (r->peer[p].qp)
            ibv_destroy_qp(r->peer[p].qp);
    /* gets still in flight: nobody will be told; their MRs go first */
    LIST_FOR_EACH_SAFE(n, nx, &r->live) {
        rc_get_t *g = LIST_ENTRY(n, rc_get_t, live_link);
        rc_reg_put(r, g->reg);
        free(g);
    }
    rc_reg_close(r);
    rc_hs_close(r);
    if (r->srq)
        ibv_destroy_srq(r->srq);
    if (r->cq)
        ibv_destroy_cq(r->cq);
    for (int i = 0; i < r->nslab; i++) {
        ibv_dereg_mr(r->slab[i].mr);
        free(r->slab[i].buf);
    }
    free(r->slab);
    if (r->tx_mr)
        ibv_dereg_mr(r->tx_mr);
    net_vdev_put(r->dev);     /* after the fallback's and our own QPs and MRs */
    free(r->tx_buf);
    free(r->tx_free);
    free(r->op);
    free(r->peer);
    free(r->qpn_key);
    free(r->qpn_rank);
    free(r);
}
