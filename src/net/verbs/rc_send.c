/*
 * rc_send.c -- packet sends (inline or via a registered tx buffer) and the
 * credit returns that keep the peer's SRQ share from overflowing.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "core/copy.h"
#include "vcoll.h"
#include "core/log.h"
#include "net/verbs/rc.h"

int rc_op_alloc(rc_net_t *r)
{
    int i = r->op_free;
    if (i < 0)
        return -1;
    r->op_free = r->op[i].next_free;
    r->op[i].next_free = -1;
    r->op[i].txbuf = -1;
    r->op[i].get = NULL;
    r->op[i].retire = 1;
    return i;
}

void rc_op_release(rc_net_t *r, int i)
{
    rc_op_t *o = &r->op[i];
    if (o->txbuf >= 0)
        r->tx_free[r->tx_nfree++] = o->txbuf;
    o->kind = RC_OP_FREE;
    o->txbuf = -1;
    o->get = NULL;
    o->next_free = r->op_free;
    r->op_free = i;
}

static uint32_t take_owed(rc_peer_t *p)
{
    uint32_t give = p->owed > (int)RC_IMM_CREDIT_MASK ? RC_IMM_CREDIT_MASK
                                                       : (uint32_t)p->owed;
    p->owed -= (int)give;
    return give;
}

/* A signaled WR on p's QP also retires the unsignaled ones before it. */
void rc_op_signal(rc_peer_t *p, rc_op_t *o)
{
    o->retire = p->unsig + 1;
    p->unsig = 0;
}

int rc_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    rc_net_t *r = (rc_net_t *)n;
    net_t *fb = r ? rc_fb_for(r, peer) : NULL;
    if (fb)
        return fb->ops->send(fb, peer, iov, iovcnt);
    int rc = rc_peer_check(r, peer);
    if (rc)
        return rc;
    if (iovcnt < 0 || (iovcnt && !iov))
        return VC_ERR_ARG;
    rc_peer_t *p = &r->peer[peer];
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > r->base.max_packet)
        return VC_ERR_ARG;
    if (p->credits <= 0 || p->sq_free <= 0)
        return NET_AGAIN;

    int inl = len <= r->max_inline && iovcnt <= r->max_send_sge;
    if (!inl && r->tx_nfree == 0)
        return NET_AGAIN;
    /* a copied packet needs its completion to free the tx buffer; an inline
       one goes unsignaled while the queue keeps room for a signaled one */
    int signal = !inl || p->unsig >= RC_UNSIG_MAX - 1 || p->sq_free <= 2;
    int op = -1;
    if (signal) {
        if ((op = rc_op_alloc(r)) < 0)
            return NET_AGAIN;
        r->op[op].kind = RC_OP_SEND;
        r->op[op].peer = peer;
    }

    struct ibv_sge sge[4];
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof wr);
    if (inl) {
        /* the payload is copied into the WQE at post time: iov reusable now */
        for (int i = 0; i < iovcnt; i++) {
            sge[i].addr = (uintptr_t)iov[i].iov_base;
            sge[i].length = (uint32_t)iov[i].iov_len;
            sge[i].lkey = 0;
        }
        wr.num_sge = iovcnt;
        wr.send_flags = IBV_SEND_INLINE;
    } else {
        int tb = r->tx_free[--r->tx_nfree];
        r->op[op].txbuf = tb;
        char *dst = r->tx_buf + (size_t)tb * r->base.max_packet;
        size_t off = 0;
        for (int i = 0; i < iovcnt; i++) {
            core_copy(dst + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
        sge[0].addr = (uintptr_t)dst;
        sge[0].length = (uint32_t)len;
        sge[0].lkey = r->tx_mr->lkey;
        wr.num_sge = 1;
    }
    wr.sg_list = sge;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    int owed = p->owed, unsig = p->unsig;
    wr.imm_data = htobe32(take_owed(p));
    if (signal) {
        wr.wr_id = (uint64_t)op;
        wr.send_flags |= IBV_SEND_SIGNALED;
        rc_op_signal(p, &r->op[op]);
    } else {
        wr.wr_id = RC_UNSIG_WRID | (uint64_t)peer;
        p->unsig++;
    }
    int err = ibv_post_send(p->qp, &wr, &bad);
    if (err) {
        p->owed = owed;
        p->unsig = unsig;
        if (signal)
            rc_op_release(r, op);
        LOG_ERR("rc: rank %d -> rank %d: ibv_post_send (%zu B%s) failed: %s",
                r->me, peer, len, inl ? " inline" : "", strerror(err));
        return VC_ERR_TRANSPORT;
    }
    p->credits--;
    p->sq_free--;
    if (peer == r->fault_peer && --r->fault_after == 0) {
        /* fault injection: our end of the connection fails, the peer's does
           not -- it learns only through the liveness detector's DOWN */
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
        LOG_WARN("rc: VCOLL_FAULT_RC_ERR: moving the QP to rank %d into the error state", peer);
        ibv_modify_qp(p->qp, &a, IBV_QP_STATE);
        r->fault_peer = -1;
    }
    return VC_SUCCESS;
}

/* Zero-byte SEND_WITH_IMM that only hands back credits; needs no credit
   itself (see the bound in rc.h). */
int rc_send_credits(rc_net_t *r, int peer)
{
    rc_peer_t *p = &r->peer[peer];
    if (p->owed == 0 || p->dead || p->state != RC_S_UP)
        return VC_SUCCESS;
    if (p->sq_free <= 0)
        return NET_AGAIN;
    int op = rc_op_alloc(r);
    if (op < 0)
        return NET_AGAIN;
    r->op[op].kind = RC_OP_CREDIT;
    r->op[op].peer = peer;
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)op;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    int owed = p->owed;
    wr.imm_data = htobe32(RC_IMM_CREDIT_ONLY | take_owed(p));
    int unsig = p->unsig;
    rc_op_signal(p, &r->op[op]);
    int err = ibv_post_send(p->qp, &wr, &bad);
    if (err) {
        p->owed = owed;
        p->unsig = unsig;
        rc_op_release(r, op);
        LOG_ERR("rc: rank %d -> rank %d: posting a credit return failed: %s",
                r->me, peer, strerror(err));
        return VC_ERR_TRANSPORT;
    }
    p->sq_free--;
    return VC_SUCCESS;
}

/* The RTU: a zero-byte SEND telling the peer our QP is ready, so it may
   send (rc.h). Unsignaled, so it needs no op slot; it is posted first on a
   fresh QP, whose send queue is empty. Its receive buffer is the third of
   RC_CREDIT_RESERVE. */
int rc_send_rtu(rc_net_t *r, int peer)
{
    rc_peer_t *p = &r->peer[peer];
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = RC_UNSIG_WRID | (uint64_t)peer;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htobe32(RC_IMM_CREDIT_ONLY);
    int err = ibv_post_send(p->qp, &wr, &bad);
    if (err) {
        LOG_ERR("rc: rank %d -> rank %d: posting the ready message failed: %s",
                r->me, peer, strerror(err));
        return VC_ERR_TRANSPORT;
    }
    p->unsig++;
    p->sq_free--;
    return VC_SUCCESS;
}

/* Retry credit returns that found no send slot earlier. */
void rc_flush_credits(rc_net_t *r)
{
    if (!r->credit_pending)
        return;
    r->credit_pending = 0;
    int thresh = r->credits / 2;
    for (int p = 0; p < r->size; p++)
        if (r->peer[p].owed >= thresh && r->peer[p].owed > 0 &&
            rc_send_credits(r, p) == NET_AGAIN)
            r->credit_pending = 1;
}
