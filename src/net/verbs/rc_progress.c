/*
 * rc_progress.c -- poll the CQ: deliver packets, recycle receive buffers and
 * send slots, and turn every error completion into a named failure.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/log.h"
#include "boot/boot.h"
#include "net/verbs/rc.h"

/* Receive WR ids carry this bit so error completions (whose opcode field is
   undefined) can still be told apart from send-side ones; below it, the
   slab and the buffer in it. */
#define RC_RECV_WRID (1ull << 63)
#define RC_SLAB_SHIFT 20

int rc_post_recv(rc_net_t *r, int slab, int idx)
{
    struct rc_slab *sl = &r->slab[slab];
    struct ibv_sge sge = {
        .addr = (uintptr_t)(sl->buf + (size_t)idx * r->base.max_packet),
        .length = (uint32_t)r->base.max_packet,
        .lkey = sl->mr->lkey,
    };
    struct ibv_recv_wr wr = {
        .wr_id = RC_RECV_WRID | ((uint64_t)slab << RC_SLAB_SHIFT) | (uint64_t)idx,
        .sg_list = &sge,
        .num_sge = 1,
    }, *bad;
    int err = ibv_post_srq_recv(r->srq, &wr, &bad);
    if (err) {
        LOG_ERR("rc: rank %d: ibv_post_srq_recv failed: %s", r->me, strerror(err));
        return VC_ERR_TRANSPORT;
    }
    return VC_SUCCESS;
}

/* n more receive buffers for the SRQ: a newly connected peer's share */
int rc_slab_add(rc_net_t *r, int n)
{
    if (r->nslab == r->capslab) {
        int cap = r->capslab ? 2 * r->capslab : 8;
        struct rc_slab *s = realloc(r->slab, (size_t)cap * sizeof *s);
        if (!s)
            return VC_ERR_NOMEM;
        r->slab = s;
        r->capslab = cap;
    }
    size_t bytes = (size_t)n * r->base.max_packet;
    struct rc_slab *sl = &r->slab[r->nslab];
    sl->n = n;
    if (!(sl->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095)))
        return VC_ERR_NOMEM;
    /* the NIC writes them locally; nothing remote */
    if (!(sl->mr = ibv_reg_mr(r->pd, sl->buf, bytes, IBV_ACCESS_LOCAL_WRITE))) {
        LOG_ERR("rc: registering %zu bytes of receive buffers on %s failed: %s "
                "(ulimit -l?)", bytes, r->port.dev, strerror(errno));
        free(sl->buf);
        return VC_ERR_TRANSPORT;
    }
    int slab = r->nslab++;
    r->rx_bytes += bytes;
    for (int i = 0; i < n; i++) {
        int rc = rc_post_recv(r, slab, i);
        if (rc)
            return rc;
        r->rx_count++;
    }
    return VC_SUCCESS;
}

static int qp_peer(const void *arg, uint32_t qpn)
{
    return rc_qpn_lookup((const rc_net_t *)arg, qpn);
}

void rc_peer_fail(rc_net_t *r, int peer, const char *op, struct ibv_wc *wc,
                  const char *text)
{
    /* a QP event the device queued may be the cause of this failure */
    if (r->ctx)
        net_verbs_async_drain(r->ctx, "rc", r->me, qp_peer, r);
    if (peer < 0 || peer >= r->size) {
        LOG_ERR("rc: rank %d: %s failed on an unknown QP: %s", r->me, op,
                wc ? ibv_wc_status_str(wc->status) : text);
        return;
    }
    rc_peer_t *p = &r->peer[peer];
    if (p->dead) {
        /* The rest are flushes -- unless the first was: then the QP was
           failed by its receive side (a receive completion on the shared
           CQ may be polled after the send queue's flushes, and a remote
           access error leaves no completion at all here), and the first
           real status is the cause the log must name. */
        if (p->dead_flushed && wc && wc->status != IBV_WC_WR_FLUSH_ERR) {
            p->dead_flushed = 0;
            LOG_ERR("rc: rank %d -> rank %d: the flushes above came after %s failed: "
                    "%s (status %d, vendor error 0x%x)", r->me, peer, op,
                    ibv_wc_status_str(wc->status), (int)wc->status, wc->vendor_err);
        }
        return;
    }
    p->dead = 1;
    p->dead_flushed = wc && wc->status == IBV_WC_WR_FLUSH_ERR;
    char why[160];
    if (wc)
        snprintf(why, sizeof why, "rank %d -> rank %d: %s failed: %s (status %d, "
                 "vendor error 0x%x) on %s:%d", r->me, peer, op,
                 ibv_wc_status_str(wc->status), (int)wc->status, wc->vendor_err,
                 r->port.dev, r->port.port);
    else
        snprintf(why, sizeof why, "rank %d -> rank %d: %s failed: %s", r->me, peer,
                 op, text);
    LOG_ERR("rc: %s", why);
    rc_get_fail_peer(r, peer);
    /* up: the layers above fail what involves the peer (never the job) */
    if (r->base.up.peer_failed)
        r->base.up.peer_failed(r->base.up.arg, peer, why);
}

int rc_check_peer(net_t *n, int peer)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r || peer < 0 || peer >= r->size)
        return VC_ERR_ARG;
    rc_peer_t *p = &r->peer[peer];
    if (p->dead)
        return VC_ERR_PEER_FAILED;
    net_t *fb = rc_fb_for(r, peer);
    if (fb)
        return fb->ops->check_peer(fb, peer);
    if (!p->pid && p->state == RC_S_NONE && r->env->boot->node_of &&
        r->env->boot->node_of[peer] == r->env->boot->node_id) {
        rc_blob_t b;          /* never connected: its pid is in its blob */
        if (rc_peer_blob(r, peer, &b) == VC_SUCCESS)
            p->pid = (pid_t)b.pid;
    }
    /* a rank that only waits to receive from a dead peer never sees an error
       completion; for a peer on this node the pid tells at once */
    return net_pid_gone(r->peer[peer].pid) ? VC_ERR_PEER_FAILED : VC_SUCCESS;
}

static void on_recv(rc_net_t *r, struct ibv_wc *wc)
{
    int idx = (int)(wc->wr_id & ((1u << RC_SLAB_SHIFT) - 1));
    int slab = (int)((wc->wr_id & ~RC_RECV_WRID) >> RC_SLAB_SHIFT);
    int src = rc_qpn_lookup(r, wc->qp_num);
    if (wc->status != IBV_WC_SUCCESS) {
        rc_peer_fail(r, src, "receive", wc, NULL);
    } else if (src < 0) {
        LOG_ERR("rc: rank %d: packet on unknown QP 0x%x dropped", r->me, wc->qp_num);
    } else {
        rc_peer_t *p = &r->peer[src];
        /* anything on the QP (the RTU or data) proves the peer's end ready */
        if (p->state == RC_S_WAIT)
            p->state = RC_S_UP;
        uint32_t imm = (wc->wc_flags & IBV_WC_WITH_IMM) ? be32toh(wc->imm_data) : 0;
        /* credits first: the upcall may want to answer right away */
        p->credits += (int)(imm & RC_IMM_CREDIT_MASK);
        if (!(imm & RC_IMM_CREDIT_ONLY) && !p->dead) {
            const char *buf = r->slab[slab].buf + (size_t)idx * r->base.max_packet;
            r->base.up.packet(r->base.up.arg, src, buf, wc->byte_len);
            p->owed++;
        }
    }
    /* the buffer goes back to the SRQ only after the upcall is done with it */
    if (rc_post_recv(r, slab, idx) != VC_SUCCESS)
        rc_peer_fail(r, src, "receive repost", NULL, "ibv_post_srq_recv failed");
    if (src >= 0 && r->peer[src].owed > 0 && r->peer[src].owed >= r->credits / 2 &&
        rc_send_credits(r, src) == NET_AGAIN)
        r->credit_pending = 1;
}

static void on_send(rc_net_t *r, struct ibv_wc *wc)
{
    if (wc->wr_id & RC_UNSIG_WRID) {    /* only errors report these */
        int peer = (int)(wc->wr_id & ~RC_UNSIG_WRID);
        if (wc->status != IBV_WC_SUCCESS)
            rc_peer_fail(r, peer, "send", wc, NULL);
        return;
    }
    int i = (int)wc->wr_id;
    if (i < 0 || i >= r->op_count || r->op[i].kind == RC_OP_FREE) {
        LOG_ERR("rc: rank %d: completion for unknown send WR %llu (%s)", r->me,
                (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
        return;
    }
    rc_op_t o = r->op[i];
    rc_op_release(r, i);
    r->peer[o.peer].sq_free += o.retire;
    if (o.kind == RC_OP_READ) {
        r->peer[o.peer].rd_inflight--;
        r->rd_inflight--;
    }
    if (wc->status != IBV_WC_SUCCESS) {
        static const char *const names[] = { "?", "send", "credit return", "RDMA read" };
        rc_peer_fail(r, o.peer, names[o.kind], wc, NULL);
    }
    if (o.kind == RC_OP_READ && o.get)
        rc_get_chunk_done(r, o.get, wc->status == IBV_WC_SUCCESS
                          ? VC_SUCCESS : VC_ERR_PEER_FAILED);
}

int rc_progress(net_t *n)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r || !r->cq || r->in_progress)
        return 0;
    r->in_progress = 1;
    int hs = r->nconnecting || (++r->hs_tick % RC_HS_POLL_EVERY) == 0 ? rc_hs_progress(r) : 0;
    if (r->fb) {
        int e = r->fb->base.ops->progress(&r->fb->base);
        if (e < 0) {
            r->in_progress = 0;
            return e;
        }
        hs += e;
    }
    struct ibv_wc wc[RC_POLL_BATCH];
    int ne = ibv_poll_cq(r->cq, RC_POLL_BATCH, wc);
    if (ne < 0) {
        LOG_ERR("rc: rank %d: ibv_poll_cq failed (%d)", r->me, ne);
        r->in_progress = 0;
        return -VC_ERR_TRANSPORT;
    }
    for (int i = 0; i < ne; i++) {
        if (wc[i].wr_id & RC_RECV_WRID)
            on_recv(r, &wc[i]);
        else
            on_send(r, &wc[i]);
    }
    if (r->get_head)
        rc_get_post_pending(r);
    rc_flush_credits(r);
    r->in_progress = 0;
    return ne + hs;
}

/* The fallback UD's unacknowledged packets (vc_finalize waits for them);
   RC's own delivery the hardware guarantees. */
int rc_quiesce(net_t *n)
{
    rc_net_t *r = (rc_net_t *)n;
    return r && r->fb ? r->fb->base.ops->quiesce(&r->fb->base) : 0;
}
