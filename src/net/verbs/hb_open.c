/*
 * hb_open.c -- the liveness detector's resources and its application-side
 * calls (see hb.h for why it exists and how it works).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "boot/boot.h"
#include "net/verbs/hb.h"

static int make_qp(struct net_hb *h)
{
    if (!(h->ch = ibv_create_comp_channel(h->ctx)) ||
        !(h->cq = ibv_create_cq(h->ctx, HB_RX + HB_TX, NULL, h->ch, 0))) {
        LOG_ERR("hb: channel/CQ on %s: %s", h->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    /* the detector polls the channel with a timeout: never block on it */
    int fl = fcntl(h->ch->fd, F_GETFL);
    if (fl < 0 || fcntl(h->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return VC_ERR_TRANSPORT;
    if (!(h->qp = net_verbs_ud_qp(h->pd, h->cq, h->port.port, h->qkey, HB_TX, HB_RX, NULL))) {
        LOG_ERR("hb: UD QP on %s:%d: %s", h->port.dev, h->port.port, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    net_ud_slots_t u = {0};
    int rc = net_verbs_ud_slots(&u, h->pd, h->qp, sizeof(hb_pkt_t), HB_RX, HB_TX,
                                HB_RECV_WRID, "hb", h->port.dev);
    h->buf = u.buf;
    h->mr = u.mr;
    h->rx_stride = u.stride;
    if (rc)
        return rc;
    h->tx_free = HB_TX;
    return VC_SUCCESS;
}

int net_hb_open(const net_env_t *env, net_hb_t **out)
{
    *out = NULL;
    struct net_hb *h = calloc(1, sizeof *h);
    if (!h)
        return VC_ERR_NOMEM;
    h->env = env;
    h->me = env->rank;
    h->size = env->size;
    h->qkey = net_verbs_qkey(env);
    h->timeout_ns = (uint64_t)(env->cfg->peer_timeout * 1e9);
    /* five chances to answer inside the timeout, but not more often than
       10 times a second: the detector must stay invisible */
    h->interval_ns = h->timeout_ns / 5;
    if (h->interval_ns < 100000000ull)
        h->interval_ns = 100000000ull;
    pthread_mutex_init(&h->lock, NULL);
    int rc;
    if (!(h->peer = calloc((size_t)env->size, sizeof *h->peer))) {
        rc = VC_ERR_NOMEM;
        goto fail;
    }
    if ((rc = net_vdev_get(env, "hb", &h->dev)))
        goto fail;
    h->port = h->dev->port;
    h->ctx = h->dev->ctx;
    h->pd = h->dev->pd;
    if ((rc = make_qp(h)))
        goto fail;
    hb_blob_t b;
    memset(&b, 0, sizeof b);
    b.magic = HB_BLOB_MAGIC;
    b.qpn = h->qp->qp_num;
    b.lid = h->port.lid;
    b.link_layer = (uint8_t)h->port.link_layer;
    memcpy(b.gid, h->port.gid.raw, 16);
    if ((rc = boot_put(env->boot, HB_BLOB_KEY, &b, sizeof b)))
        goto fail;
    if (pthread_create(&h->thread, NULL, hb_main, h)) {
        LOG_ERR("hb: cannot start the liveness thread: %s", strerror(errno));
        rc = VC_ERR_TRANSPORT;
        goto fail;
    }
    h->running = 1;
    LOG_INFO("hb: liveness detector on %s:%d, QPN 0x%x: a remote peer a call waits on "
             "is pinged every %.2f s and declared dead after %.1f s of silence",
             h->port.dev, h->port.port, h->qp->qp_num, (double)h->interval_ns * 1e-9,
             (double)h->timeout_ns * 1e-9);
    *out = h;
    return VC_SUCCESS;
fail:
    net_hb_close(h);
    return rc;
}

/* the peer's record, made on first use (caller holds the lock) */
static hb_peer_t *peer_get(struct net_hb *h, int peer)
{
    if (!h->peer[peer])
        h->peer[peer] = calloc(1, sizeof(hb_peer_t));
    return h->peer[peer];
}

/* Application thread: fetch the peer's blob and make its address handle.
   A peer without a detector (a rank that opened no verbs device) is NONE:
   never watched, never declared dead by this service. */
static void peer_resolve(struct net_hb *h, int peer)
{
    hb_blob_t b;
    size_t len = sizeof b;
    struct ibv_ah *ah = NULL;
    int ok = !boot_get(h->env->boot, peer, HB_BLOB_KEY, &b, &len) && len == sizeof b &&
             b.magic == HB_BLOB_MAGIC && b.link_layer == (uint8_t)h->port.link_layer;
    if (ok) {
        struct ibv_ah_attr a;
        net_vport_ah_attr(&h->port, b.lid, b.gid, &a);
        if (!(ah = ibv_create_ah(h->pd, &a)))
            LOG_WARN("hb: no address handle for rank %d: %s; its liveness is not "
                     "watched", peer, strerror(errno));
    }
    pthread_mutex_lock(&h->lock);
    hb_peer_t *p = peer_get(h, peer);
    if (p && p->state == HB_P_UNKNOWN) {
        p->ah = ah;
        if (ah) {
            p->qpn = b.qpn;
            memcpy(p->gid, b.gid, 16);
        }
        p->state = ah ? HB_P_READY : HB_P_NONE;
        ah = NULL;
    }
    pthread_mutex_unlock(&h->lock);
    if (ah)
        ibv_destroy_ah(ah);
}

void net_hb_watch(net_hb_t *h, int peer)
{
    if (!h || peer < 0 || peer >= h->size || peer == h->me)
        return;
    pthread_mutex_lock(&h->lock);
    hb_peer_t *p = peer_get(h, peer);
    int state = p ? p->state : HB_P_NONE;
    pthread_mutex_unlock(&h->lock);
    if (state == HB_P_UNKNOWN)
        peer_resolve(h, peer);
    uint64_t now = hb_now_ns();
    pthread_mutex_lock(&h->lock);
    if (p && p->state == HB_P_READY) {
        if (!p->watch_from) {
            if (h->nwatch == h->capwatch) {
                int n = h->capwatch ? 2 * h->capwatch : 16;
                int *w = realloc(h->watch, (size_t)n * sizeof *w);
                if (!w)
                    goto out;
                h->watch = w;
                h->capwatch = n;
            }
            h->watch[h->nwatch++] = peer;
            p->watch_from = now;
            p->pinged = 0;
        }
        /* keep watching a while after the last waiting call asked */
        p->watch_until = now + h->timeout_ns + h->interval_ns;
    }
out:
    pthread_mutex_unlock(&h->lock);
}

int net_hb_dead(net_hb_t *h, int peer)
{
    if (!h || peer < 0 || peer >= h->size)
        return 0;
    pthread_mutex_lock(&h->lock);
    hb_peer_t *p = h->peer[peer];
    int dead = p && p->state == HB_P_DEAD ? (p->down ? NET_HB_DOWN : NET_HB_SILENT) : 0;
    pthread_mutex_unlock(&h->lock);
    return dead;
}

void net_hb_broken(net_hb_t *h, int peer)
{
    if (!h || peer < 0 || peer >= h->size || peer == h->me)
        return;
    pthread_mutex_lock(&h->lock);
    hb_peer_t *p = peer_get(h, peer);
    if (p)
        p->broken = 1;
    pthread_mutex_unlock(&h->lock);
    /* watching a broken peer sends it DOWN instead of PING for a while
       (hb_thread.c), so it learns even when it never pings us */
    net_hb_watch(h, peer);
}

int net_hb_heard_within(net_hb_t *h, int peer, double secs)
{
    if (!h || peer < 0 || peer >= h->size)
        return 0;
    uint64_t now = hb_now_ns();
    pthread_mutex_lock(&h->lock);
    hb_peer_t *p = h->peer[peer];
    int yes = p && p->state == HB_P_READY && p->heard &&
              (double)(now - p->heard) * 1e-9 < secs;
    pthread_mutex_unlock(&h->lock);
    return yes;
}

double net_hb_timeout(const net_hb_t *h)
{
    return h ? (double)h->timeout_ns * 1e-9 : 0;
}

static int live_watch(void *arg, int peer, char *why, size_t wlen)
{
    net_hb_t *h = arg;
    net_hb_watch(h, peer);
    int verdict = net_hb_dead(h, peer);
    if (verdict == NET_HB_DOWN)
        snprintf(why, wlen, "it gave up on this rank (its connection to rank %d failed or "
                 "it declared rank %d dead; its own log says why)", h->me, h->me);
    else if (verdict)
        snprintf(why, wlen, "answered no heartbeat for %.1f s (killed, stopped or "
                 "unreachable; VCOLL_PEER_TIMEOUT)", net_hb_timeout(h));
    return verdict != 0;
}

static void live_broken(void *arg, int peer)
{
    net_hb_broken(arg, peer);
}

void net_hb_liveness(net_hb_t *h, net_liveness_t *out)
{
    out->watch = h ? live_watch : NULL;
    out->broken = h ? live_broken : NULL;
    out->h = h;
}

void net_hb_close(net_hb_t *h)
{
    if (!h)
        return;
    if (h->running) {
        __atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
        pthread_join(h->thread, NULL);
        LOG_DEBUG("hb: %llu pings sent, %llu pongs heard, %llu downs heard, %llu "
                  "datagrams dropped", (unsigned long long)h->n_ping,
                  (unsigned long long)h->n_pong, (unsigned long long)h->n_down,
                  (unsigned long long)h->n_bad);
    }
    if (h->qp)
        ibv_destroy_qp(h->qp);
    for (int i = 0; h->peer && i < h->size; i++) {
        hb_peer_t *p = h->peer[i];
        if (!p)
            continue;
        if (p->ah)
            ibv_destroy_ah(p->ah);
        if (p->reply_ah)
            ibv_destroy_ah(p->reply_ah);
        free(p);
    }
    if (h->cq)
        ibv_destroy_cq(h->cq);
    if (h->ch)
        ibv_destroy_comp_channel(h->ch);
    if (h->mr)
        ibv_dereg_mr(h->mr);
    net_vdev_put(h->dev);     /* the thread is gone: nothing uses the PD now */
    pthread_mutex_destroy(&h->lock);
    free(h->buf);
    free(h->peer);
    free(h->watch);
    free(h);
}
