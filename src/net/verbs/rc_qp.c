/*
 * rc_qp.c -- one RC queue pair per peer, made on first contact (INIT, with
 * the peer's share of receive buffers), brought to RTR/RTS once the
 * handshake brought the peer's QP number; QP number -> rank map.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "boot/boot.h"
#include "core/log.h"
#include "net/verbs/rc.h"

static void qpn_put(uint32_t *key, int *rank, uint32_t mask, uint32_t qpn, int v)
{
    for (uint32_t h = (qpn * 2654435761u) & mask;; h = (h + 1) & mask)
        if (rank[h] < 0 || key[h] == qpn) {
            key[h] = qpn;
            rank[h] = v;
            return;
        }
}

/* the map grows with the QPs made, not with the job */
static int qpn_grow(rc_net_t *r)
{
    uint32_t n = r->qpn_rank ? 2 * (r->qpn_mask + 1) : 16;
    uint32_t *key = calloc(n, sizeof *key);
    int *rank = malloc(n * sizeof *rank);
    if (!key || !rank) {
        free(key);
        free(rank);
        return VC_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        rank[i] = -1;
    for (uint32_t i = 0; r->qpn_rank && i <= r->qpn_mask; i++)
        if (r->qpn_rank[i] >= 0)
            qpn_put(key, rank, n - 1, r->qpn_key[i], r->qpn_rank[i]);
    free(r->qpn_key);
    free(r->qpn_rank);
    r->qpn_key = key;
    r->qpn_rank = rank;
    r->qpn_mask = n - 1;
    return VC_SUCCESS;
}

int rc_qpn_insert(rc_net_t *r, uint32_t qpn, int rank)
{
    if ((!r->qpn_rank || 2 * (uint32_t)(r->qpn_used + 1) > r->qpn_mask + 1) && qpn_grow(r))
        return VC_ERR_NOMEM;
    r->qpn_used++;
    qpn_put(r->qpn_key, r->qpn_rank, r->qpn_mask, qpn, rank);
    return VC_SUCCESS;
}

int rc_qpn_lookup(const rc_net_t *r, uint32_t qpn)
{
    if (!r->qpn_rank)
        return -1;
    for (uint32_t h = (qpn * 2654435761u) & r->qpn_mask;; h = (h + 1) & r->qpn_mask) {
        if (r->qpn_rank[h] < 0)
            return -1;
        if (r->qpn_key[h] == qpn)
            return r->qpn_rank[h];
    }
}

const char *const rc_no_text[RC_NO_COUNT] = {
    [RC_NO_NONE] = "no reason",
    [RC_NO_BUDGET] = "its RC QP budget is spent (VCOLL_RC_MAX_QP, or the device's max_qp)",
    [RC_NO_SRQ] = "its shared receive queue is full",
    [RC_NO_QP] = "ibv_create_qp failed (device limits)",
    [RC_NO_MEM] = "its receive buffers could not be allocated or registered",
    [RC_NO_UD] = "it could not open UD either",
};

int rc_qp_create(rc_net_t *r, int peer, char *why, size_t wlen)
{
    if (r->nqp >= r->max_qp) {
        snprintf(why, wlen, "QP budget of %d spent (VCOLL_RC_MAX_QP=%d, %s max_qp %d)",
                 r->max_qp, r->env->cfg->rc_max_qp, r->port.dev, r->dev_max_qp);
        return RC_NO_BUDGET;
    }
    int per = r->credits + RC_CREDIT_RESERVE;
    int spare = r->rx_spare >= per;      /* a dropped QP's share, still posted */
    if (!spare && r->rx_count + per > r->srq_cap) {
        snprintf(why, wlen, "SRQ of %d buffers full at %d peers (VCOLL_IB_RX_DEPTH lower "
                 "fits more)", r->srq_cap, r->nqp);
        return RC_NO_SRQ;
    }
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof ia);
    ia.send_cq = r->cq;
    ia.recv_cq = r->cq;
    ia.srq = r->srq;
    ia.qp_type = IBV_QPT_RC;
    ia.sq_sig_all = 0;     /* see RC_UNSIG_MAX */
    ia.cap.max_send_wr = (uint32_t)r->sq_depth;
    ia.cap.max_send_sge = (uint32_t)r->max_send_sge;
    struct ibv_qp *qp = net_verbs_create_qp(r->pd, &ia);
    if (!qp) {
        snprintf(why, wlen, "ibv_create_qp: %s (%d QPs, %s max_qp %d)", strerror(errno),
                 r->nqp, r->port.dev, r->dev_max_qp);
        return RC_NO_QP;
    }
    r->max_inline = ia.cap.max_inline_data;

    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = (uint8_t)r->port.port;
    /* peers only ever READ our exposed send buffers; no remote writes */
    a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                      IBV_QP_ACCESS_FLAGS)) {
        snprintf(why, wlen, "RESET->INIT on %s: %s", r->port.dev, strerror(errno));
        ibv_destroy_qp(qp);
        return RC_NO_QP;
    }
    /* its receive buffers before the QP can reach RTR (rc_qp_connect): from
       then on the peer may send */
    if ((!spare && rc_slab_add(r, per)) || rc_qpn_insert(r, qp->qp_num, peer)) {
        snprintf(why, wlen, "%d receive buffers of %zu B (ulimit -l?)", per,
                 r->base.max_packet);
        ibv_destroy_qp(qp);
        return RC_NO_MEM;
    }
    if (spare)
        r->rx_spare -= per;
    rc_peer_t *p = &r->peer[peer];
    p->qp = qp;
    /* PSNs only need to differ between incarnations; mix qpn and pid-ish */
    p->psn = (qp->qp_num * 2654435761u ^ (uint32_t)r->me * 40503u) & 0xffffff;
    p->sq_free = r->sq_depth;
    r->nqp++;
    return RC_NO_NONE;
}

/* A QP that never left INIT (the pair went to UD): its budget goes back.
   Its receive buffers stay in the SRQ, where any peer can use them. */
void rc_qp_drop(rc_net_t *r, int peer)
{
    rc_peer_t *p = &r->peer[peer];
    if (!p->qp)
        return;
    ibv_destroy_qp(p->qp);
    p->qp = NULL;
    r->nqp--;
    r->rx_spare += r->credits + RC_CREDIT_RESERVE;
}

int rc_qp_connect(rc_net_t *r, int peer, const rc_blob_t *h, uint32_t qpn,
                  uint32_t psn)
{
    rc_peer_t *p = &r->peer[peer];
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    enum ibv_mtu a_mtu = h->mtu < r->port.active_mtu ? (enum ibv_mtu)h->mtu
                                                      : r->port.active_mtu;
    a.path_mtu = a_mtu;
    a.dest_qp_num = qpn;
    a.rq_psn = psn;
    a.max_dest_rd_atomic = (uint8_t)r->rd_atom;
    a.min_rnr_timer = 12;     /* 0.64 ms; RNR cannot happen with credits */
    net_vport_ah_attr(&r->port, h->lid, h->gid, &a.ah_attr);
    if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        LOG_ERR("rc: rank %d -> rank %d: INIT->RTR failed on %s:%d: %s",
                r->me, peer, r->port.dev, r->port.port, strerror(errno));
        return VC_ERR_TRANSPORT;
    }

    p->rd_atom = (int)h->rd_atom < r->rd_atom ? (int)h->rd_atom : r->rd_atom;
    if (p->rd_atom < 1)
        p->rd_atom = 1;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)r->env->cfg->ib_timeout;
    a.retry_cnt = (uint8_t)r->env->cfg->ib_retry;
    a.rnr_retry = (uint8_t)r->env->cfg->ib_rnr_retry;
    a.sq_psn = p->psn;
    a.max_rd_atomic = (uint8_t)p->rd_atom;
    if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
                      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                      IBV_QP_MAX_QP_RD_ATOMIC)) {
        LOG_ERR("rc: rank %d -> rank %d: RTR->RTS failed: %s", r->me, peer,
                strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    /* READ chunk: a bounded burst of response packets (see rc.h) */
    size_t chunk = (size_t)RC_GET_CHUNK_PKTS * (size_t)net_vdev_mtu_bytes(a_mtu);
    if (chunk == 0 || chunk > RC_GET_CHUNK_CAP)
        chunk = RC_GET_CHUNK_CAP;
    if (r->port.max_msg_sz && chunk > r->port.max_msg_sz)
        chunk = r->port.max_msg_sz;
    p->get_chunk = chunk;
    p->credits = (int)h->credits;
    p->rqpn = qpn;
    if (r->env->boot->node_of && r->env->boot->node_of[peer] == r->env->boot->node_id)
        p->pid = (pid_t)h->pid;
    return VC_SUCCESS;
}
