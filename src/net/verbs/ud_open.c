/*
 * ud_open.c -- open the UD transport (a reference to the shared device,
 * CQ, one UD QP, buffers, endpoint blob), connect peers lazily, report dead
 * peers, close.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "boot/boot.h"
#include "net/verbs/ud.h"

static void ud_close(net_t *n);

static const net_ops_t ud_ops = {
    .send = ud_send,
    .progress = ud_progress,
    .check_peer = ud_check_peer,
    .quiesce = ud_quiesce,
    .close = ud_close,
};

/* The coarse clock (a few ms resolution) is read from memory the kernel
 * keeps current; the precise one reads the clocksource, which in the
 * SoftRoCE guest is an emulated HPET costing microseconds per read.
 * Resend and dead-peer timeouts are milliseconds to seconds, so coarse is
 * enough. */
uint64_t ud_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ud_peer_fail(ud_net_t *u, int peer, const char *fmt, ...)
{
    ud_peer_t *p = &u->peer[peer];
    if (p->state == UD_P_DEAD)
        return;
    p->state = UD_P_DEAD;
    char text[160], why[224];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(why, sizeof why, "rank %d -> rank %d over UD: %s", u->me, peer, text);
    LOG_ERR("ud: %s", why);
    /* nothing will ever acknowledge what is queued for it */
    ud_tx_list_drop(u, p);
    for (uint32_t s = p->una; s != p->next_seq; s++) {
        int i = p->win[s & p->wmask];
        u->slot[i].acked = 1;
        if (u->slot[i].posted == 0)
            ud_slot_put(u, i);
        u->unacked--;
    }
    p->una = p->next_seq;
    /* up: the layers above fail what involves the peer (never the job) */
    if (u->base.up.peer_failed)
        u->base.up.peer_failed(u->base.up.arg, peer, why);
}

/* Make the peer's address handle from its endpoint blob. VC_SUCCESS, or
 * the peer is marked dead with the reason. */
int ud_peer_set(ud_net_t *u, int peer, const ud_blob_t *b)
{
    ud_peer_t *p = &u->peer[peer];
    if (p->state == UD_P_READY)
        return VC_SUCCESS;
    if (p->state == UD_P_DEAD)
        return VC_ERR_PEER_FAILED;
    if (b->magic != UD_BLOB_MAGIC) {
        ud_peer_fail(u, peer, "its endpoint blob is malformed (different vcoll versions "
                     "in one job?)");
        return VC_ERR_TRANSPORT;
    }
    if (b->max_packet != u->base.max_packet) {
        ud_peer_fail(u, peer, "it takes %u-byte packets, we take %zu (different vcoll "
                     "versions in one job?)", b->max_packet, u->base.max_packet);
        return VC_ERR_ARG;
    }
    if (b->link_layer != (uint8_t)u->port.link_layer) {
        ud_peer_fail(u, peer, "we are on %s, it is on %s: no path between them",
                     net_vdev_link_layer_str(u->port.link_layer),
                     net_vdev_link_layer_str(b->link_layer));
        return VC_ERR_TRANSPORT;
    }
    struct ibv_ah_attr a;
    net_vport_ah_attr(&u->port, b->lid, b->gid, &a);
    p->ah = ibv_create_ah(u->pd, &a);
    if (!p->ah) {
        char g[64];
        net_vdev_gid_str((const union ibv_gid *)b->gid, g, sizeof g);
        ud_peer_fail(u, peer, "ibv_create_ah (LID %u, GID %s) on %s:%d failed: %s",
                     b->lid, g, u->port.dev, u->port.port, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    /* The pair's MTU is the smaller of the two: the larger end's
       datagrams would not reach the smaller one. Fragment size and window
       follow from it, computed alike at both ends, so a packet always fits
       the window its sender uses and the receiver keeps (a window sized
       from the larger MTU alone was smaller than one packet in small
       fragments: its sender waited for room forever). */
    uint32_t mtu = (uint32_t)net_vdev_mtu_bytes((enum ibv_mtu)b->mtu);
    if (mtu == 0 || mtu > u->mtu)
        mtu = u->mtu;
    uint32_t frag = mtu - (uint32_t)sizeof(ud_hdr_t);
    uint32_t per_packet = (uint32_t)((u->base.max_packet + frag - 1) / frag);
    if ((int)per_packet + UD_CTRL_RESERVE > u->sq_depth ||
        (int)per_packet + UD_CTRL_RESERVE > u->tx_count) {
        ud_peer_fail(u, peer, "its MTU of %u bytes makes a packet %u fragments, more than "
                     "our send queue (%d) or send buffers (%d) hold", mtu, per_packet,
                     u->sq_depth, u->tx_count);
        return VC_ERR_UNSUPPORTED;
    }
    uint32_t w = ud_window_frags(u->env->cfg->ud_window, mtu, u->base.max_packet);
    if (!p->win && !(p->win = malloc(w * sizeof *p->win))) {
        ud_peer_fail(u, peer, "out of memory for its send window");
        return VC_ERR_NOMEM;
    }
    p->wsize = w;
    p->wmask = w - 1;
    p->qpn = b->qpn;
    memcpy(p->gid, b->gid, 16);
    p->frag = frag;
    const boot_info_t *boot = u->env->boot;
    p->pid = boot->node_of && boot->node_of[peer] == boot->node_id ? (pid_t)b->pid : 0;
    p->rto_ns = u->rto_base_ns;
    p->state = UD_P_READY;
    return VC_SUCCESS;
}

/* On the first packet to or from a peer: its published blob, or (fallback
 * for RC, nothing published) NET_AGAIN until the RC handshake introduced
 * it; a datagram from it before then is dropped and resent by its sender. */
int ud_peer_ready(ud_net_t *u, int peer)
{
    ud_peer_t *p = &u->peer[peer];
    if (p->state == UD_P_READY)
        return VC_SUCCESS;
    if (p->state == UD_P_DEAD)
        return VC_ERR_PEER_FAILED;
    if (u->introduced)
        return NET_AGAIN;
    ud_blob_t b;
    size_t len = sizeof b;
    if (boot_get(u->env->boot, peer, UD_BLOB_KEY, &b, &len)) {
        net_peer_missing(u->env, peer, "ud");
        ud_peer_fail(u, peer, "its UD endpoint is not published");
        return VC_ERR_TRANSPORT;
    }
    if (len != sizeof b) {
        ud_peer_fail(u, peer, "its endpoint blob is malformed (%zu bytes; different "
                     "vcoll versions in one job?)", len);
        return VC_ERR_TRANSPORT;
    }
    return ud_peer_set(u, peer, &b);
}

static int ud_alloc_resources(ud_net_t *u)
{
    const vc_config_t *cfg = u->env->cfg;
    struct ibv_device_attr da;
    if (ibv_query_device(u->ctx, &da)) {
        LOG_ERR("ud: ibv_query_device(%s): %s", u->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    u->rx_count = cfg->ib_rx_depth < da.max_qp_wr ? cfg->ib_rx_depth : da.max_qp_wr;
    /* one QP carries every peer's traffic: give it twice an RC QP's queue,
       and at least one window plus the control reserve, so that a peer's
       window is never cut short by the queue (a 64 KiB packet is 67
       fragments at a 1 KiB MTU) */
    long sq = 2L * cfg->ib_tx_depth;
    if (sq < (long)u->wsize + 2 * UD_CTRL_RESERVE)
        sq = (long)u->wsize + 2 * UD_CTRL_RESERVE;
    u->sq_depth = sq < da.max_qp_wr ? (int)sq : da.max_qp_wr;
    if (u->sq_depth <= 2 * UD_CTRL_RESERVE) {
        LOG_ERR("ud: send queue of %d on %s is too small", u->sq_depth, u->port.dev);
        return VC_ERR_UNSUPPORTED;
    }
    if (u->rx_count + u->sq_depth > da.max_cqe) {
        LOG_ERR("ud: CQ of %s too small (max_cqe %d) for %d receives + %d sends",
                u->port.dev, da.max_cqe, u->rx_count, u->sq_depth);
        return VC_ERR_UNSUPPORTED;
    }
    /* two full windows' worth, shared by all peers; beyond that senders wait */
    long tx = 2L * u->wsize + UD_CTRL_RESERVE;
    if (tx < u->sq_depth)
        tx = u->sq_depth;
    u->tx_count = (int)tx;

    if (!(u->cq = ibv_create_cq(u->ctx, u->rx_count + u->sq_depth, NULL, NULL, 0))) {
        LOG_ERR("ud: ibv_create_cq(%d) on %s: %s", u->rx_count + u->sq_depth,
                u->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    u->qp = net_verbs_ud_qp(u->pd, u->cq, u->port.port, u->qkey, u->sq_depth, u->rx_count,
                            &u->max_inline);
    if (!u->qp) {
        LOG_ERR("ud: UD QP on %s:%d: %s", u->port.dev, u->port.port, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    u->sq_free = u->sq_depth;
    uint32_t rn = 1;
    while (rn < (uint32_t)u->sq_depth)
        rn <<= 1;
    if (!(u->sq_ring = calloc(rn, sizeof *u->sq_ring)))
        return VC_ERR_NOMEM;
    u->sq_mask = rn - 1;

    u->rx_stride = (UD_GRH_BYTES + u->mtu + 63) & ~(size_t)63;
    size_t rxb = u->rx_stride * (size_t)u->rx_count;
    size_t txb = (size_t)u->mtu * (size_t)u->tx_count;
    u->rx_buf = aligned_alloc(4096, (rxb + 4095) & ~(size_t)4095);
    u->tx_buf = aligned_alloc(4096, (txb + 4095) & ~(size_t)4095);
    u->slot = calloc((size_t)u->tx_count, sizeof *u->slot);
    if (!u->rx_buf || !u->tx_buf || !u->slot)
        return VC_ERR_NOMEM;
    u->rx_mr = ibv_reg_mr(u->pd, u->rx_buf, rxb, IBV_ACCESS_LOCAL_WRITE);
    u->tx_mr = ibv_reg_mr(u->pd, u->tx_buf, txb, 0);
    if (!u->rx_mr || !u->tx_mr) {
        LOG_ERR("ud: registering %zu bytes of packet buffers on %s failed: %s "
                "(ulimit -l?)", rxb + txb, u->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    u->tx_free = -1;
    for (int i = u->tx_count - 1; i >= 0; i--) {
        u->slot[i].next_free = u->tx_free;
        u->tx_free = i;
    }
    u->tx_nfree = u->tx_count;
    for (int i = 0; i < u->rx_count; i++) {
        int rc = ud_post_recv(u, i);
        if (rc)
            return rc;
    }
    return VC_SUCCESS;
}

void ud_blob_fill(const ud_net_t *u, ud_blob_t *b)
{
    memset(b, 0, sizeof *b);
    b->magic = UD_BLOB_MAGIC;
    b->qpn = u->qp->qp_num;
    b->lid = u->port.lid;
    b->mtu = (uint8_t)u->port.active_mtu;
    b->link_layer = (uint8_t)u->port.link_layer;
    memcpy(b->gid, u->port.gid.raw, 16);
    b->gid_index = u->port.gid_index;
    b->max_packet = (uint32_t)u->base.max_packet;
    b->pid = (int32_t)getpid();
}

/* Everything but making the endpoint known: device, queues, buffers; on
 * the given device (RC's), or the shared one (dev NULL). */
static int ud_create(const net_env_t *env, const net_upcalls_t *up, net_vdev_t *dev,
                     ud_net_t **out)
{
    *out = NULL;
    ud_net_t *u = calloc(1, sizeof *u);
    if (!u)
        return VC_ERR_NOMEM;
    list_init(&u->tx_list);
    u->base.ops = &ud_ops;
    u->base.name = "ud";
    u->base.up = *up;
    const vc_config_t *cfg = env->cfg;
    u->env = env;
    u->me = env->rank;
    u->size = env->size;
    u->loss = cfg->ud_loss;
    u->rto_base_ns = cfg->ud_rto * 1e9 < 1000 ? 1000 : (uint64_t)(cfg->ud_rto * 1e9);
    u->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)env->rank << 17) ^ (uint64_t)getpid();
    u->base.max_packet = UD_MAX_PACKET;     /* eager stays at the eager limit (p2p) */
    u->qkey = net_verbs_qkey(env);

    int rc = VC_SUCCESS;
    if (dev)
        u->dev = net_vdev_hold(dev);
    else if ((rc = net_vdev_get(env, "ud", &u->dev)))
        goto fail;
    u->ctx = u->dev->ctx;
    u->pd = u->dev->pd;
    u->port = u->dev->port;
    snprintf(u->why, sizeof u->why, "%s", dev ? "RC's port" : u->dev->why);
    u->mtu = (uint32_t)net_vdev_mtu_bytes(u->port.active_mtu);
    if (u->mtu < 256) {
        LOG_ERR("ud: %s:%d reports path MTU %u", u->port.dev, u->port.port, u->mtu);
        rc = VC_ERR_TRANSPORT;
        goto fail;
    }
    /* bytes in flight (bandwidth x delay, VCOLL_UD_WINDOW) as whole
       fragments; at least two whole packets, so a sender streams while the
       first is acknowledged (and a packet always fits) */
    uint32_t w = ud_window_frags(cfg->ud_window, u->mtu, u->base.max_packet);
    u->wsize = w;
    u->wmask = w - 1;

    u->peer = calloc((size_t)env->size, sizeof *u->peer);
    if (!u->peer) {
        rc = VC_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < env->size; i++)
        u->peer[i].rank = i;
    if ((rc = ud_alloc_resources(u)))
        goto fail;
    *out = u;
    return VC_SUCCESS;
fail:
    ud_close(&u->base);
    return rc;
}

static void ud_log_open(const ud_net_t *u, const char *role)
{
    char gid[64];
    net_vdev_gid_str(&u->port.gid, gid, sizeof gid);
    LOG_INFO("ud%s: %s:%d (%s, MTU %u, GID[%d] %s), QPN 0x%x, window %u, %d receive + %d "
             "send buffers, inline %u; %s", role, u->port.dev, u->port.port,
             net_vdev_link_layer_str(u->port.link_layer), u->mtu, u->port.gid_index,
             u->port.gid_index >= 0 ? gid : "-", u->qp->qp_num, u->wsize, u->rx_count,
             u->tx_count, u->max_inline, u->why);
}

int net_ud_open(const net_env_t *env, const net_upcalls_t *up, net_t **out)
{
    if (!env || !up || !out)
        return VC_ERR_ARG;
    *out = NULL;
    ud_net_t *u;
    int rc = ud_create(env, up, NULL, &u);
    if (rc)
        return rc;
    ud_blob_t b;
    ud_blob_fill(u, &b);
    if ((rc = boot_put(env->boot, UD_BLOB_KEY, &b, sizeof b))) {
        ud_close(&u->base);
        return rc;
    }
    ud_log_open(u, "");
    *out = &u->base;
    return VC_SUCCESS;
}

int ud_open_fallback(const net_env_t *env, const net_upcalls_t *up, net_vdev_t *dev,
                     ud_net_t **out)
{
    int rc = ud_create(env, up, dev, out);
    if (rc)
        return rc;
    (*out)->introduced = 1;
    ud_log_open(*out, " (for the peers RC could not connect)");
    return VC_SUCCESS;
}

static void ud_close(net_t *n)
{
    ud_net_t *u = (ud_net_t *)n;
    if (!u)
        return;
    if (u->qp)
        LOG_DEBUG("ud: %llu fragments sent, %llu received, %llu resent, %llu duplicates, "
                  "%llu out of order, %llu ACKs, %llu NAKs, %llu dropped on purpose",
                  (unsigned long long)u->n_tx, (unsigned long long)u->n_rx,
                  (unsigned long long)u->n_resent, (unsigned long long)u->n_dup,
                  (unsigned long long)u->n_ooo, (unsigned long long)u->n_acks,
                  (unsigned long long)u->n_naks, (unsigned long long)u->n_dropped);
    if (u->qp)
        ibv_destroy_qp(u->qp);
    for (int p = 0; u->peer && p < u->size; p++) {
        if (u->peer[p].ah)
            ibv_destroy_ah(u->peer[p].ah);
        free(u->peer[p].win);
        free(u->peer[p].ras.buf);
        ud_ooo_free(&u->peer[p].ooo);
    }
    if (u->cq)
        ibv_destroy_cq(u->cq);
    if (u->rx_mr)
        ibv_dereg_mr(u->rx_mr);
    if (u->tx_mr)
        ibv_dereg_mr(u->tx_mr);
    net_vdev_put(u->dev);
    free(u->rx_buf);
    free(u->tx_buf);
    free(u->slot);
    free(u->sq_ring);
    free(u->ras_spare);
    free(u->peer);
    free(u);
}
