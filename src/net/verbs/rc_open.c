/*
 * rc_open.c -- open the RC transport (device, PD, CQ, SRQ, QPs, endpoint
 * blob), connect it after the job's fence, and close it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/ctx.h"
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
    .close = rc_close,
};

/* Ranks this process needs a QP for. Mirrors the core: every other rank when
   VCOLL_NET=rc forces verbs, else only ranks on other nodes. */
static int rc_is_candidate(const struct vc_ctx *c, int r)
{
    if (r == c->rank)
        return 0;
    if (c->cfg.net == CFG_NET_RC)
        return 1;
    return c->boot.node_of && c->boot.node_of[r] != c->boot.node_id;
}

/* Size queues for this job and the device's limits. */
static int rc_size_queues(rc_net_t *r, const struct ibv_device_attr *da)
{
    const vc_config_t *cfg = &r->c->cfg;
    int np = r->ncand > 0 ? r->ncand : 1;
    int credits = cfg->ib_rx_depth / np - RC_CREDIT_RESERVE;
    if (credits < 4)
        credits = 4;          /* below this the window stalls every few packets */
    if (credits > RC_MAX_CREDITS)
        credits = RC_MAX_CREDITS;
    long srq = (long)np * (credits + RC_CREDIT_RESERVE);
    if (srq > da->max_srq_wr) {
        credits = da->max_srq_wr / np - RC_CREDIT_RESERVE;
        srq = (long)np * (credits + RC_CREDIT_RESERVE);
    }
    if (credits < 2) {
        LOG_ERR("rc: %d peers need more receive buffers than %s's SRQ holds "
                "(max_srq_wr %d)", np, r->port.dev, da->max_srq_wr);
        return VC_ERR_UNSUPPORTED;
    }
    r->credits = credits;
    r->rx_count = (int)srq;

    r->sq_depth = cfg->ib_tx_depth < da->max_qp_wr ? cfg->ib_tx_depth : da->max_qp_wr;
    long ops = (long)np * r->sq_depth;
    if (ops > 8192)
        ops = 8192;           /* beyond this, sends just wait for completions */
    if (ops + r->rx_count > da->max_cqe) {
        ops = da->max_cqe - r->rx_count;
        if (ops < 16) {
            LOG_ERR("rc: CQ of %s too small (max_cqe %d) for %d receive buffers",
                    r->port.dev, da->max_cqe, r->rx_count);
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
    if (!(r->pd = ibv_alloc_pd(r->ctx))) {
        LOG_ERR("rc: ibv_alloc_pd(%s): %s", r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    if (!(r->cq = ibv_create_cq(r->ctx, r->rx_count + r->op_count, NULL, NULL, 0))) {
        LOG_ERR("rc: ibv_create_cq(%d) on %s: %s", r->rx_count + r->op_count,
                r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    struct ibv_srq_init_attr sa;
    memset(&sa, 0, sizeof sa);
    sa.attr.max_wr = (uint32_t)r->rx_count;
    sa.attr.max_sge = 1;
    if (!(r->srq = ibv_create_srq(r->pd, &sa))) {
        LOG_ERR("rc: ibv_create_srq(%d) on %s: %s", r->rx_count, r->port.dev,
                strerror(errno));
        return VC_ERR_TRANSPORT;
    }

    size_t mp = r->base.max_packet;
    r->rx_buf = aligned_alloc(4096, ((mp * (size_t)r->rx_count) + 4095) & ~(size_t)4095);
    r->tx_buf = aligned_alloc(4096, ((mp * (size_t)r->tx_count) + 4095) & ~(size_t)4095);
    r->tx_free = malloc(sizeof(int) * (size_t)r->tx_count);
    r->op = calloc((size_t)r->op_count, sizeof *r->op);
    if (!r->rx_buf || !r->tx_buf || !r->tx_free || !r->op)
        return VC_ERR_NOMEM;
    /* receive buffers: the NIC writes them locally; nothing remote */
    r->rx_mr = ibv_reg_mr(r->pd, r->rx_buf, mp * (size_t)r->rx_count,
                          IBV_ACCESS_LOCAL_WRITE);
    r->tx_mr = ibv_reg_mr(r->pd, r->tx_buf, mp * (size_t)r->tx_count, 0);
    if (!r->rx_mr || !r->tx_mr) {
        LOG_ERR("rc: registering %zu bytes of eager buffers on %s failed: %s "
                "(ulimit -l?)", mp * (size_t)(r->rx_count + r->tx_count),
                r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    for (int i = 0; i < r->tx_count; i++)
        r->tx_free[i] = i;
    r->tx_nfree = r->tx_count;
    for (int i = 0; i < r->op_count; i++)
        r->op[i].next_free = i + 1 < r->op_count ? i + 1 : -1;
    r->op_free = 0;
    for (int i = 0; i < r->rx_count; i++)
        if ((rc = rc_post_recv(r, i)))
            return rc;
    return VC_SUCCESS;
}

static int rc_publish(rc_net_t *r)
{
    size_t len = sizeof(rc_blob_hdr_t) + (size_t)r->size * sizeof(rc_blob_qp_t);
    char *blob = calloc(1, len);
    if (!blob)
        return VC_ERR_NOMEM;
    rc_blob_hdr_t *h = (rc_blob_hdr_t *)blob;
    rc_blob_qp_t *q = (rc_blob_qp_t *)(h + 1);
    h->magic = RC_BLOB_MAGIC;
    h->nranks = (uint32_t)r->size;
    h->lid = r->port.lid;
    h->mtu = (uint8_t)r->port.active_mtu;
    h->link_layer = (uint8_t)r->port.link_layer;
    memcpy(h->gid, r->port.gid.raw, 16);
    h->gid_index = r->port.gid_index;
    h->max_packet = (uint32_t)r->base.max_packet;
    h->credits = (uint32_t)r->credits;
    h->rd_atom = (uint32_t)r->rd_atom;
    h->pid = (int32_t)getpid();
    for (int p = 0; p < r->size; p++)
        if (r->peer[p].qp) {
            q[p].qpn = r->peer[p].qp->qp_num;
            q[p].psn = r->peer[p].psn;
        }
    int rc = boot_put(RC_BLOB_KEY, blob, len);
    free(blob);
    return rc;
}

int net_rc_open(struct vc_ctx *c, const net_upcalls_t *up, net_t **out)
{
    if (!c || !up || !out)
        return VC_ERR_ARG;
    *out = NULL;
    int ncand = 0;
    for (int p = 0; p < c->size; p++)
        ncand += rc_is_candidate(c, p);
    if (c->cfg.rc_max_peers > 0 && ncand > c->cfg.rc_max_peers) {
        LOG_INFO("rc: %d peers exceed VCOLL_RC_MAX_PEERS=%d; not building an RC mesh",
                 ncand, c->cfg.rc_max_peers);
        return VC_ERR_UNSUPPORTED;
    }

    rc_net_t *r = calloc(1, sizeof *r);
    if (!r)
        return VC_ERR_NOMEM;
    r->base.ops = &rc_ops;
    r->base.name = "rc";
    r->base.up = *up;
    r->c = c;
    r->me = c->rank;
    r->size = c->size;
    r->ncand = ncand;
    r->fault_peer = -1;
    if (c->cfg.fault_rc_err[0]) {
        int a, b, n;
        char extra;
        if (sscanf(c->cfg.fault_rc_err, "%d>%d@%d%c", &a, &b, &n, &extra) != 3 ||
            a < 0 || a >= c->size || b < 0 || b >= c->size || a == b || n < 1) {
            LOG_ERR("VCOLL_FAULT_RC_ERR=%s: expected A>B@N (ranks A != B below %d, N >= 1)",
                    c->cfg.fault_rc_err, c->size);
            free(r);
            return VC_ERR_ARG;
        }
        if (a == c->rank) {
            r->fault_peer = b;
            r->fault_after = n;
        }
    }
    /* one eager message (p2p header + up to VCOLL_EAGER_LIMIT) per packet,
       capped so the SRQ's memory stays bounded */
    r->base.max_packet = net_verbs_max_packet(c->cfg.eager_limit);

    r->peer = calloc((size_t)c->size, sizeof *r->peer);
    uint32_t hs = 4;
    while (hs < 2u * (uint32_t)(ncand + 1))
        hs <<= 1;
    r->qpn_key = calloc(hs, sizeof *r->qpn_key);
    r->qpn_rank = malloc(hs * sizeof *r->qpn_rank);
    r->qpn_mask = hs - 1;
    int rc = VC_ERR_NOMEM;
    if (!r->peer || !r->qpn_key || !r->qpn_rank)
        goto fail;
    for (uint32_t i = 0; i < hs; i++)
        r->qpn_rank[i] = -1;

    if (ncand > 0) {
        if ((rc = net_vport_pick(c, "rc", &r->port, r->why, sizeof r->why)) ||
            (rc = net_vport_open(&r->port, "rc", &r->ctx)) ||
            (rc = rc_alloc_resources(r)) || (rc = rc_reg_open(r)))
            goto fail;
        for (int p = 0; p < c->size; p++)
            if (rc_is_candidate(c, p) && (rc = rc_qp_create(r, p)))
                goto fail;
        char gid[64];
        net_vdev_gid_str(&r->port.gid, gid, sizeof gid);
        LOG_INFO("rc: %s:%d (%s, MTU %d, LID %u, GID[%d] %s %s), %d QPs, %d credits/peer, "
                 "SRQ %d x %zu B, inline %u; %s", r->port.dev, r->port.port,
                 net_vdev_link_layer_str(r->port.link_layer),
                 net_vdev_mtu_bytes(r->port.active_mtu), r->port.lid,
                 r->port.gid_index, r->port.gid_index >= 0 ? gid : "-",
                 r->port.gid_index >= 0 ? net_vdev_gid_type_str(r->port.gid_type) : "",
                 ncand, r->credits, r->rx_count, r->base.max_packet, r->max_inline,
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

int net_rc_connect(net_t *n, struct vc_ctx *c, const int *peers, int npeers)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r || !c || npeers < 0 || (npeers && !peers))
        return VC_ERR_ARG;
    if (c->cfg.rc_max_peers > 0 && npeers > c->cfg.rc_max_peers) {
        LOG_INFO("rc: %d peers exceed VCOLL_RC_MAX_PEERS=%d", npeers, c->cfg.rc_max_peers);
        return VC_ERR_UNSUPPORTED;
    }
    size_t cap = sizeof(rc_blob_hdr_t) + (size_t)r->size * sizeof(rc_blob_qp_t);
    char *blob = malloc(cap);
    if (!blob)
        return VC_ERR_NOMEM;
    int rc = VC_SUCCESS;
    for (int i = 0; i < npeers && rc == VC_SUCCESS; i++) {
        int p = peers[i];
        if (p < 0 || p >= r->size || !r->peer[p].qp) {
            LOG_ERR("rc: asked to connect to rank %d, for which no QP was created "
                    "(self, out of range, or served by another transport)", p);
            rc = VC_ERR_ARG;
            break;
        }
        size_t len = cap;
        if ((rc = boot_get(p, RC_BLOB_KEY, blob, &len))) {
            net_peer_missing(c, p, "rc");
            break;
        }
        const rc_blob_hdr_t *h = (const rc_blob_hdr_t *)blob;
        const rc_blob_qp_t *q = (const rc_blob_qp_t *)(h + 1);
        if (len < sizeof *h || h->magic != RC_BLOB_MAGIC || h->nranks != (uint32_t)r->size ||
            len < sizeof *h + h->nranks * sizeof *q) {
            LOG_ERR("rc: rank %d's endpoint blob is malformed (%zu bytes; different "
                    "vcoll versions in one job?)", p, len);
            rc = VC_ERR_TRANSPORT;
        } else if (q[r->me].qpn == 0) {
            LOG_ERR("rc: rank %d has no QP for rank %d (it uses another transport "
                    "for us: VCOLL_NET differs between ranks?)", p, r->me);
            rc = VC_ERR_TRANSPORT;
        } else if (h->link_layer != (uint8_t)r->port.link_layer) {
            LOG_ERR("rc: rank %d is on %s, rank %d on %s: RC cannot connect them",
                    r->me, net_vdev_link_layer_str(r->port.link_layer), p,
                    net_vdev_link_layer_str(h->link_layer));
            rc = VC_ERR_TRANSPORT;
        } else if (h->max_packet != r->base.max_packet) {
            LOG_ERR("rc: rank %d uses %u-byte packets, rank %d %zu (VCOLL_EAGER_LIMIT "
                    "must be the same on every rank)", p, h->max_packet, r->me,
                    r->base.max_packet);
            rc = VC_ERR_ARG;
        } else {
            rc = rc_qp_connect(r, p, h, &q[r->me]);
            if (c->boot.node_of && c->boot.node_of[p] == c->boot.node_id)
                r->peer[p].pid = (pid_t)h->pid;
        }
    }
    free(blob);
    if (rc == VC_SUCCESS) {
        /* QPs nobody asked for would only hold resources */
        int keep = 0;
        for (int p = 0; p < r->size; p++) {
            if (r->peer[p].qp && !r->peer[p].connected) {
                ibv_destroy_qp(r->peer[p].qp);
                r->peer[p].qp = NULL;
            }
            keep += r->peer[p].connected;
        }
        LOG_DEBUG("rc: connected to %d peers", keep);
    }
    return rc;
}

static void rc_close(net_t *n)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r)
        return;
    for (int p = 0; r->peer && p < r->size; p++)
        if (r->peer[p].qp)
            ibv_destroy_qp(r->peer[p].qp);
    /* gets still in flight: nobody will be told; their MRs go first */
    for (rc_get_t *g = r->live, *nx; g; g = nx) {
        nx = g->lnext;
        rc_reg_put(r, g->reg);
        free(g);
    }
    rc_reg_close(r);
    if (r->srq)
        ibv_destroy_srq(r->srq);
    if (r->cq)
        ibv_destroy_cq(r->cq);
    if (r->rx_mr)
        ibv_dereg_mr(r->rx_mr);
    if (r->tx_mr)
        ibv_dereg_mr(r->tx_mr);
    if (r->pd)
        ibv_dealloc_pd(r->pd);
    if (r->ctx)
        ibv_close_device(r->ctx);
    free(r->rx_buf);
    free(r->tx_buf);
    free(r->tx_free);
    free(r->op);
    free(r->peer);
    free(r->qpn_key);
    free(r->qpn_rank);
    free(r);
}
