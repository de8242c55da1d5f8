/*
 * p2p_state.h -- matching queues and the send backlog.
 */
#ifndef VC_P2P_STATE_H
#define VC_P2P_STATE_H

#include <stdint.h>
#include "../core/request.h"
#include "proto.h"
#include "../progress/progress.h"

/* a message that arrived before its receive was posted */
typedef struct p2p_unexp {
    struct p2p_unexp *next;
    uint32_t ctx;
    int src, tag;
    int world_src;
    int rndv;                   /* 1: RTS (data still at the sender) */
    uint8_t flags;              /* RTS: P2P_F_* */
    uint64_t len;
    uint64_t sreq, addr;
    net_key_t key;
    uint8_t data[];             /* eager payload */
} p2p_unexp_t;

/* a packet (or a stream of DATA packets) waiting for room in the transport;
 * kept in order so messages to one peer never overtake each other */
typedef struct p2p_pending {
    struct p2p_pending *next;
    int world_peer;
    struct vc_request *req;     /* completes when sent (eager) / streams from (CTS) */
    int stream;                 /* 1: DATA packets of req from req->recvd up to req->expect */
    const void *payload;
    size_t plen;
    size_t hlen;
    uint8_t hdr[64];
} p2p_pending_t;


struct prog;

struct p2p_state {
    struct prog *prog;          /* the progress layer: transports, liveness */
    req_pool_t *reqs;           /* where requests come from (the context's) */
    size_t eager_limit;         /* VCOLL_EAGER_LIMIT */
    list_t posted;              /* receives in posting order, by link */
    p2p_unexp_t *unexp_head, *unexp_tail;
    p2p_pending_t *pend_head, *pend_tail;
    p2p_pending_t *pend_free;   /* recycled entries: a full ring is the common
                                   case in a windowed stream, malloc is not cheap */
    uint32_t *pend_count;       /* per world rank: entries in the backlog */
    uint32_t *pend_pass;        /* per world rank: retry-pass stamp of a refused send */
    uint32_t pass;
    unsigned rndv_live;         /* my rendezvous sends not yet freed (P2P_F_LONE) */
    list_t coll;                /* active non-blocking collectives, by link */
    unsigned test_polls;        /* tests of unfinished requests */
    double test_next_check;     /* when vc_test may probe peers next */
};


/* upcalls from the transports */
void p2p_on_packet(void *arg, int src, const void *pkt, size_t len);
/* 1 if a packet of len bytes has the size and fields its type requires
   (pure; the fuzz harness drives it and p2p_on_packet) */
int p2p_packet_check(const p2p_any_t *h, size_t len, size_t max_eager);
void p2p_on_get_done(void *arg, void *cookie, int status);
void p2p_on_peer_failed(void *arg, int peer, const char *why);

/* send one packet to a world rank now or queue it (keeps per-peer order) */
int p2p_post_packet(struct p2p_state *st, int world_peer, const void *hdr, size_t hlen,
                    const void *payload, size_t plen, struct vc_request *req);
int p2p_retry_pending(struct p2p_state *st);
/* the progress layer's poller (wait.c) */
int p2p_poll(void *arg);

#endif
