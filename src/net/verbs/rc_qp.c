/*
 * rc_qp.c -- one RC queue pair per peer: create (INIT) at open, RTR/RTS at
 * connect from the peer's endpoint blob; QP number -> rank map.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/ctx.h"
#include "core/log.h"
#include "net/verbs/rc.h"

int rc_qpn_insert(rc_net_t *r, uint32_t qpn, int rank)
{
    for (uint32_t h = (qpn * 2654435761u) & r->qpn_mask;; h = (h + 1) & r->qpn_mask) {
        if (r->qpn_rank[h] < 0 || r->qpn_key[h] == qpn) {
            r->qpn_key[h] = qpn;
            r->qpn_rank[h] = rank;
            return VC_SUCCESS;
        }
    }
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

int rc_qp_create(rc_net_t *r, int peer)
{
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
        LOG_ERR("rc: ibv_create_qp for rank %d on %s failed: %s", peer,
                r->port.dev, strerror(errno));
        return VC_ERR_TRANSPORT;
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
        LOG_ERR("rc: QP for rank %d: RESET->INIT failed: %s", peer, strerror(errno));
        ibv_destroy_qp(qp);
        return VC_ERR_TRANSPORT;
    }
    rc_peer_t *p = &r->peer[peer];
    p->qp = qp;
    /* PSNs only need to differ between incarnations; mix qpn and pid-ish */
    p->psn = (qp->qp_num * 2654435761u ^ (uint32_t)r->me * 40503u) & 0xffffff;
    p->sq_free = r->sq_depth;
    return rc_qpn_insert(r, qp->qp_num, peer);
}

int rc_qp_connect(rc_net_t *r, int peer, const rc_blob_hdr_t *h,
                  const rc_blob_qp_t *q)
{
    rc_peer_t *p = &r->peer[peer];
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    enum ibv_mtu a_mtu = h->mtu < r->port.active_mtu ? (enum ibv_mtu)h->mtu
                                                      : r->port.active_mtu;
    a.path_mtu = a_mtu;
    a.dest_qp_num = q->qpn;
    a.rq_psn = q->psn;
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
    a.timeout = (uint8_t)r->c->cfg.ib_timeout;
    a.retry_cnt = (uint8_t)r->c->cfg.ib_retry;
    a.rnr_retry = (uint8_t)r->c->cfg.ib_rnr_retry;
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
    p->connected = 1;
    return VC_SUCCESS;
}
