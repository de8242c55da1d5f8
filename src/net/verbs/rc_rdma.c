/*
 * rc_rdma.c -- rendezvous support: expose a send buffer for RDMA READ and
 * pull a peer's buffer with chunked READs.
 *
 * Registrations come from rc_reg.c: cached (kept for the next transfer
 * of the same buffer, dropped when its memory is unmapped) unless
 * VCOLL_RCACHE=off.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/log.h"
#include "net/verbs/rc.h"

/* net_key_t layout: 8-byte address, 4-byte rkey, 4 bytes zero */
static void key_pack(net_key_t *k, uint64_t addr, uint32_t rkey)
{
    memset(k, 0, sizeof *k);
    memcpy(k->b, &addr, 8);
    memcpy(k->b + 8, &rkey, 4);
}

int rc_mem_expose(net_t *n, const void *buf, size_t len, net_key_t *key,
                  void **handle)
{
    rc_net_t *r = (rc_net_t *)n;
    if (!r || !key || !handle || (len && !buf))
        return VC_ERR_ARG;
    *handle = NULL;
    if (len == 0) {
        key_pack(key, (uintptr_t)buf, 0);
        return VC_SUCCESS;
    }
    if (!r->pd)
        return VC_ERR_UNSUPPORTED;
    net_rcache_entry_t *e;
    int rc = rc_reg_get(r, buf, len, NET_RCACHE_READ, &e);
    if (rc)
        return rc;
    key_pack(key, (uintptr_t)buf, rc_reg_mr(e)->rkey);
    *handle = e;
    return VC_SUCCESS;
}

int rc_mem_release(net_t *n, void *handle)
{
    if (!n)
        return VC_ERR_ARG;
    if (handle)
        rc_reg_put((rc_net_t *)n, handle);
    return VC_SUCCESS;
}

static void pending_unlink(rc_net_t *r, rc_get_t *g)
{
    rc_get_t **pp = &r->get_head, *prev = NULL;
    while (*pp && *pp != g) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = g->next;
    if (r->get_tail == g)
        r->get_tail = prev;
    g->next = NULL;
}

static int get_finished(const rc_get_t *g)
{
    return g->inflight == 0 && (g->posted == g->len || g->status != VC_SUCCESS);
}

static void get_finish(rc_net_t *r, rc_get_t *g)
{
    pending_unlink(r, g);
    list_unlink(&g->live_link);
    rc_reg_put(r, g->reg);
    int status = g->status;
    void *cookie = g->cookie;
    free(g);
    r->base.up.get_done(r->base.up.arg, cookie, status);
}

/* Post as many READ chunks of g as the peer's send queue takes. */
static void get_post(rc_net_t *r, rc_get_t *g)
{
    rc_peer_t *p = &r->peer[g->peer];
    size_t maxc = p->get_chunk ? p->get_chunk : RC_GET_CHUNK_CAP;
    int pwin = p->rd_atom < RC_GET_PEER_WINDOW ? p->rd_atom : RC_GET_PEER_WINDOW;
    if (pwin < 1)
        pwin = 1;
    /* the windows bound the READ response bursts (see rc.h) */
    while (g->status == VC_SUCCESS && g->posted < g->len && p->sq_free > 0 &&
           p->rd_inflight < pwin && r->rd_inflight < RC_GET_WINDOW) {
        int op = rc_op_alloc(r);
        if (op < 0)
            break;
        size_t chunk = g->len - g->posted < maxc ? g->len - g->posted : maxc;
        r->op[op].kind = RC_OP_READ;
        r->op[op].peer = g->peer;
        r->op[op].get = g;
        struct ibv_sge sge = {
            .addr = (uintptr_t)(g->dst + g->posted),
            .length = (uint32_t)chunk,
            .lkey = rc_reg_mr(g->reg)->lkey,
        };
        struct ibv_send_wr wr, *bad;
        memset(&wr, 0, sizeof wr);
        wr.wr_id = (uint64_t)op;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = g->raddr + g->posted;
        wr.wr.rdma.rkey = g->rkey;
        int unsig = p->unsig;
        rc_op_signal(p, &r->op[op]);
        int err = ibv_post_send(p->qp, &wr, &bad);
        if (err) {
            p->unsig = unsig;
            rc_op_release(r, op);
            LOG_ERR("rc: rank %d <- rank %d: posting RDMA read of %zu B failed: %s",
                    r->me, g->peer, chunk, strerror(err));
            g->status = VC_ERR_TRANSPORT;
            break;
        }
        p->sq_free--;
        p->rd_inflight++;
        r->rd_inflight++;
        g->inflight++;
        g->posted += chunk;
    }
}

int rc_get(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
           const net_key_t *key, void *cookie)
{
    rc_net_t *r = (rc_net_t *)n;
    int rc = rc_peer_check(r, peer);
    if (rc)
        return rc;
    if (!key || (len && !dst))
        return VC_ERR_ARG;
    if (len == 0) {
        r->base.up.get_done(r->base.up.arg, cookie, VC_SUCCESS);
        return VC_SUCCESS;
    }
    rc_get_t *g = calloc(1, sizeof *g);
    if (!g)
        return VC_ERR_NOMEM;
    rc = rc_reg_get(r, dst, len, NET_RCACHE_WRITE, &g->reg);
    if (rc) {
        free(g);
        return rc;
    }
    g->peer = peer;
    g->dst = dst;
    g->len = len;
    g->raddr = raddr;
    memcpy(&g->rkey, key->b + 8, 4);
    g->cookie = cookie;
    g->status = VC_SUCCESS;

    /* first come, first served: older gets waiting for a window slot go
       first (rc_get_post_pending, from progress) */
    if (!r->get_head)
        get_post(r, g);
    if (g->status != VC_SUCCESS && g->inflight == 0) {
        int st = g->status;
        rc_reg_put(r, g->reg);
        free(g);
        return st;
    }
    list_push_front(&r->live, &g->live_link);
    if (g->posted < g->len && g->status == VC_SUCCESS) {
        if (r->get_tail)
            r->get_tail->next = g;
        else
            r->get_head = g;
        r->get_tail = g;
    }
    return VC_SUCCESS;
}

void rc_get_post_pending(rc_net_t *r)
{
    for (rc_get_t *g = r->get_head, *nx; g; g = nx) {
        nx = g->next;
        get_post(r, g);
        if (get_finished(g))
            get_finish(r, g);
        else if (g->posted == g->len || g->status != VC_SUCCESS)
            pending_unlink(r, g);    /* all posted (or failed): wait for CQEs */
    }
}

void rc_get_chunk_done(rc_net_t *r, rc_get_t *g, int status)
{
    g->inflight--;
    if (status != VC_SUCCESS && g->status == VC_SUCCESS)
        g->status = status;
    if (get_finished(g))
        get_finish(r, g);
}

void rc_get_fail_peer(rc_net_t *r, int peer)
{
    LIST_FOR_EACH_SAFE(n, nx, &r->live) {
        rc_get_t *g = LIST_ENTRY(n, rc_get_t, live_link);
        if (g->peer != peer)
            continue;
        if (g->status == VC_SUCCESS)
            g->status = VC_ERR_PEER_FAILED;
        if (get_finished(g))
            get_finish(r, g);
    }
}
