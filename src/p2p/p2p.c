/*
 * p2p.c -- tag matching and the eager / rendezvous protocols.
 * Only net.h is used below this file, so every transport gets the same
 * semantics: MPI matching on (context, source, tag) with wildcards, arrival
 * order preserved per peer, truncation reported without writing past the
 * receive buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/copy.h"
#include "vcoll.h"
#include "p2p.h"
#include "p2p_state.h"
#include "../core/log.h"

int p2p_post_stream(struct p2p_state *st, int peer, struct vc_request *req);

enum { PROTO_EAGER = 0, PROTO_RNDV = 1 };

/* A split receive (proto.h): getting the first part; getting the second
   part too (the claim was the receiver's, or the sender could not put);
   waiting for the sender's HELPED (the claim was the sender's) */
enum { SPLIT_NONE = 0, SPLIT_FIRST, SPLIT_SECOND, SPLIT_WAIT };

/* shm ignores the key; the split path runs only there */
static const net_key_t no_key;

/* does a receive for (ctx, source, tag), wildcards allowed, take a message
   that carries (mctx, msrc, mtag)? */
static inline int match_fields(uint32_t ctx, int source, int tag, uint32_t mctx, int msrc,
                               int mtag)
{
    return ctx == mctx && (source == VC_ANY_SOURCE || source == msrc) &&
           (tag == VC_ANY_TAG || tag == mtag);
}

static inline int matches(const struct vc_request *r, uint32_t ctx, int src, int tag)
{
    return match_fields(r->ctx, r->peer, r->tag, ctx, src, tag);
}

/* The header's source rank is only a claim: it must name, in the receive's
   communicator, the process the transport says the packet came from. A
   packet that fails this matches nothing (it is reported and dropped), so
   a confused or forged sender cannot complete someone else's receive. */
static inline int sender_ok(const struct vc_comm *comm, int src, int world_src)
{
    return src >= 0 && src < comm->size && comm_world_rank(comm, src) == world_src;
}

static inline int src_ok(const struct vc_request *r, int src, int world_src)
{
    return sender_ok(r->comm, src, world_src);
}

/* The oldest unexpected message a receive for (ctx, source, tag) on comm
 * matches: the one MPI's non-overtaking rule gives that receive (and the
 * one a probe must report). take = 1 unlinks it for the receive. A match
 * whose sender is not who it claims to be is dropped on the way, so a
 * probe never reports what a receive would refuse. */
static p2p_unexp_t *find_unexp(struct p2p_state *st, const struct vc_comm *comm, uint32_t ctx,
                               int source, int tag, int take)
{
    p2p_unexp_t *prev = NULL, *u = st->unexp_head;
    while (u) {
        p2p_unexp_t *next = u->next;
        if (!match_fields(ctx, source, tag, u->ctx, u->src, u->tag)) {
            prev = u;
            u = next;
            continue;
        }
        int ok = sender_ok(comm, u->src, u->world_src);
        if (ok && !take)
            return u;
        if (prev)
            prev->next = next;
        else
            st->unexp_head = next;
        if (st->unexp_tail == u)
            st->unexp_tail = prev;
        if (ok)
            return u;
        LOG_WARN("dropping a message from rank %d that claims to be rank %d of its "
                 "communicator", u->world_src, u->src);
        free(u);
        u = next;
    }
    return NULL;
}

/* largest payload the configured limit and the packet allow */
static inline size_t eager_room(const struct p2p_state *st, const net_t *n)
{
    size_t room = (n->eager_packet ? n->eager_packet : n->max_packet) - sizeof(p2p_hdr_t);
    return st->eager_limit < room ? st->eager_limit : room;
}

/* largest payload of a fan-in eager send: the eager room, or more where
   the transport takes larger packets for these (shm with more ranks than
   cores) */
static inline size_t fanin_room(const struct p2p_state *st, const net_t *n)
{
    size_t lim = eager_room(st, n);
    if (n->fanin_packet <= sizeof(p2p_hdr_t))
        return lim;
    size_t room = n->fanin_packet - sizeof(p2p_hdr_t);
    return room > lim ? room : lim;
}

/* largest payload that goes eagerly to this peer */
static inline size_t eager_max(const struct p2p_state *st, const net_t *n)
{
    size_t lim = eager_room(st, n);
    return n->eager_cap && n->eager_cap < lim ? n->eager_cap : lim;
}

static void finish_recv(struct vc_request *r, int src, int tag, uint64_t len)
{
    r->status.source = src;
    r->status.tag = tag;
    if (len > r->bytes) {
        r->status.error = VC_ERR_TRUNCATE;
        r->status.bytes = r->bytes;
    } else {
        r->status.bytes = (size_t)len;
    }
}

/* The receive is complete: release the sender (its buffer is no longer
   read) and the claim word. */
static void rndv_recv_done(struct p2p_state *st, struct vc_request *r)
{
    if (r->split) {
        net_t *n = st->prog->net_of[r->world_peer];
        n->ops->claim_close(n, r->world_peer, r->split_token);
        r->split = SPLIT_NONE;
    }
    if (r->status.error != VC_ERR_PEER_FAILED) {
        p2p_fin_t fin = {.type = P2P_FIN, .sreq = r->remote_req};
        int rc = p2p_post_packet(st, r->world_peer, &fin, sizeof fin, NULL, 0, NULL);
        if (rc && !r->status.error)
            r->status.error = rc;
    }
    r->done = 1;
}

/* The transport cannot pull (CMA refused): ask the sender to stream the
   whole message as DATA packets. */
static void rndv_stream(struct p2p_state *st, struct vc_request *r)
{
    r->expect = r->status.bytes;
    r->recvd = 0;
    p2p_cts_t cts = {.type = P2P_CTS, .sreq = r->remote_req, .rreq = req_handle(r),
                     .len = r->expect};
    int rc = p2p_post_packet(st, r->world_peer, &cts, sizeof cts, NULL, 0, NULL);
    if (rc) {
        r->status.error = rc;
        r->done = 1;
    }
}

/* The sender's part is mine (its claim word is, or the sender failed to
   put it): the sender never touches it now; get it, unless I failed. */
static void split_get_rest(struct p2p_state *st, struct vc_request *r)
{
    net_t *n = st->prog->net_of[r->world_peer];
    if (r->split_err == VC_ERR_UNSUPPORTED) {
        /* nobody writes into the buffer any more: stream it all */
        n->ops->claim_close(n, r->world_peer, r->split_token);
        r->split = SPLIT_NONE;
        rndv_stream(st, r);
        return;
    }
    if (r->split_err) {     /* (a truncated receive is no failure: status says so) */
        r->status.error = r->split_err;
        rndv_recv_done(st, r);
        return;
    }
    r->split = SPLIT_SECOND;
    int rc = n->ops->get(n, r->world_peer, (char *)r->buf + r->split_at,
                         r->status.bytes - r->split_at, r->split_raddr + r->split_at,
                         &no_key, r);
    if (rc) {
        r->status.error = rc;
        rndv_recv_done(st, r);
    }
}

/* My part of a split receive is in (status VC_SUCCESS) or failed: the
   sender's part is next. Take its claim word: won, I get that part myself
   (unless I failed already); lost, the sender is copying it and its
   HELPED completes the receive. */
static void split_settle(struct p2p_state *st, struct vc_request *r, int status)
{
    net_t *n = st->prog->net_of[r->world_peer];
    r->split_err = status;
    if (r->split_helped > 0 ||
        (r->split_helped == 0 && !n->ops->claim_take(n, r->world_peer, r->split_token, 1))) {
        if (r->split_helped)            /* HELPED came first */
            r->split_err ? split_get_rest(st, r) : rndv_recv_done(st, r);
        else
            r->split = SPLIT_WAIT;
        return;
    }
    split_get_rest(st, r);
}

/* Split copies (proto.h): when the transport can, ask the sender for the
   tail of a large message. Returns how much I get myself: the head when it
   asked, else all of it. The sender gets the last 7/16 (pages apart, so the
   two copies never share one) and I the first 9/16 -- I start at once, the
   sender when it next polls: np 2, 1 MiB, 6 runs each, halves 17-33 GB/s,
   9/16 32-34. */
static size_t split_ask(struct p2p_state *st, struct vc_request *r, net_t *n, uint64_t sreq,
                        uint64_t addr, size_t want, int flags)
{
    size_t at = want / 16 * 9 & ~(size_t)4095;
    size_t min = flags & P2P_F_LONE && n->split_lone_min ? n->split_lone_min : n->split_min;
    if (!at || !min || want < min || r->hot || flags & P2P_F_BUSY || !n->ops->put ||
        n->ops->claim_open(n, r->world_peer, &r->split_token))
        return want;
    p2p_help_t hp = {.type = P2P_HELP, .sreq = sreq, .rreq = req_handle(r),
                     .token = r->split_token, .off = at, .len = want - at,
                     .addr = (uint64_t)(uintptr_t)r->buf + at};
    if (p2p_post_packet(st, r->world_peer, &hp, sizeof hp, NULL, 0, NULL)) {
        n->ops->claim_close(n, r->world_peer, r->split_token);
        return want;
    }
    r->split = SPLIT_FIRST;
    r->split_helped = r->split_err = 0;
    r->split_at = at;
    r->split_raddr = addr;
    return at;
}

/* Start pulling a rendezvous message into r (matched receive). */
static void start_rndv_recv(struct p2p_state *st, struct vc_request *r, int world_src, int src,
                            int tag, uint64_t len, uint64_t sreq, uint64_t addr,
                            const net_key_t *key, int flags)
{
    net_t *n = st->prog->net_of[world_src];
    finish_recv(r, src, tag, len);
    r->world_peer = world_src;
    r->remote_req = sreq;
    r->proto = PROTO_RNDV;
    size_t want = r->status.bytes;
    if (!want) {
        /* nothing to pull: just release the sender */
        p2p_on_get_done(st, r, VC_SUCCESS);
        return;
    }
    if (want < n->pull_min ||
        (n->pull_alias_slow && core_copy_aliases(r->buf, (const void *)(uintptr_t)addr))) {
        /* the transport's pull costs more than the copies streaming adds
           at this size (shm: one process_vm_readv against a second copy),
           or at this pair of addresses (the kernel's copy cliff) */
        rndv_stream(st, r);
        return;
    }
    int rc = n->ops->get ? n->ops->get(n, world_src, r->buf, split_ask(st, r, n, sreq, addr, want, flags),
                                       addr, key, r)
                         : VC_ERR_UNSUPPORTED;
    if (rc == VC_SUCCESS)
        return;   /* completion arrives through p2p_on_get_done */
    if (r->split) {
        /* my part was refused: take the sender's back (or wait for it),
           never leaving a write into this buffer behind, then stream the
           message (CMA refused) or fail */
        split_settle(st, r, rc);
        return;
    }
    if (rc == VC_ERR_UNSUPPORTED) {
        rndv_stream(st, r);     /* the transport cannot pull */
        return;
    }
    r->status.error = rc;
    r->done = 1;
}

/* h and rts are the caller's private copies; only the payload after the
   header is read from the transport's buffer. */
static void on_matched(struct p2p_state *st, int world_src, const p2p_hdr_t *h,
                       const p2p_rts_t *rts, const void *pkt, size_t len)
{
    LIST_FOR_EACH(n, &st->posted) {
        struct vc_request *r = LIST_ENTRY(n, struct vc_request, link);
        if (!matches(r, h->ctx, h->src, h->tag))
            continue;
        if (!src_ok(r, h->src, world_src)) {
            LOG_WARN("dropping a message from rank %d that claims to be rank %d of its "
                     "communicator", world_src, h->src);
            return;
        }
        list_unlink(&r->link);
        if (h->type == P2P_EAGER) {
            finish_recv(r, h->src, h->tag, h->len);
            if (r->status.bytes)
                core_copy(r->buf, (const char *)pkt + sizeof *h, r->status.bytes);
            r->done = 1;
        } else {
            start_rndv_recv(st, r, world_src, h->src, h->tag, h->len, rts->sreq, rts->addr, &rts->key,
                            h->flags);
        }
        return;
    }
    /* unexpected: keep a copy (eager) or the sender's coordinates (RTS) */
    size_t payload = h->type == P2P_EAGER ? len - sizeof *h : 0;
    p2p_unexp_t *u = malloc(sizeof *u + payload);
    if (!u) {
        /* dropping it would lose a message silently: fail what involves
           its sender (and tell it), not the whole job */
        prog_peer_failed(st->prog, world_src, "this rank ran out of memory queueing an "
                           "unexpected message from it");
        return;
    }
    u->next = NULL;
    u->ctx = h->ctx;
    u->src = h->src;
    u->tag = h->tag;
    u->world_src = world_src;
    u->len = h->len;
    u->rndv = h->type == P2P_RTS;
    if (u->rndv) {
        u->sreq = rts->sreq;
        u->addr = rts->addr;
        u->key = rts->key;
        u->flags = h->flags;
    } else if (payload) {
        core_copy(u->data, (const char *)pkt + sizeof *h, payload);
    }
    if (st->unexp_tail)
        st->unexp_tail->next = u;
    else
        st->unexp_head = u;
    st->unexp_tail = u;
}

/* Sizes every packet type must have (EAGER: at least the header and
   exactly its announced payload; DATA: a header and some payload). h is a
   private copy of the packet's first min(len, sizeof *h) bytes. */
int p2p_packet_check(const p2p_any_t *h, size_t len, size_t max_eager)
{
    if (len < 1)
        return 0;
    switch (h->type) {
    case P2P_EAGER:
        return len >= sizeof h->h && h->h.len == len - sizeof h->h && h->h.len <= max_eager &&
               h->h.tag >= 0;
    case P2P_RTS: return len == sizeof h->rts && h->rts.h.tag >= 0;
    case P2P_FIN: return len == sizeof h->fin;
    case P2P_CTS: return len == sizeof h->cts;
    case P2P_DATA: return len > sizeof h->data;
    case P2P_HELP: return len == sizeof h->help;
    case P2P_HELPED: return len == sizeof h->helped;
    }
    return 0;
}

/* Drop what cannot be right, say so once per kind, never act on it. */
static void drop_packet(int src, const char *what, unsigned type)
{
    LOG_WARN("dropping a %s packet (type %u) from rank %d", what, type, src);
}

void p2p_on_packet(void *arg, int src, const void *pkt, size_t len)
{
    struct p2p_state *st = arg;
    if (src < 0 || src >= st->prog->size || !pkt)
        return;
    /* The packet may sit in memory its sender can still write (a shared
       memory cell): copy the fixed header once, then check and use only
       the copy -- a field read twice could pass the check and then change.
       (The copy also gives the fields their alignment.) */
    p2p_any_t h;
    memset(&h, 0, sizeof h);
    memcpy(&h, pkt, len < sizeof h ? len : sizeof h);
    uint8_t type = h.type;
    if (!p2p_packet_check(&h, len, st->prog->net_of[src]->max_packet)) {
        drop_packet(src, "malformed", type);
        return;
    }
    switch (type) {
    case P2P_EAGER:
    case P2P_RTS:
        on_matched(st, src, &h.h, &h.rts, pkt, len);
        break;
    case P2P_FIN: {
        const p2p_fin_t f = h.fin;
        struct vc_request *s = req_from_handle(st->reqs, f.sreq, REQ_SEND);
        if (!s || s->world_peer != src || s->proto != PROTO_RNDV) {
            drop_packet(src, "stale or forged FIN", type);
            break;
        }
        net_t *n = st->prog->net_of[src];
        if (s->mem_handle)
            n->ops->mem_release(n, s->mem_handle);
        s->mem_handle = NULL;
        s->done = 1;
        break;
    }
    case P2P_CTS: {
        const p2p_cts_t c = h.cts;
        struct vc_request *s = req_from_handle(st->reqs, c.sreq, REQ_SEND);
        if (!s || s->world_peer != src || s->proto != PROTO_RNDV) {
            drop_packet(src, "stale or forged CTS", type);
            break;
        }
        s->remote_req = c.rreq;
        s->expect = c.len < s->bytes ? c.len : s->bytes;
        s->recvd = 0;
        if (p2p_post_stream(st, src, s)) {
            s->status.error = VC_ERR_NOMEM;
            s->done = 1;
        }
        break;
    }
    case P2P_HELP: {
        /* copy my message's part into the receiver, if it is still mine to
           take: only within the message, only into the asking process */
        const p2p_help_t hp = h.help;
        struct vc_request *s = req_from_handle(st->reqs, hp.sreq, REQ_SEND);
        net_t *n = st->prog->net_of[src];
        if (!s || s->world_peer != src || s->proto != PROTO_RNDV || s->done ||
            hp.off > s->bytes || hp.len > s->bytes - hp.off || !hp.len || !n->ops->put) {
            drop_packet(src, "stale, forged or out-of-range HELP", type);
            break;
        }
        if (!n->ops->claim_take(n, src, hp.token, 0))
            break;      /* the receiver took it back */
        p2p_helped_t ok = {.type = P2P_HELPED, .rreq = hp.rreq,
                           .status = n->ops->put(n, src, hp.token,
                                                 (const char *)s->buf + hp.off, hp.len,
                                                 hp.addr)};
        if (p2p_post_packet(st, src, &ok, sizeof ok, NULL, 0, NULL)) {
            s->status.error = VC_ERR_NOMEM;
            s->done = 1;
        }
        break;
    }
    case P2P_HELPED: {
        const p2p_helped_t hd = h.helped;
        struct vc_request *r = req_from_handle(st->reqs, hd.rreq, REQ_RECV);
        if (!r || r->world_peer != src || r->proto != PROTO_RNDV || r->done ||
            (r->split != SPLIT_FIRST && r->split != SPLIT_WAIT) || r->split_helped) {
            drop_packet(src, "stale or forged HELPED", type);
            break;
        }
        /* before my own part is in (a transport whose get completes
           later), split_settle reads this then */
        r->split_helped = hd.status == VC_SUCCESS ? 1 : -1;
        if (r->split == SPLIT_WAIT) {
            if (r->split_helped > 0 && !r->split_err)
                rndv_recv_done(st, r);
            else
                split_get_rest(st, r);   /* the sender could not put it */
        }
        break;
    }
    case P2P_DATA: {
        const p2p_data_t d = h.data;
        struct vc_request *r = req_from_handle(st->reqs, d.rreq, REQ_RECV);
        size_t n = len - sizeof d;
        /* only a streamed receive from this very peer takes DATA, and only
           inside the bytes it asked for */
        if (!r || r->world_peer != src || r->proto != PROTO_RNDV ||
            d.off > r->expect || n > r->expect - d.off) {
            drop_packet(src, "stale, forged or out-of-range DATA", type);
            break;
        }
        core_copy((char *)r->buf + d.off, (const char *)pkt + sizeof d, n);
        r->recvd += n;
        if (r->recvd >= r->expect)
            r->done = 1;
        break;
    }
    }
}

void p2p_on_get_done(void *arg, void *cookie, int status)
{
    struct p2p_state *st = arg;
    struct vc_request *r = cookie;
    if (r->split == SPLIT_FIRST) {
        split_settle(st, r, status);
        return;
    }
    if (status == VC_ERR_UNSUPPORTED) {
        /* a queued pull the transport can no longer make (CMA refused
           after it had worked): stream it, as a refused get() would be */
        rndv_stream(st, r);
        return;
    }
    if (status)
        r->status.error = status;
    rndv_recv_done(st, r);
}

/* a transport found a peer dead: the progress layer's table records it
   (the waits that involve the peer fail from there) */
void p2p_on_peer_failed(void *arg, int peer, const char *why)
{
    struct p2p_state *st = arg;
    prog_peer_failed(st->prog, peer, why);
}

int p2p_fail_if_dead(struct p2p_state *st, struct vc_request *r)
{
    const prog_t *p = st->prog;
    if (r->done || !p->ndead || r->kind == REQ_COLL)
        return 0;
    /* a collective's message fails with its communicator: a rank waiting
       behind a live peer that waits on the dead one would hang otherwise */
    int w = r->world_peer, group = w < 0 || (r->ctx & 1);
    if (!(w >= 0 && p->dead[w]) && !(group && r->comm && prog_comm_has_dead(p, r->comm)))
        return 0;
    /* a live sender is copying its part of a split receive into the
       buffer: failing now would leave that write behind; its HELPED comes
       within the copy's time */
    if (r->split == SPLIT_WAIT && !p->dead[w])
        return 0;
    p2p_cancel(st, r);
    r->status.error = VC_ERR_PEER_FAILED;
    r->done = 1;
    return 1;
}

static inline p2p_hdr_t eager_hdr(const struct vc_comm *comm, int ctx_off, int tag,
                                  size_t bytes)
{
    return (p2p_hdr_t){.type = P2P_EAGER, .ctx = comm->ctx + (uint32_t)ctx_off,
                       .src = comm->rank, .tag = tag, .len = bytes};
}

/* Blocking eager send with room in the transport: no request object, one
 * copy into the ring. Returns NET_AGAIN when the general path must run. */
int p2p_send_fast(const void *buf, size_t bytes, int dest, int tag, struct vc_comm *comm,
                  int ctx_off, int flags)
{
    int wdest = comm_world_rank(comm, dest);
    struct p2p_state *st = comm->p2p;
    net_t *n = st->prog->net_of[wdest];
    size_t lim = flags & P2P_SEND_EAGER ? fanin_room(st, n) : eager_max(st, n);
    if (bytes > lim || st->pend_count[wdest])
        return NET_AGAIN;
    p2p_hdr_t h = eager_hdr(comm, ctx_off, tag, bytes);
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)buf, bytes}};
    return n->ops->send(n, wdest, iov, bytes ? 2 : 1);
}

/* A rendezvous send freed before its FIN (failed, cancelled, its peer
   dead) still holds the exposed buffer's registration: give it back. */
static void send_release(struct vc_request *r)
{
    if (r->mem_handle && r->net && r->net->ops->mem_release)
        r->net->ops->mem_release(r->net, r->mem_handle);
    r->mem_handle = NULL;
    if (r->live)
        --*r->live;
    r->live = NULL;
}

int p2p_isend(const void *buf, size_t bytes, int dest, int tag, struct vc_comm *comm,
              int ctx_off, struct vc_request **out)
{
    struct p2p_state *st = comm->p2p;
    struct vc_request *r = req_alloc(st->reqs, REQ_SEND);
    if (!r)
        return VC_ERR_NOMEM;
    int wdest = comm_world_rank(comm, dest);
    net_t *n = st->prog->net_of[wdest];
    r->comm = comm;
    r->ctx = comm->ctx + (uint32_t)ctx_off;
    r->peer = dest;
    r->world_peer = wdest;
    r->tag = tag;
    r->buf = (void *)buf;
    r->bytes = bytes;
    r->net = n;
    r->status.source = dest;
    r->status.tag = tag;
    r->status.bytes = bytes;
    *out = r;

    int rc;
    if (bytes <= eager_max(st, n)) {
        p2p_hdr_t h = eager_hdr(comm, ctx_off, tag, bytes);
        rc = p2p_post_packet(st, wdest, &h, sizeof h, buf, bytes, r);
    } else {
        /* receives of mine waiting for data: I will be copying those */
        uint8_t fl = !list_empty(&st->posted) ? P2P_F_BUSY : st->rndv_live ? 0 : P2P_F_LONE;
        p2p_rts_t rts = {.h = {.type = P2P_RTS, .flags = fl,
                               .ctx = r->ctx, .src = comm->rank, .tag = tag, .len = bytes},
                         .sreq = req_handle(r), .addr = (uint64_t)(uintptr_t)buf};
        r->proto = PROTO_RNDV;
        r->release = send_release;
        /* a transport without a pull path (UD) has nothing to expose: the
           receiver answers with CTS and the data is streamed */
        rc = n->ops->mem_expose ? n->ops->mem_expose(n, buf, bytes, &rts.key, &r->mem_handle)
                                : VC_SUCCESS;
        if (rc == VC_SUCCESS)
            rc = p2p_post_packet(st, wdest, &rts, sizeof rts, NULL, 0, NULL);
        if (rc == VC_SUCCESS) {
            st->rndv_live++;
            r->live = &st->rndv_live;
        }
    }
    if (rc) {
        r->status.error = rc;
        r->done = 1;
    }
    return VC_SUCCESS;
}

int p2p_irecv(void *buf, size_t bytes, int source, int tag, struct vc_comm *comm,
              int ctx_off, int flags, struct vc_request **out)
{
    struct p2p_state *st = comm->p2p;
    struct vc_request *r = req_alloc(st->reqs, REQ_RECV);
    if (!r)
        return VC_ERR_NOMEM;
    r->comm = comm;
    r->ctx = comm->ctx + (uint32_t)ctx_off;
    r->peer = source;
    r->world_peer = source == VC_ANY_SOURCE ? -1 : comm_world_rank(comm, source);
    r->tag = tag;
    r->buf = buf;
    r->bytes = bytes;
    r->hot = flags & P2P_RECV_HOT;
    *out = r;

    p2p_unexp_t *u = find_unexp(st, comm, r->ctx, source, tag, 1);
    if (u) {
        if (u->rndv) {
            start_rndv_recv(st, r, u->world_src, u->src, u->tag, u->len, u->sreq, u->addr, &u->key,
                            u->flags);
        } else {
            finish_recv(r, u->src, u->tag, u->len);
            if (r->status.bytes)
                core_copy(buf, u->data, r->status.bytes);
            r->done = 1;
        }
        free(u);
        return VC_SUCCESS;
    }
    list_push_back(&st->posted, &r->link);
    return VC_SUCCESS;
}

/* One look: progress once, then the oldest matching unexpected message.
 * An RTS carries the full message length, so rendezvous and streamed
 * messages report their size before any data has moved. */
static int probe_once(struct vc_request *w, int *found, vc_status_t *status)
{
    struct p2p_state *st = w->comm->p2p;
    int events = prog_poll(st->prog);
    p2p_unexp_t *u = find_unexp(st, w->comm, w->ctx, w->peer, w->tag, 0);
    *found = u != NULL;
    if (u && status) {
        status->source = u->src;
        status->tag = u->tag;
        status->error = VC_SUCCESS;
        status->bytes = (size_t)u->len;
    }
    return events;
}

/* The receive a probe stands for, never posted: the liveness checks take
   it like any receive (and fail it when its peer is dead). */
static struct vc_request probe_shadow(int source, int tag, struct vc_comm *comm, int ctx_off)
{
    return (struct vc_request){
        .kind = REQ_RECV, .comm = comm, .ctx = comm->ctx + (uint32_t)ctx_off, .peer = source,
        .world_peer = source == VC_ANY_SOURCE ? -1 : comm_world_rank(comm, source), .tag = tag};
}

int p2p_iprobe(int source, int tag, struct vc_comm *comm, int ctx_off, int *flag,
               vc_status_t *status)
{
    struct vc_request w = probe_shadow(source, tag, comm, ctx_off);
    probe_once(&w, flag, status);
    if (!*flag)
        p2p_test_idle(comm->p2p, &w);   /* a polling loop of iprobes must see a death too */
    return w.done ? w.status.error : VC_SUCCESS;
}

int p2p_probe(int source, int tag, struct vc_comm *comm, int ctx_off, vc_status_t *status)
{
    struct vc_request w = probe_shadow(source, tag, comm, ctx_off);
    unsigned idle = 0;
    double next_check = 0;
    for (;;) {
        int found;
        int events = probe_once(&w, &found, status);
        if (found)
            return VC_SUCCESS;
        if (events > 0) {
            idle = 0;
            continue;
        }
        /* nothing is owed to a probe: without this it would spin forever
           once the peer is gone */
        p2p_idle_step(comm->p2p, &idle, &next_check, &w,
                      prog_spin_for(comm->p2p->prog, w.world_peer));
        if (w.done)
            return w.status.error;
    }
}

int p2p_init(prog_t *p, req_pool_t *reqs, size_t eager_limit, struct p2p_state **out)
{
    struct p2p_state *st = calloc(1, sizeof *st);
    if (!st)
        return VC_ERR_NOMEM;
    list_init(&st->posted);
    list_init(&st->coll);
    st->prog = p;
    st->reqs = reqs;
    st->eager_limit = eager_limit;
    st->pend_count = calloc((size_t)p->size, sizeof *st->pend_count);
    st->pend_pass = calloc((size_t)p->size, sizeof *st->pend_pass);
    int rc = st->pend_count && st->pend_pass ? prog_add_poller(p, p2p_poll, st) : VC_ERR_NOMEM;
    if (rc) {
        free(st->pend_count);
        free(st->pend_pass);
        free(st);
        return rc;
    }
    *out = st;
    return VC_SUCCESS;
}

struct prog *p2p_prog(struct p2p_state *st)
{
    return st->prog;
}

struct vc_request *p2p_req_alloc(struct p2p_state *st, int kind)
{
    return req_alloc(st->reqs, kind);
}

void p2p_fini(struct p2p_state *st)
{
    if (!st)
        return;
    while (st->unexp_head) {
        p2p_unexp_t *n = st->unexp_head->next;
        free(st->unexp_head);
        st->unexp_head = n;
    }
    while (st->pend_head) {
        p2p_pending_t *n = st->pend_head->next;
        free(st->pend_head);
        st->pend_head = n;
    }
    while (st->pend_free) {
        p2p_pending_t *n = st->pend_free->next;
        free(st->pend_free);
        st->pend_free = n;
    }
    free(st->pend_count);
    free(st->pend_pass);
    free(st);
}
