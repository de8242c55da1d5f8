/*
 * ud_send.c -- the sending half of UD reliability: fragment a packet into the
 * peer's window, post it, take cumulative acknowledgements, resend.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "core/copy.h"
#include "vcoll.h"
#include "core/log.h"
#include "net/verbs/ud.h"

static int slot_get(ud_net_t *u)
{
    int s = u->tx_free;
    if (s < 0)
        return -1;
    u->tx_free = u->slot[s].next_free;
    u->tx_nfree--;
    u->slot[s].posted = 0;
    u->slot[s].acked = 0;
    u->slot[s].ctrl = 0;
    u->slot[s].sacked = 0;
    return s;
}

void ud_slot_put(ud_net_t *u, int s)
{
    u->slot[s].next_free = u->tx_free;
    u->tx_free = s;
    u->tx_nfree++;
}

static void tx_list_add(ud_net_t *u, ud_peer_t *p)
{
    if (p->on_tx)
        return;
    p->on_tx = 1;
    list_push_front(&u->tx_list, &p->tx_link);
}

void ud_tx_list_drop(ud_net_t *u, ud_peer_t *p)
{
    if (!p->on_tx)
        return;
    p->on_tx = 0;
    list_unlink(&p->tx_link);
}

/* Put n (<= UD_POST_BATCH) slots on the wire to p as one list of work
 * requests: one ibv_post_send, one doorbell. Every send carries the latest
 * cumulative acknowledgement and selective map for p, which settles
 * whatever we owed it. */
static int post_list(ud_net_t *u, ud_peer_t *p, const int *slots, int n)
{
    struct ibv_sge sge[UD_POST_BATCH];
    struct ibv_send_wr wr[UD_POST_BATCH], *bad = NULL;
    uint64_t sack = ud_ooo_sack(&p->ooo, p->expect);
    for (int k = 0; k < n; k++) {
        ud_slot_t *sl = &u->slot[slots[k]];
        char *buf = u->tx_buf + (size_t)slots[k] * u->mtu;
        ((ud_hdr_t *)buf)->ack = p->expect;
        ((ud_hdr_t *)buf)->sack = sack;
        sge[k] = (struct ibv_sge){.addr = (uintptr_t)buf, .length = sl->len,
                                  .lkey = u->tx_mr->lkey};
        memset(&wr[k], 0, sizeof wr[k]);
        /* the last of a list is always signaled: nothing may stay
           unretired behind an idle send queue */
        uint32_t pos = (u->sq_tail + (uint32_t)k) & UD_SQ_POS_MASK;
        int sig = k + 1 == n || ++u->sq_unsig >= UD_SIG_EVERY;
        if (sig)
            u->sq_unsig = 0;
        u->sq_ring[pos & u->sq_mask] = slots[k];
        wr[k].wr_id = pos;     /* the slot is sq_ring[pos] */
        wr[k].sg_list = &sge[k];
        wr[k].num_sge = 1;
        wr[k].opcode = IBV_WR_SEND;
        wr[k].send_flags = (sig ? IBV_SEND_SIGNALED : 0) |
                           (sl->len <= u->max_inline ? IBV_SEND_INLINE : 0);
        wr[k].wr.ud.ah = p->ah;
        wr[k].wr.ud.remote_qpn = p->qpn;
        wr[k].wr.ud.remote_qkey = u->qkey;
        wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
    }
    int err = ibv_post_send(u->qp, wr, &bad);
    /* the ones before bad went: their completions (flushed, if the QP is
       in error) come back and must find them counted */
    int went = err ? (bad ? (int)(bad - wr) : 0) : n;
    for (int k = 0; k < went; k++)
        u->slot[slots[k]].posted++;
    u->sq_tail = (u->sq_tail + (uint32_t)went) & UD_SQ_POS_MASK;
    u->sq_free -= went;
    u->n_tx += (uint64_t)went;
    if (err) {
        LOG_ERR("ud: rank %d -> rank %d: ibv_post_send of %d fragments failed at #%d: %s",
                u->me, p->rank, n, went, strerror(err));
        return VC_ERR_TRANSPORT;
    }
    p->owed = 0;
    p->owed_since = 0;
    p->ack_now = 0;
    return VC_SUCCESS;
}

int ud_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    ud_net_t *u = (ud_net_t *)n;
    if (!u || peer < 0 || peer >= u->size || peer == u->me || iovcnt < 0 ||
        (iovcnt && !iov))
        return VC_ERR_ARG;
    if (u->qp_broken)
        return VC_ERR_TRANSPORT;
    ud_peer_t *p = &u->peer[peer];
    int rc;
    if (p->state != UD_P_READY && (rc = ud_peer_ready(u, peer)))
        return rc == NET_AGAIN ? NET_AGAIN : VC_ERR_PEER_FAILED;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > u->base.max_packet)
        return VC_ERR_ARG;
    uint32_t nfrag = len ? (uint32_t)((len + p->frag - 1) / p->frag) : 1;
    /* all or nothing: a packet is never half in the window */
    if (p->next_seq - p->una + nfrag > p->wsize ||
        u->tx_nfree < (int)nfrag + UD_CTRL_RESERVE ||
        u->sq_free < (int)nfrag + UD_CTRL_RESERVE)
        return NET_AGAIN;

    if (p->una == p->next_seq) {
        p->rto_at = p->stall_since = 0;     /* armed by the next timer check */
        tx_list_add(u, p);
    }
    /* Short of window or buffers once this packet is out: ask for an ACK
       now rather than wait for the receiver's quarter-window one (which a
       window shared by many packets may never reach) or its timer. */
    int ackreq = p->next_seq - p->una + nfrag >= p->wsize - p->wsize / 4 ||
                 u->tx_nfree - (int)nfrag < u->tx_count / 4;
    int vi = 0, batch[UD_POST_BATCH], nb = 0;
    size_t voff = 0;
    for (uint32_t f = 0; f < nfrag; f++) {
        int s = slot_get(u);
        ud_slot_t *sl = &u->slot[s];
        char *buf = u->tx_buf + (size_t)s * u->mtu;
        ud_hdr_t *h = (ud_hdr_t *)buf;
        size_t want = len - (size_t)f * p->frag;
        if (want > p->frag)
            want = p->frag;
        h->src = (uint32_t)u->me;
        h->seq = p->next_seq;
        h->total = (uint32_t)len;
        h->type = UD_T_DATA;
        h->flags = (uint8_t)((f == 0 ? UD_F_FIRST : 0) |
                             (f + 1 == nfrag ? UD_F_LAST | (ackreq ? UD_F_ACKREQ : 0) : 0));
        h->pad = 0;
        char *dst = buf + sizeof *h;
        for (size_t got = 0; got < want;) {
            size_t take = iov[vi].iov_len - voff;
            if (take > want - got)
                take = want - got;
            core_copy(dst + got, (const char *)iov[vi].iov_base + voff, take);
            got += take;
            voff += take;
            if (voff == iov[vi].iov_len) {
                vi++;
                voff = 0;
            }
        }
        h->pad2 = 0;
        sl->len = (uint32_t)(sizeof *h + want);
        sl->peer = peer;
        p->win[p->next_seq & p->wmask] = s;
        p->next_seq++;
        u->unacked++;
        batch[nb++] = s;
        if ((nb == UD_POST_BATCH || f + 1 == nfrag) && post_list(u, p, batch, nb)) {
            u->qp_broken = 1;
            ud_peer_fail(u, peer, "posting a send failed (QP in error state?)");
            return VC_ERR_TRANSPORT;
        }
        if (nb == UD_POST_BATCH)
            nb = 0;
    }
    return VC_SUCCESS;
}

/* A standalone ACK or NAK: carries only the cumulative acknowledgement. */
int ud_send_ctrl(ud_net_t *u, ud_peer_t *p, int type)
{
    if (p->state != UD_P_READY || u->qp_broken)
        return VC_SUCCESS;
    if (u->sq_free <= 0 || u->tx_nfree <= 0)
        return NET_AGAIN;
    int s = slot_get(u);
    ud_slot_t *sl = &u->slot[s];
    ud_hdr_t *h = (ud_hdr_t *)(u->tx_buf + (size_t)s * u->mtu);
    memset(h, 0, sizeof *h);
    h->src = (uint32_t)u->me;
    h->type = (uint8_t)type;
    sl->len = sizeof *h;
    sl->peer = p->rank;
    sl->ctrl = 1;
    if (post_list(u, p, &s, 1)) {
        ud_slot_put(u, s);
        u->qp_broken = 1;
        ud_peer_fail(u, p->rank, "posting an acknowledgement failed (QP in error state?)");
        return VC_ERR_TRANSPORT;
    }
    if (type == UD_T_NAK)
        u->n_naks++;
    else
        u->n_acks++;
    return VC_SUCCESS;
}

/* Everything before ack arrived at p: release it. Stale or bogus values
 * (outside the window) are ignored. The map's fragments arrived too: they
 * are kept (only the cumulative ack frees a slot) but not resent. A stale
 * map is still true: the receiver never throws a kept fragment away. */
void ud_on_ack(ud_net_t *u, ud_peer_t *p, uint32_t ack, uint64_t sack)
{
    if (ud_seq_lt(p->una, ack) && !ud_seq_lt(p->next_seq, ack)) {
        while (p->una != ack) {
            int s = p->win[p->una & p->wmask];
            u->slot[s].acked = 1;
            if (u->slot[s].posted == 0)
                ud_slot_put(u, s);
            p->una++;
            u->unacked--;
        }
        p->resends = 0;
        p->rto_ns = u->rto_base_ns;
        if (p->una == p->next_seq)
            ud_tx_list_drop(u, p);
        else
            p->rto_at = p->stall_since = 0;     /* progress: the timers start again */
    }
    for (; sack; sack &= sack - 1) {
        uint32_t seq = ack + 1 + (uint32_t)__builtin_ctzll(sack);
        if (!ud_seq_lt(seq, p->una) && ud_seq_lt(seq, p->next_seq))
            u->slot[p->win[seq & p->wmask]].sacked = 1;
    }
}

/* Resend what the peer's map does not show, oldest first, as far as the
 * send queue allows. holes_only (a NAK): only below the highest fragment the
 * map shows and not already resent by an earlier NAK, and no back-off --
 * the peer told us exactly what is missing. Otherwise (the timeout):
 * everything not shown, and the timeout doubles. */
void ud_resend(ud_net_t *u, ud_peer_t *p, uint64_t now, int holes_only)
{
    if (!p->stall_since)        /* a NAK came before the timer was armed */
        p->stall_since = now;
    uint32_t from = p->una, to = p->next_seq;
    if (holes_only) {
        while (to != p->una && !u->slot[p->win[(to - 1) & p->wmask]].sacked)
            to--;
        if (to == p->una)       /* no map (it reaches 64 ahead): the oldest */
            to = p->una + 1;
        if (ud_seq_lt(from, p->fast_hi))
            from = p->fast_hi;  /* the holes below went at an earlier NAK */
        if (!ud_seq_lt(from, to))
            return;
    }
    int batch[UD_POST_BATCH], nb = 0;
    uint32_t s = from;
    for (; s != to; s++) {
        int sl = p->win[s & p->wmask];
        if (u->slot[sl].sacked)
            continue;
        if (u->sq_free - nb <= UD_CTRL_RESERVE)
            break;
        batch[nb++] = sl;
        if (nb == UD_POST_BATCH) {
            if (post_list(u, p, batch, nb))
                goto broken;
            u->n_resent += (uint64_t)nb;
            nb = 0;
        }
    }
    if (nb) {
        if (post_list(u, p, batch, nb))
            goto broken;
        u->n_resent += (uint64_t)nb;
    }
    p->fast_hi = s;
    if (holes_only) {
        p->rto_at = now + p->rto_ns;
        return;
    }
    p->resends++;
    p->rto_ns = p->rto_ns * 2 > UD_RTO_MAX_NS ? UD_RTO_MAX_NS : p->rto_ns * 2;
    p->rto_at = now + p->rto_ns;
    return;
broken:
    u->qp_broken = 1;
    ud_peer_fail(u, p->rank, "posting a resend failed (QP in error state?)");
}
