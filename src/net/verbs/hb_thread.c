/*
 * hb_thread.c -- the liveness detector's thread: answer PINGs, PING the
 * watched peers, declare the silent ones dead (see hb.h). It owns the
 * heartbeat QP and CQ; the application thread only reads verdicts and adds
 * watches, both under h->lock.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/log.h"
#include "net/verbs/hb.h"

uint64_t hb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int hb_post_recv(struct net_hb *h, int i)
{
    return net_verbs_post_recv(h->qp, HB_RECV_WRID | (uint64_t)i,
                               h->buf + (size_t)i * h->rx_stride, (uint32_t)h->rx_stride,
                               h->mr->lkey);
}

static void send_pkt(struct net_hb *h, struct ibv_ah *ah, uint32_t qpn, int type,
                     int dst, uint64_t stamp)
{
    if (!h->tx_free)
        return;         /* a heartbeat dropped is a heartbeat late, no more */
    int slot = HB_RX + h->tx_next;
    h->tx_next = (h->tx_next + 1) % HB_TX;
    hb_pkt_t *pk = (hb_pkt_t *)(h->buf + (size_t)slot * h->rx_stride);
    memset(pk, 0, sizeof *pk);
    pk->magic = HB_PKT_MAGIC;
    pk->type = (uint8_t)type;
    pk->src = (uint32_t)h->me;
    pk->dst = (uint32_t)dst;
    pk->stamp = stamp;
    if (net_verbs_ud_send(h->qp, (uint64_t)slot, pk, sizeof *pk, h->mr->lkey, ah, qpn,
                          h->qkey) == 0)
        h->tx_free--;
}

/* a packet counts as the peer's only from the QP and GID it published */
static int from_peer(const hb_peer_t *p, const struct ibv_wc *wc, const uint8_t *slot)
{
    return p->state == HB_P_READY && wc->src_qp == p->qpn &&
           (!(wc->wc_flags & IBV_WC_GRH) || net_verbs_grh_from(slot, p->gid));
}

int hb_classify(const hb_peer_t *p, int type, const struct ibv_wc *wc, const uint8_t *grh)
{
    int from = from_peer(p, wc, grh);
    switch (type) {
    case HB_PING:
        /* answered whoever sent it (through the path it came by: a forged
           PING only earns its sender a PONG), but life only from the peer
           itself: a forged PING must not keep a dead peer alive */
        return HB_ACT_REPLY | (from ? HB_ACT_ALIVE : 0);
    case HB_PONG:
        return from ? HB_ACT_ALIVE | HB_ACT_PONG : 0;
    case HB_DOWN:
        /* a forged DOWN must not cut a live connection. From a peer we
           never resolved it cannot be checked and is dropped; we resolve it
           before we wait on it, and then its answer to our PING is DOWN
           again. */
        return from ? HB_ACT_DOWN : 0;
    }
    return 0;
}

static void on_recv(struct net_hb *h, const struct ibv_wc *wc, uint64_t now)
{
    int i = (int)(wc->wr_id & ~HB_RECV_WRID);
    if (i < 0 || i >= HB_RX)
        return;
    uint8_t *slot = (uint8_t *)h->buf + (size_t)i * h->rx_stride;
    hb_pkt_t pk;
    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status == IBV_WC_WR_FLUSH_ERR)
            return;
        goto repost;
    }
    if (wc->byte_len < HB_GRH + sizeof pk)
        goto bad;
    memcpy(&pk, slot + HB_GRH, sizeof pk);
    if (pk.magic != HB_PKT_MAGIC || pk.src >= (uint32_t)h->size ||
        pk.src == (uint32_t)h->me || pk.dst != (uint32_t)h->me)
        goto bad;
    pthread_mutex_lock(&h->lock);
    if (!h->peer[pk.src])
        h->peer[pk.src] = calloc(1, sizeof(hb_peer_t));
    hb_peer_t *p = h->peer[pk.src];
    int act = p ? hb_classify(p, pk.type, wc, slot) : 0;
    if (act & HB_ACT_REPLY) {
        if (!p->reply_ah || p->reply_qpn != wc->src_qp) {
            if (p->reply_ah)
                ibv_destroy_ah(p->reply_ah);
            struct ibv_wc w = *wc;      /* the verbs call takes it non-const */
            p->reply_ah = ibv_create_ah_from_wc(h->pd, &w, (struct ibv_grh *)slot,
                                                (uint8_t)h->port.port);
            p->reply_qpn = wc->src_qp;
        }
        if (p->reply_ah)
            send_pkt(h, p->reply_ah, wc->src_qp, p->broken ? HB_DOWN : HB_PONG,
                     (int)pk.src, pk.stamp);
    }
    if (act & HB_ACT_ALIVE)
        p->heard = now;         /* its detector runs: it is alive */
    if (act & HB_ACT_PONG)
        h->n_pong++;
    if (act & HB_ACT_DOWN) {
        p->state = HB_P_DEAD;
        p->down = 1;
        h->n_down++;
        LOG_INFO("hb: rank %u gave up on this rank (its connection to us failed)", pk.src);
    }
    if (!(act & (HB_ACT_ALIVE | HB_ACT_DOWN)) && pk.type != HB_PING)
        h->n_bad++;
    pthread_mutex_unlock(&h->lock);
    goto repost;
bad:
    h->n_bad++;
repost:
    hb_post_recv(h, i);
}

static void drain(struct net_hb *h)
{
    struct ibv_wc wc[16];
    int n;
    uint64_t now = hb_now_ns();
    while ((n = ibv_poll_cq(h->cq, 16, wc)) > 0) {
        for (int k = 0; k < n; k++) {
            if (wc[k].wr_id & HB_RECV_WRID)
                on_recv(h, &wc[k], now);
            else
                h->tx_free++;
        }
    }
}

/* PING whom we watch, stop watching what nobody waits on any more, and
   give the verdict on the silent. */
static void tick(struct net_hb *h, uint64_t now)
{
    pthread_mutex_lock(&h->lock);
    for (int k = 0; k < h->nwatch;) {
        int r = h->watch[k];
        hb_peer_t *p = h->peer[r];
        uint64_t since = p->heard > p->watch_from ? p->heard : p->watch_from;
        int drop = 0;
        if (now > p->watch_until) {
            drop = 1;
        } else if (p->broken) {
            /* we gave up on it: no verdict to reach, just make sure it knows */
            if (now - p->pinged >= h->interval_ns) {
                send_pkt(h, p->ah, p->qpn, HB_DOWN, r, now);
                p->pinged = now;
            }
        } else if (now - since > h->timeout_ns) {
            p->state = HB_P_DEAD;
            drop = 1;
            LOG_INFO("hb: rank %d answered no heartbeat for %.1f s", r,
                     (double)(now - since) * 1e-9);
        } else if (now - p->pinged >= h->interval_ns) {
            send_pkt(h, p->ah, p->qpn, HB_PING, r, now);
            p->pinged = now;
            h->n_ping++;
        }
        if (drop) {
            p->watch_from = 0;
            h->watch[k] = h->watch[--h->nwatch];
        } else {
            k++;
        }
    }
    pthread_mutex_unlock(&h->lock);
}

void *hb_main(void *arg)
{
    struct net_hb *h = arg;
    struct pollfd pfd = {.fd = h->ch->fd, .events = POLLIN};
    int ms = (int)(h->interval_ns / 2000000ull);
    if (ms < 10)
        ms = 10;
    ibv_req_notify_cq(h->cq, 0);
    uint64_t last_tick = 0;
    while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
        if (poll(&pfd, 1, ms) > 0) {
            struct ibv_cq *cq;
            void *cctx;
            if (ibv_get_cq_event(h->ch, &cq, &cctx) == 0)
                ibv_ack_cq_events(cq, 1);
            ibv_req_notify_cq(h->cq, 0);
        }
        /* also drained after a timeout: an event missed between the poll
           and the re-arm must not leave a PING unanswered */
        drain(h);
        uint64_t now = hb_now_ns();
        if (now - last_tick >= h->interval_ns / 2) {
            tick(h, now);
            last_tick = now;
        }
    }
    return NULL;
}
