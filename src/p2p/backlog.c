/*
 * backlog.c -- packets the transport could not take yet.
 * A transport's send never blocks (NET_AGAIN instead), so two ranks that
 * fill each other's rings keep draining their receives while their sends
 * wait here. Once a peer has anything queued, later packets to it queue
 * behind, which keeps MPI's per-pair order.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "p2p_state.h"
#include "../core/log.h"

static int try_send(net_t *n, int peer, const void *hdr, size_t hlen,
                    const void *payload, size_t plen)
{
    struct iovec iov[2] = {{(void *)hdr, hlen}, {(void *)payload, plen}};
    return n->ops->send(n, peer, iov, plen ? 2 : 1);
}

static void append(struct p2p_state *st, p2p_pending_t *p)
{
    if (st->pend_tail)
        st->pend_tail->next = p;
    else
        st->pend_head = p;
    st->pend_tail = p;
    st->pend_count[p->world_peer]++;
}

static p2p_pending_t *pend_new(struct p2p_state *st)
{
    p2p_pending_t *p = st->pend_free;
    if (!p)
        return calloc(1, sizeof *p);
    st->pend_free = p->next;
    memset(p, 0, offsetof(p2p_pending_t, hdr));   /* hdr is always overwritten */
    return p;
}

/* unlink p (whose predecessor is prev) and recycle it */
static void drop(struct p2p_state *st, p2p_pending_t *prev, p2p_pending_t *p)
{
    if (prev)
        prev->next = p->next;
    else
        st->pend_head = p->next;
    if (st->pend_tail == p)
        st->pend_tail = prev;
    st->pend_count[p->world_peer]--;
    p->next = st->pend_free;
    st->pend_free = p;
}

int p2p_post_packet(struct p2p_state *st, int peer, const void *hdr, size_t hlen, const void *payload,
                    size_t plen, struct vc_request *req)
{
    if (!st->pend_count[peer]) {
        int rc = try_send(st->prog->net_of[peer], peer, hdr, hlen, payload, plen);
        if (rc == VC_SUCCESS) {
            if (req)
                req->done = 1;
            return VC_SUCCESS;
        }
        if (rc != NET_AGAIN)
            return rc;
    }
    p2p_pending_t *p = pend_new(st);
    if (!p)
        return VC_ERR_NOMEM;
    p->world_peer = peer;
    p->req = req;
    p->payload = payload;
    p->plen = plen;
    p->hlen = hlen;
    memcpy(p->hdr, hdr, hlen);
    append(st, p);
    return VC_SUCCESS;
}

/* queue the DATA stream of a send request (streamed rendezvous) */
int p2p_post_stream(struct p2p_state *st, int peer, struct vc_request *req)
{
    p2p_pending_t *p = pend_new(st);
    if (!p)
        return VC_ERR_NOMEM;
    p->world_peer = peer;
    p->req = req;
    p->stream = 1;
    append(st, p);
    return VC_SUCCESS;
}

/* send as many DATA packets of the stream as the transport takes;
 * returns 1 when the whole stream is out */
static int pump_stream(struct p2p_state *st, p2p_pending_t *p, int *events)
{
    struct vc_request *r = p->req;
    net_t *n = st->prog->net_of[p->world_peer];
    size_t chunk = (n->eager_packet ? n->eager_packet : n->max_packet) - sizeof(p2p_data_t);
    while (r->recvd < r->expect) {
        size_t len = r->expect - r->recvd < chunk ? r->expect - r->recvd : chunk;
        p2p_data_t d = {.type = P2P_DATA, .rreq = r->remote_req, .off = r->recvd};
        int rc = try_send(n, p->world_peer, &d, sizeof d, (const char *)r->buf + r->recvd, len);
        if (rc == NET_AGAIN)
            return 0;
        if (rc) {
            r->status.error = rc;
            break;
        }
        r->recvd += len;
        (*events)++;
    }
    r->done = 1;
    return 1;
}

int p2p_retry_pending(struct p2p_state *st)
{
    int events = 0;
    if (!st->pend_head)
        return 0;
    st->pass++;
    p2p_pending_t *prev = NULL, *p = st->pend_head;
    while (p) {
        p2p_pending_t *next = p->next;
        int peer = p->world_peer, sent = 0;
        if (st->pend_pass[peer] != st->pass) {
            if (p->stream) {
                sent = pump_stream(st, p, &events);
            } else {
                int rc = try_send(st->prog->net_of[peer], peer, p->hdr, p->hlen, p->payload, p->plen);
                if (rc != NET_AGAIN) {
                    sent = 1;
                    events++;
                    if (p->req) {   /* an eager send: complete once out */
                        if (rc)
                            p->req->status.error = rc;
                        p->req->done = 1;
                    }
                }
            }
            if (!sent)
                st->pend_pass[peer] = st->pass;   /* keep order: skip its later packets */
        }
        if (sent)
            drop(st, prev, p);
        else
            prev = p;
        p = next;
    }
    return events;
}

void p2p_cancel(struct p2p_state *st, struct vc_request *r)
{
    if (r->kind == REQ_RECV) {
        LIST_FOR_EACH(n, &st->posted)
            if (n == &r->link) {
                list_unlink(n);
                break;
            }
    }
    p2p_pending_t *prev = NULL, *p = st->pend_head;
    while (p) {
        p2p_pending_t *next = p->next;
        if (p->req == r)
            drop(st, prev, p);
        else
            prev = p;
        p = next;
    }
}
