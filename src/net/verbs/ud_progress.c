/*
 * ud_progress.c -- the receiving half of UD reliability and the timers:
 * poll the CQ, accept fragments in order, reassemble and deliver, answer
 * with ACK/NAK, resend on timeout, give up on silent peers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "net/verbs/hb.h"
#include "net/verbs/ud.h"

#define UD_RECV_WRID (1ull << 63)

int ud_post_recv(ud_net_t *u, int idx)
{
    int rc = net_verbs_post_recv(u->qp, UD_RECV_WRID | (uint64_t)idx,
                                 u->rx_buf + (size_t)idx * u->rx_stride,
                                 (uint32_t)(UD_GRH_BYTES + u->mtu), u->rx_mr->lkey);
    if (rc)
        LOG_ERR("ud: rank %d: ibv_post_recv failed: %s", u->me, strerror(errno));
    return rc;
}

static void ack_list_add(ud_net_t *u, ud_peer_t *p)
{
    if (p->on_ack)
        return;
    p->on_ack = 1;
    p->ack_next = u->ack_list;
    u->ack_list = p;
}

/* Fault injection (VCOLL_UD_LOSS): xorshift, so runs differ per rank. */
static int drop_on_purpose(ud_net_t *u)
{
    if (u->loss <= 0)
        return 0;
    u->rng ^= u->rng << 13;
    u->rng ^= u->rng >> 7;
    u->rng ^= u->rng << 17;
    return (double)(u->rng >> 11) * (1.0 / 9007199254740992.0) < u->loss;
}

/* An in-order fragment: deliver it, or add it to the peer's reassembly. */
static void deliver(ud_net_t *u, ud_peer_t *p, uint8_t flags, uint32_t total,
                    const char *data, uint32_t plen)
{
    const char *out = NULL, *err;
    uint32_t olen = 0;
    ud_ras_t *r = &p->ras;
    if ((flags & UD_F_FIRST) && !(flags & UD_F_LAST) && total > r->cap &&
        total <= u->base.max_packet) {
        /* A large packet borrows the transport's one spare buffer (given
           back below), so a peer that stops streaming keeps nothing large,
           and a stream does not malloc and free 64 KiB per packet (which
           trims and regrows the heap: page faults, and munmap/brk hooks). */
        if (u->ras_spare && u->ras_spare_cap >= total) {
            free(r->buf);
            r->buf = u->ras_spare;
            r->cap = u->ras_spare_cap;
            u->ras_spare = NULL;
        } else {
            uint32_t want = total > UD_RAS_KEEP ? (uint32_t)u->base.max_packet : total;
            char *nb = realloc(r->buf, want);
            if (!nb) {
                ud_peer_fail(u, p->rank, "out of memory for reassembly");
                return;
            }
            r->buf = nb;
            r->cap = want;
        }
    }
    err = ud_reassemble(r, (uint32_t)u->base.max_packet, flags, total, data, plen, &out,
                        &olen);
    if (err) {
        ud_peer_fail(u, p->rank, "%s", err);
        return;
    }
    if (!out)
        return;
    u->base.up.packet(u->base.up.arg, p->rank, out, olen);
    if (out == r->buf && r->cap > UD_RAS_KEEP && !r->total) {
        if (!u->ras_spare) {
            u->ras_spare = r->buf;
            u->ras_spare_cap = r->cap;
        } else {
            free(r->buf);
        }
        r->buf = NULL;
        r->cap = 0;
    }
}

/* Take the expected fragment, then every held one it makes contiguous. */
static void accept(ud_net_t *u, ud_peer_t *p, uint8_t flags, uint32_t total,
                   const char *data, uint32_t plen)
{
    for (;;) {
        p->expect++;
        if (++p->owed >= p->wsize / 4 || (flags & UD_F_ACKREQ))
            p->ack_now = u->ack_due = 1;
        ack_list_add(u, p);
        deliver(u, p, flags, total, data, plen);
        if (p->state != UD_P_READY ||
            !ud_ooo_take(&p->ooo, p->expect, &flags, &total, &data, &plen))
            return;
    }
}

/* A fragment ahead of a gap: keep it, and say which ones are missing --
 * at once for a new gap (the fragment before this one is neither delivered
 * nor held), otherwise at most once per gap per UD_NAK_GAP_NS. */
static void ahead(ud_net_t *u, ud_peer_t *p, const ud_hdr_t *h, uint32_t plen)
{
    u->n_ooo++;
    if (!p->ooo.n) {
        uint32_t slot = u->mtu - (uint32_t)sizeof(ud_hdr_t), n = 1;
        while (n * 2 <= p->wsize && (uint64_t)n * 2 * slot <= UD_OOO_BYTES)
            n *= 2;
        if (n < 2 || ud_ooo_init(&p->ooo, n, slot))
            LOG_DEBUG("ud: rank %d: no store for out-of-order fragments from rank %d",
                      u->me, p->rank);
    }
    int kept = ud_ooo_put(&p->ooo, p->expect, h->seq, h->flags, h->total,
                          (const char *)(h + 1), plen);
    if (kept == 0) {
        u->n_dup++;
        return;
    }
    uint32_t prev = h->seq - 1;
    int newgap = kept > 0 && (prev == p->expect || !ud_ooo_has(&p->ooo, prev));
    uint64_t now = ud_now_ns();
    if (newgap || p->nak_for != p->expect || now - p->nak_at > UD_NAK_GAP_NS) {
        p->nak_for = p->expect;
        p->nak_at = now;
        ud_send_ctrl(u, p, UD_T_NAK);
    }
}

static void on_recv(ud_net_t *u, const struct ibv_wc *wc)
{
    int idx = (int)(wc->wr_id & ~UD_RECV_WRID);
    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status != IBV_WC_WR_FLUSH_ERR) {
            net_verbs_async_drain(u->ctx, "ud", u->me, NULL, NULL);
            LOG_ERR("ud: rank %d: receive completion failed: %s (status %d, vendor error "
                    "0x%x) on %s:%d", u->me, ibv_wc_status_str(wc->status),
                    (int)wc->status, wc->vendor_err, u->port.dev, u->port.port);
        } else
            return;     /* QP being torn down: nothing to repost */
        goto repost;
    }
    const ud_hdr_t *h = (const ud_hdr_t *)(u->rx_buf + (size_t)idx * u->rx_stride +
                                           UD_GRH_BYTES);
    if (wc->byte_len < UD_GRH_BYTES + sizeof *h || h->src >= (uint32_t)u->size ||
        h->src == (uint32_t)u->me) {
        LOG_DEBUG("ud: rank %d: malformed datagram (%u bytes) dropped", u->me, wc->byte_len);
        goto repost;
    }
    ud_peer_t *p = &u->peer[h->src];
    if (p->state != UD_P_READY && ud_peer_ready(u, (int)h->src))
        goto repost;
    if (wc->src_qp != p->qpn || ((wc->wc_flags & IBV_WC_GRH) &&
                                 !net_verbs_grh_from(u->rx_buf + (size_t)idx * u->rx_stride,
                                                     p->gid))) {
        LOG_DEBUG("ud: rank %d: datagram claiming rank %u from QP 0x%x (expected 0x%x) "
                  "dropped", u->me, h->src, wc->src_qp, p->qpn);
        goto repost;
    }
    if (drop_on_purpose(u)) {
        u->n_dropped++;
        goto repost;
    }
    u->n_rx++;
    ud_on_ack(u, p, h->ack, h->sack);
    if (h->type == UD_T_NAK) {
        /* the peer saw a gap: resend what its map lacks now, not at the timeout */
        if (p->una != p->next_seq)
            ud_resend(u, p, ud_now_ns(), 1);
    } else if (h->type == UD_T_DATA) {
        uint32_t plen = wc->byte_len - UD_GRH_BYTES - (uint32_t)sizeof *h;
        if (h->seq == p->expect) {
            accept(u, p, h->flags, h->total, (const char *)(h + 1), plen);
        } else if (ud_seq_lt(h->seq, p->expect)) {
            u->n_dup++;         /* our ACK was lost or late */
            p->ack_now = u->ack_due = 1;
            ack_list_add(u, p);
        } else {
            ahead(u, p, h, plen);
        }
    }
repost:
    /* only after the upcall is done with the buffer */
    if (ud_post_recv(u, idx) != VC_SUCCESS)
        u->qp_broken = 1;
}

static void retire(ud_net_t *u, int s)
{
    ud_slot_t *sl = &u->slot[s];
    sl->posted--;
    u->sq_free++;
    if (sl->posted == 0 && (sl->ctrl || sl->acked))
        ud_slot_put(u, s);
}

/* A send completion (signaled, or any send failing): it and every send
 * posted before it are done. */
static void on_send(ud_net_t *u, const struct ibv_wc *wc)
{
    uint32_t pos = (uint32_t)wc->wr_id;
    uint32_t inflight = (u->sq_tail - u->sq_head) & UD_SQ_POS_MASK;
    if (wc->wr_id > UD_SQ_POS_MASK || ((pos - u->sq_head) & UD_SQ_POS_MASK) >= inflight) {
        LOG_ERR("ud: rank %d: completion for unknown send %llu (%s)", u->me,
                (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
        return;
    }
    if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR) {
        /* a UD send fails only locally: the QP is now in error state */
        u->qp_broken = 1;
        ud_peer_fail(u, u->slot[u->sq_ring[pos & u->sq_mask]].peer,
                     "send failed: %s (status %d, vendor error 0x%x) on %s:%d", ibv_wc_status_str(wc->status), (int)wc->status,
                     wc->vendor_err, u->port.dev, u->port.port);
    }
    for (;;) {
        uint32_t h = u->sq_head;
        u->sq_head = (h + 1) & UD_SQ_POS_MASK;
        retire(u, u->sq_ring[h & u->sq_mask]);
        if (h == pos)
            break;
    }
}

/* Arm new timers, resend timed-out windows, declare peers dead after
 * VCOLL_UD_TIMEOUT. */
static void run_timers(ud_net_t *u, uint64_t now)
{
    uint64_t limit = (uint64_t)(u->env->cfg->ud_timeout * 1e9);
    LIST_FOR_EACH_SAFE(n, nx, &u->tx_list) {
        ud_peer_t *p = LIST_ENTRY(n, ud_peer_t, tx_link);
        if (p->rto_at == 0) {
            if (!p->stall_since)
                p->stall_since = now;
            p->rto_at = now + p->rto_ns;
            continue;
        }
        if (now < p->rto_at)
            continue;
        if (limit && now - p->stall_since > limit) {
            /* Silence on the data path may only mean the peer is computing
               and makes no vcoll calls: its liveness detector still answers.
               Only a peer that answers nothing there either is dead. */
            net_hb_t *hb = u->env->hb;
            if (hb) {
                net_hb_watch(hb, p->rank);
                if (!net_hb_dead(hb, p->rank)) {
                    ud_resend(u, p, now, 0);
                    continue;
                }
            }
            ud_peer_fail(u, p->rank, "no acknowledgement for %.1f s after %u resends%s (the "
                         "peer died, or stopped; VCOLL_UD_TIMEOUT, VCOLL_PEER_TIMEOUT)",
                         (double)(now - p->stall_since) * 1e-9, p->resends,
                         hb ? " and no heartbeat answer" : "");
            continue;
        }
        ud_resend(u, p, now, 0);
    }
}

/* An ACK owed for a quarter of the first resend timeout (from the first
 * timer check that saw it) is due: the end of a burst, which no quarter
 * window or ACKREQ closes. Well inside the sender's resend timeout, so a
 * quiet receiver never costs a resend. */
static void age_acks(ud_net_t *u, uint64_t now)
{
    for (ud_peer_t *p = u->ack_list; p; p = p->ack_next) {
        if (!p->owed)
            continue;
        if (!p->owed_since)
            p->owed_since = now;
        else if (now - p->owed_since >= u->rto_base_ns / 4)
            p->ack_now = u->ack_due = 1;
    }
}

/* Send the ACKs that are due: those marked ack_now, or every one owed when
 * all. Returns how many are still owed because the send queue had no room. */
static int flush_acks(ud_net_t *u, int all)
{
    ud_peer_t **pp = &u->ack_list;
    int left = 0;
    u->ack_due = 0;
    while (*pp) {
        ud_peer_t *p = *pp;
        if ((p->owed || p->ack_now) && p->state == UD_P_READY && (all || p->ack_now) &&
            ud_send_ctrl(u, p, UD_T_ACK) == NET_AGAIN) {
            left++;
            u->ack_due |= p->ack_now;
        }
        if ((!p->owed && !p->ack_now) || p->state != UD_P_READY) {
            p->on_ack = 0;
            *pp = p->ack_next;
        } else {
            pp = &p->ack_next;
        }
    }
    return left;
}

int ud_progress(net_t *n)
{
    ud_net_t *u = (ud_net_t *)n;
    if (!u || !u->cq || u->in_progress)
        return 0;
    u->in_progress = 1;
    struct ibv_wc wc[UD_POLL_BATCH];
    int ne = ibv_poll_cq(u->cq, UD_POLL_BATCH, wc);
    if (ne < 0) {
        net_verbs_async_drain(u->ctx, "ud", u->me, NULL, NULL);
        LOG_ERR("ud: rank %d: ibv_poll_cq failed (%d)", u->me, ne);
        u->in_progress = 0;
        return -VC_ERR_TRANSPORT;
    }
    for (int i = 0; i < ne; i++) {
        if (wc[i].wr_id & UD_RECV_WRID)
            on_recv(u, &wc[i]);
        else
            on_send(u, &wc[i]);
    }
    int tick = (!list_empty(&u->tx_list) || u->ack_list) && (++u->ticks % UD_TIMER_POLLS) == 0;
    if (tick) {
        uint64_t now = ud_now_ns();
        if (!list_empty(&u->tx_list))
            run_timers(u, now);
        age_acks(u, now);
    }
    /* on a tick also when none is due: flush_acks drops the peers a reply
       settled, so a ping-pong does not keep the list (and the tick) alive */
    if (u->ack_due || (tick && u->ack_list))
        flush_acks(u, 0);
    u->in_progress = 0;
    return ne;
}

int ud_check_peer(net_t *n, int peer)
{
    ud_net_t *u = (ud_net_t *)n;
    if (!u || peer < 0 || peer >= u->size)
        return VC_ERR_ARG;
    ud_peer_t *p = &u->peer[peer];
    if (p->state == UD_P_NEW && peer != u->me)
        ud_peer_ready(u, peer);
    if (p->state == UD_P_DEAD)
        return VC_ERR_PEER_FAILED;
    /* UD cannot tell a dead peer from a quiet one; its pid can */
    return net_pid_gone(p->pid) ? VC_ERR_PEER_FAILED : VC_SUCCESS;
}

int ud_quiesce(net_t *n)
{
    ud_net_t *u = (ud_net_t *)n;
    if (!u || u->qp_broken)
        return 0;
    return u->unacked + flush_acks(u, 1);
}
