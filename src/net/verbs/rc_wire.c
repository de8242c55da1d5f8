/*
 * rc_wire.c -- RC connections on demand: the wire-up UD QP, the
 * REQ / REP / RTU handshake, and the move of a pair to UD (UDX) or its
 * refusal (NAK) when no QP can be made for it (the protocol, and why it
 * runs over UD, are in rc.h).
 *
 * A peer that never answers. The REQ (or UDX) is retransmitted with a doubling
 * interval (lost datagrams), and the verdict comes from what can tell a
 * dead peer from a busy one: a peer on this node is dead when its pid is
 * gone; a peer anywhere is dead when the liveness detector (hb.h, whose
 * thread answers even while the application computes) has heard nothing
 * for VCOLL_PEER_TIMEOUT seconds. A silent REQ alone proves nothing: the
 * peer may compute for an hour before its next vcoll call answers it.
 * Without a detector (VCOLL_PEER_TIMEOUT=0 disables it, or it could not
 * start), an unanswered REQ fails the peer after VCOLL_PEER_TIMEOUT
 * seconds, or 30 s if that is 0. A failed peer fails the operations that
 * address it with VC_ERR_PEER_FAILED, naming the rank.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "boot/boot.h"
#include "net/verbs/hb.h"
#include "net/verbs/rc.h"

#define HS_RECV_WRID (1ull << 62)
#define HS_NO_DETECTOR_S 30.0

double rc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int hs_post_recv(rc_net_t *r, int i)
{
    return net_verbs_post_recv(r->hs_qp, HS_RECV_WRID | (uint64_t)i,
                               r->hs_buf + (size_t)i * r->hs_stride, (uint32_t)r->hs_stride,
                               r->hs_mr->lkey);
}

int rc_hs_open(rc_net_t *r)
{
    r->qkey = net_verbs_qkey(r->env);
    if (!(r->hs_cq = ibv_create_cq(r->ctx, RC_HS_RX + RC_HS_TX, NULL, NULL, 0))) {
        LOG_ERR("rc: wire-up CQ on %s: %s", r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    if (!(r->hs_qp = net_verbs_ud_qp(r->pd, r->hs_cq, r->port.port, r->qkey, RC_HS_TX,
                                     RC_HS_RX, NULL))) {
        LOG_ERR("rc: wire-up UD QP on %s:%d: %s", r->port.dev, r->port.port, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    net_ud_slots_t u = {0};
    int rc = net_verbs_ud_slots(&u, r->pd, r->hs_qp, sizeof(rc_hs_msg_t), RC_HS_RX, RC_HS_TX,
                                HS_RECV_WRID, "rc", r->port.dev);
    r->hs_buf = u.buf;
    r->hs_mr = u.mr;
    r->hs_stride = u.stride;
    if (rc)
        return rc;
    r->hs_tx_free = RC_HS_TX;
    return VC_SUCCESS;
}

void rc_hs_close(rc_net_t *r)
{
    if (r->hs_qp)
        ibv_destroy_qp(r->hs_qp);
    for (int i = 0; r->hs_ah && i < r->size; i++)
        if (r->hs_ah[i])
            ibv_destroy_ah(r->hs_ah[i]);
    if (r->hs_cq)
        ibv_destroy_cq(r->hs_cq);
    if (r->hs_mr)
        ibv_dereg_mr(r->hs_mr);
    free(r->hs_buf);
    free(r->hs_ah);
    free(r->hs_qpn);
    free(r->connecting);
}

/* The peer's endpoint blob, checked against ours. */
int rc_peer_blob(rc_net_t *r, int peer, rc_blob_t *b)
{
    size_t len = sizeof *b;
    if (boot_get(r->env->boot, peer, RC_BLOB_KEY, b, &len)) {
        net_peer_missing(r->env, peer, "rc");
        return VC_ERR_TRANSPORT;
    }
    if (len != sizeof *b || b->magic != RC_BLOB_MAGIC) {
        LOG_ERR("rc: rank %d's endpoint blob is malformed (%zu bytes; different "
                "vcoll versions in one job?)", peer, len);
        return VC_ERR_TRANSPORT;
    }
    if (b->link_layer != (uint8_t)r->port.link_layer) {
        LOG_ERR("rc: rank %d is on %s, rank %d on %s: RC cannot connect them", r->me,
                net_vdev_link_layer_str(r->port.link_layer), peer,
                net_vdev_link_layer_str(b->link_layer));
        return VC_ERR_TRANSPORT;
    }
    if (b->max_packet != r->base.max_packet) {
        LOG_ERR("rc: rank %d uses %u-byte packets, rank %d %zu (VCOLL_EAGER_LIMIT "
                "must be the same on every rank)", peer, b->max_packet, r->me,
                r->base.max_packet);
        return VC_ERR_ARG;
    }
    return VC_SUCCESS;
}

/* address handle to the peer's wire-up QP, made on first use */
static int hs_ah(rc_net_t *r, int peer, const rc_blob_t *b)
{
    if (r->hs_ah[peer])
        return VC_SUCCESS;
    struct ibv_ah_attr a;
    net_vport_ah_attr(&r->port, b->lid, b->gid, &a);
    if (!(r->hs_ah[peer] = ibv_create_ah(r->pd, &a))) {
        LOG_ERR("rc: no address handle for rank %d: %s", peer, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    r->hs_qpn[peer] = b->hs_qpn;
    return VC_SUCCESS;
}

/* REQ and REP carry our QP for the peer; UDX our fallback UD QP and arg
   (reason | RC_HS_ANSWER); NAK arg (the reason). */
static void hs_send(rc_net_t *r, int peer, uint32_t type, uint32_t arg)
{
    if (!r->hs_tx_free || !r->hs_ah[peer])
        return;         /* a datagram not sent is one lost: the REQ is retried */
    int slot = RC_HS_RX + r->hs_tx_next;
    r->hs_tx_next = (r->hs_tx_next + 1) % RC_HS_TX;
    rc_hs_msg_t *m = (rc_hs_msg_t *)(r->hs_buf + (size_t)slot * r->hs_stride);
    rc_peer_t *p = &r->peer[peer];
    *m = (rc_hs_msg_t){.magic = RC_HS_MAGIC, .type = type, .src = (uint32_t)r->me,
                       .dst = (uint32_t)peer, .psn = arg};
    if (type == RC_HS_REQ || type == RC_HS_REP) {
        m->qpn = p->qp->qp_num;
        m->psn = p->psn;
    } else if (type == RC_HS_UDX) {
        m->qpn = r->fb->qp->qp_num;
    }
    if (net_verbs_ud_send(r->hs_qp, (uint64_t)slot, m, sizeof *m, r->hs_mr->lkey,
                          r->hs_ah[peer], r->hs_qpn[peer], r->qkey) == 0)
        r->hs_tx_free--;
}

static int connecting_add(rc_net_t *r, int peer)
{
    if (r->nconnecting == r->capconnecting) {
        int n = r->capconnecting ? 2 * r->capconnecting : 16;
        int *v = realloc(r->connecting, (size_t)n * sizeof *v);
        if (!v)
            return VC_ERR_NOMEM;
        r->connecting = v;
        r->capconnecting = n;
    }
    r->connecting[r->nconnecting++] = peer;
    return VC_SUCCESS;
}

/* Blob and address handle for a peer first seen now (either side) */
static int peer_prepare(rc_net_t *r, int peer, rc_blob_t *b)
{
    int rc = rc_peer_blob(r, peer, b);
    return rc ? rc : hs_ah(r, peer, b);
}

/* This side keeps asking the peer (REQ or UDX) until it answers. */
static int start_asking(rc_net_t *r, int peer, int state)
{
    rc_peer_t *p = &r->peer[peer];
    if (!p->initiated) {
        int rc = connecting_add(r, peer);
        if (rc)
            return rc;
        p->initiated = 1;
        p->t_start = rc_now();
    }
    p->state = state;
    p->backoff = RC_HS_RETRY_S;
    p->t_next = rc_now() + p->backoff;
    return VC_SUCCESS;
}

static int fb_open(rc_net_t *r)
{
    return r->fb ? VC_SUCCESS : ud_open_fallback(r->env, &r->base.up, r->dev, &r->fb);
}

/* This side can make no QP for peer (no: RC_NO_*, why: the details).
 * VCOLL_NET=auto: the pair goes to UD (rc.h). VCOLL_NET=rc, or no UD
 * either: this side cannot reach the peer now or later, so it fails the
 * peer (the operations addressing it end with VC_ERR_PEER_FAILED) and
 * tells it with a NAK, whether or not it asked: a peer that only waits to
 * receive from us would otherwise wait for ever (it is alive, so the
 * liveness detector says nothing). A NAK is not retransmitted, but every
 * later REQ or UDX from the peer is answered with another (on_msg).
 * NET_AGAIN while the pair moves to UD, else VC_ERR_PEER_FAILED. */
static int refuse(rc_net_t *r, int peer, int no, const char *why)
{
    rc_peer_t *p = &r->peer[peer];
    p->no_why = no;
    if (r->env->cfg->net != CFG_NET_RC && fb_open(r) == VC_SUCCESS &&
        start_asking(r, peer, RC_S_UD_WAIT) == VC_SUCCESS) {
        LOG_INFO("rc: rank %d -> rank %d: over UD instead of RC: %s", r->me, peer, why);
        hs_send(r, peer, RC_HS_UDX, (uint32_t)no | RC_HS_ANSWER);
        return NET_AGAIN;
    }
    p->no_why = r->env->cfg->net == CFG_NET_RC ? no : RC_NO_UD;
    hs_send(r, peer, RC_HS_NAK, (uint32_t)p->no_why);
    /* the cause first: rc_peer_fail's line is bounded */
    char text[224];
    snprintf(text, sizeof text, "no RC QP (%s): %s", r->env->cfg->net == CFG_NET_RC
             ? "VCOLL_NET=rc, no fallback to UD" : "and no UD to fall back to", why);
    rc_peer_fail(r, peer, "connect", NULL, text);
    return VC_ERR_PEER_FAILED;
}

int rc_connect_start(rc_net_t *r, int peer)
{
    rc_peer_t *p = &r->peer[peer];
    rc_blob_t b;
    char why[160];
    int rc = peer_prepare(r, peer, &b);
    if (rc)
        return rc;      /* the operation fails; a later one tries again */
    int no = p->qp ? RC_NO_NONE : rc_qp_create(r, peer, why, sizeof why);
    if (no)
        return refuse(r, peer, no, why);
    if ((rc = start_asking(r, peer, RC_S_REQ)))
        return rc;
    hs_send(r, peer, RC_HS_REQ, 0);
    LOG_DEBUG("rc: rank %d -> rank %d: connecting (QP 0x%x)", r->me, peer, p->qp->qp_num);
    return NET_AGAIN;
}

/* The peer's UDX: it serves us over UD from now on; so do we. */
static void on_udx(rc_net_t *r, int src, const rc_hs_msg_t *m, const rc_blob_t *b)
{
    rc_peer_t *p = &r->peer[src];
    uint32_t no = m->psn & ~RC_HS_ANSWER;
    if (p->state == RC_S_WAIT || p->state == RC_S_UP) {
        LOG_WARN("rc: rank %d offers UD, but our QPs are paired; ignored", src);
        return;
    }
    if (p->state != RC_S_UD) {
        if (fb_open(r)) {
            char why[160];
            snprintf(why, sizeof why, "rank %d offers UD because %s", src,
                     no < RC_NO_COUNT ? rc_no_text[no] : "?");
            refuse(r, src, RC_NO_UD, why);
            return;
        }
        /* its UD QP is on the port its RC blob describes (ud_open_fallback) */
        ud_blob_t ub = {.magic = UD_BLOB_MAGIC, .qpn = m->qpn, .lid = b->lid, .mtu = b->mtu,
                        .link_layer = b->link_layer, .gid_index = b->gid_index,
                        .max_packet = UD_MAX_PACKET, .pid = b->pid};
        memcpy(ub.gid, b->gid, sizeof ub.gid);
        if (ud_peer_set(r->fb, src, &ub)) {
            p->dead = 1;        /* ud_peer_set told p2p */
            return;
        }
        if (p->state != RC_S_UD_WAIT)
            LOG_INFO("rc: rank %d -> rank %d: over UD instead of RC: rank %d says %s",
                     r->me, src, src, no < RC_NO_COUNT ? rc_no_text[no] : "?");
        rc_qp_drop(r, src);
        p->state = RC_S_UD;
        r->nfb++;
    }
    if (m->psn & RC_HS_ANSWER)
        hs_send(r, src, RC_HS_UDX, (uint32_t)p->no_why);
}

/* The peer's QP number arrived (REQ or REP): connect our one QP to it. */
static int pair_with(rc_net_t *r, int src, const rc_hs_msg_t *m, const rc_blob_t *b)
{
    rc_peer_t *p = &r->peer[src];
    if (p->state == RC_S_WAIT || p->state == RC_S_UP) {
        if (p->rqpn != m->qpn) {
            LOG_WARN("rc: rank %d offers QP 0x%x, but we are paired with 0x%x; ignored",
                     src, m->qpn, p->rqpn);
            return VC_ERR_TRANSPORT;
        }
        return VC_SUCCESS;
    }
    int rc = rc_qp_connect(r, src, b, m->qpn, m->psn);
    if (rc) {
        rc_peer_fail(r, src, "connect", NULL, "bringing the QP to RTS failed");
        return rc;
    }
    p->state = RC_S_WAIT;
    return VC_SUCCESS;
}

static void on_msg(rc_net_t *r, const struct ibv_wc *wc, const rc_hs_msg_t *m)
{
    int src = (int)m->src;
    rc_peer_t *p = &r->peer[src];
    rc_blob_t b;
    char why[160];
    if (peer_prepare(r, src, &b) || wc->src_qp != r->hs_qpn[src])
        return;         /* not from the QP the peer published: not its */
    if (p->dead) {
        /* refused (refuse): the peer still asks, so our NAK was lost */
        if (p->no_why && (m->type == RC_HS_REQ || m->type == RC_HS_UDX))
            hs_send(r, src, RC_HS_NAK, (uint32_t)p->no_why);
        return;
    }
    switch (m->type) {
    case RC_HS_REQ:
        if (p->state == RC_S_UD_WAIT || p->state == RC_S_UD) {
            /* we asked for UD (it had not heard yet): ask again */
            hs_send(r, src, RC_HS_UDX, (uint32_t)p->no_why |
                    (p->state == RC_S_UD_WAIT ? RC_HS_ANSWER : 0));
            break;
        }
        if (!p->qp) {
            int no = rc_qp_create(r, src, why, sizeof why);
            if (no) {
                refuse(r, src, no, why);
                break;
            }
        }
        if (pair_with(r, src, m, &b) == VC_SUCCESS)
            hs_send(r, src, RC_HS_REP, 0);   /* again, if our first REP was lost */
        break;
    case RC_HS_REP:
        /* its QP is ready for ours: ours is usable; tell it ours is too */
        if ((p->state == RC_S_REQ || p->state == RC_S_WAIT) &&
            pair_with(r, src, m, &b) == VC_SUCCESS && rc_send_rtu(r, src) == VC_SUCCESS) {
            p->state = RC_S_UP;
            LOG_DEBUG("rc: rank %d -> rank %d: connected in %.3f s", r->me, src,
                      p->initiated ? rc_now() - p->t_start : 0.0);
        }
        break;
    case RC_HS_UDX:
        on_udx(r, src, m, &b);
        break;
    case RC_HS_NAK:
        /* also when we never asked: we may be waiting to receive from it */
        if (p->state != RC_S_WAIT && p->state != RC_S_UP && p->state != RC_S_UD) {
            snprintf(why, sizeof why, "rank %d cannot accept an RC connection: %s", src,
                     m->psn < RC_NO_COUNT ? rc_no_text[m->psn] : "?");
            rc_peer_fail(r, src, "connect", NULL, why);
        }
        break;
    }
}

/* An initiated connection still down: retransmit, or give the verdict. */
static int still_waiting(rc_net_t *r, int peer, double t)
{
    rc_peer_t *p = &r->peer[peer];
    if (p->dead || p->state == RC_S_UP || p->state == RC_S_UD)
        return 0;
    if (t < p->t_next)
        return 1;
    net_hb_t *hb = r->env->hb;
    double limit = r->env->cfg->peer_timeout > 0 ? r->env->cfg->peer_timeout
                                                 : HS_NO_DETECTOR_S;
    char why[160] = "";
    int verdict = 0;
    if (net_pid_gone(p->pid))
        snprintf(why, sizeof why, "its process is gone");
    else if ((verdict = hb ? net_hb_dead(hb, peer) : 0) == NET_HB_DOWN)
        snprintf(why, sizeof why, "no answer to the connection request, and it gave "
                 "up on rank %d", r->me);
    else if (verdict)
        snprintf(why, sizeof why, "no answer to the connection request, and no "
                 "heartbeat for %.1f s (VCOLL_PEER_TIMEOUT)", net_hb_timeout(hb));
    else if (!hb && t - p->t_start > limit)
        snprintf(why, sizeof why, "no answer to the connection request for %.1f s",
                 t - p->t_start);
    if (why[0]) {
        rc_peer_fail(r, peer, "connect", NULL, why);
        return 0;
    }
    if (hb)
        net_hb_watch(hb, peer);
    if (hb && !p->warned && t - p->t_start > limit) {
        p->warned = 1;
        LOG_WARN("rc: rank %d is alive but has not answered rank %d's connection "
                 "request for %.1f s (busy outside vcoll?); still waiting", peer, r->me,
                 t - p->t_start);
    }
    if (p->state == RC_S_UD_WAIT)
        hs_send(r, peer, RC_HS_UDX, (uint32_t)p->no_why | RC_HS_ANSWER);
    else
        hs_send(r, peer, RC_HS_REQ, 0);
    p->backoff = p->backoff * 2 < RC_HS_RETRY_MAX_S ? p->backoff * 2 : RC_HS_RETRY_MAX_S;
    p->t_next = t + p->backoff;
    return 1;
}

int rc_hs_progress(rc_net_t *r)
{
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(r->hs_cq, 16, wc), events = 0;
    for (int k = 0; k < n; k++) {
        if (!(wc[k].wr_id & HS_RECV_WRID)) {
            r->hs_tx_free++;
            continue;
        }
        int i = (int)(wc[k].wr_id & ~HS_RECV_WRID);
        if (wc[k].status == IBV_WC_WR_FLUSH_ERR || i < 0 || i >= RC_HS_RX)
            continue;
        rc_hs_msg_t m;
        const char *slot = r->hs_buf + (size_t)i * r->hs_stride;
        if (wc[k].status == IBV_WC_SUCCESS && wc[k].byte_len >= RC_HS_GRH + sizeof m) {
            memcpy(&m, slot + RC_HS_GRH, sizeof m);
            if (m.magic == RC_HS_MAGIC && m.src < (uint32_t)r->size &&
                m.src != (uint32_t)r->me && m.dst == (uint32_t)r->me) {
                on_msg(r, &wc[k], &m);
                events++;
            }
        }
        hs_post_recv(r, i);
    }
    if (r->nconnecting) {
        double t = rc_now();
        for (int k = 0; k < r->nconnecting;)
            if (still_waiting(r, r->connecting[k], t))
                k++;
            else
                r->connecting[k] = r->connecting[--r->nconnecting];
    }
    return events;
}
