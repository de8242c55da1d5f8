/*
 * rc.h -- verbs RC transport internals (the public seam is net.h:
 * net_rc_open / net_rc_connect).
 *
 * Shape: one PD, one CQ (send + receive), one SRQ of eager buffers, one RC QP
 * per peer. Packets go as SEND_WITH_IMM; the immediate carries receive
 * credits returned to the peer, so the payload is exactly the caller's packet
 * and the source rank comes from the QP number.
 *
 * Flow control (why nothing can overflow):
 *  - The SRQ holds, per peer, `credits` buffers plus RC_CREDIT_RESERVE for
 *    credit-only messages. A sender spends one credit per data packet and
 *    gets it back when the receiver reposted the buffer (piggybacked on the
 *    receiver's next packet, or a zero-byte credit-only message once half the
 *    window is owed). Credit-only messages need no credit: at most
 *    credits / (credits/2) = 2 of them can be unread at the peer, because each
 *    returns at least half a window the peer must have spent first.
 *  - Each QP's send queue has sq_depth slots and every WR is signaled; the
 *    CQ is sized for every receive plus every send that can be outstanding.
 *  - send() returns NET_AGAIN when credits, SQ slots or tx buffers run out.
 */
#ifndef VC_NET_VERBS_RC_H
#define VC_NET_VERBS_RC_H

#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#include "net/net.h"
#include "net/verbs/device.h"
#include "net/verbs/rcache.h"

#define RC_BLOB_KEY        "vc.rc"
#define RC_BLOB_MAGIC      0x76635232u    /* "vcR2", bump on layout change */
#define RC_CREDIT_RESERVE  3
#define RC_IMM_CREDIT_ONLY 0x80000000u    /* no payload, only returns credits */
#define RC_IMM_CREDIT_MASK 0x0000ffffu
#define RC_MAX_CREDITS     4096           /* fits the 16-bit immediate field */
/* RDMA READ pacing. A READ is answered by one response packet per path MTU,
   and a responder sends them back to back with no flow control of its own
   (rxe: read responses bypass the requester-side skb throttle that SENDs and
   WRITEs get). Large windows therefore arrive as bursts of thousands of
   packets; rxe over a real netdev drops most of them (veth backlog, "Failed
   sending ACK"), every retry re-requests the whole window, and the transfer
   livelocks: 16 x 1 MiB READs in flight across two rxe devices never
   completed, 4 x 64 KiB ran at WRITE speed. So a chunk is a bounded number of
   MTU packets, and few chunks are in flight per peer and per process; that
   still covers the bandwidth-delay product of real fabrics many times. */
#define RC_GET_CHUNK_PKTS  64             /* packets per READ chunk */
#define RC_GET_CHUNK_CAP   (1u << 20)     /* and never more bytes than this */
#define RC_GET_PEER_WINDOW 4              /* READ chunks in flight per peer */
#define RC_GET_WINDOW      8              /* ... and per process */
#define RC_POLL_BATCH      32

/* Endpoint blob published with boot_put(RC_BLOB_KEY). */
typedef struct rc_blob_hdr {
    uint32_t magic;
    uint32_t nranks;          /* entries in qp[] (world size) */
    uint16_t lid;
    uint8_t  mtu;             /* enum ibv_mtu (active) */
    uint8_t  link_layer;
    uint8_t  gid[16];
    int32_t  gid_index;       /* -1: IB without GRH */
    uint32_t max_packet;      /* my eager receive buffer size */
    uint32_t credits;         /* receive buffers I reserve for each peer */
    uint32_t rd_atom;         /* RDMA READs I accept in flight per QP */
    int32_t  pid;             /* liveness check for peers on the same node */
} rc_blob_hdr_t;

typedef struct rc_blob_qp {
    uint32_t qpn;             /* 0 = no QP for that rank */
    uint32_t psn;
} rc_blob_qp_t;

enum { RC_OP_FREE, RC_OP_SEND, RC_OP_CREDIT, RC_OP_READ };

struct rc_get;

/* One posted send-queue WR; wr_id is its index. */
typedef struct rc_op {
    int kind;
    int peer;
    int txbuf;                /* tx buffer index or -1 (inline / none) */
    struct rc_get *get;       /* RC_OP_READ */
    int next_free;
    int retire;               /* send-queue slots this completion frees: itself
                                 plus the unsignaled WRs posted before it */
} rc_op_t;

/* Inline sends need nothing back from their completion, so most go
 * unsignaled: one CQE per RC_UNSIG_MAX of them instead of one each (a CQE
 * costs a poll and, on rxe, a kernel round trip). RC completes a QP's send
 * WRs in order, so the next signaled completion retires them all. Error
 * completions are generated even for unsignaled WRs; their wr_id carries
 * RC_UNSIG_WRID and the peer. */
#define RC_UNSIG_MAX 16
#define RC_UNSIG_WRID (1ull << 62)

typedef struct rc_get {
    struct rc_get *next;      /* pending-post list */
    struct rc_get *lnext, *lprev;   /* every live get (for close) */
    int peer;
    char *dst;
    size_t len, posted;
    uint64_t raddr;
    uint32_t rkey;
    struct net_rcache_entry *reg;   /* dst's registration (local write) */
    int inflight;             /* READ WRs not yet completed */
    int status;
    void *cookie;
} rc_get_t;

typedef struct rc_peer {
    struct ibv_qp *qp;
    uint32_t psn;
    int connected;
    int dead;
    int credits;              /* data packets I may still send */
    int owed;                 /* peer buffers I reposted but not yet reported */
    int sq_free;              /* free send-queue slots */
    int unsig;                /* unsignaled WRs since the last signaled one */
    int rd_atom;              /* initiator depth agreed with the peer */
    int rd_inflight;          /* READ WRs posted, not yet completed */
    size_t get_chunk;         /* READ chunk bytes (path MTU based) */
    pid_t pid;                /* > 0 when the peer is on this node */
} rc_peer_t;

typedef struct rc_net {
    net_t base;               /* must be first */
    struct vc_ctx *c;
    int me, size;

    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    net_vport_t port;         /* the chosen device/port */
    char why[256];            /* why this HCA (topo) */
    uint32_t max_inline;
    int max_send_sge;
    int rd_atom;

    rc_peer_t *peer;          /* [size]; qp == NULL for ranks not served */
    int ncand;                /* QPs created */
    int credits;              /* per-peer receive window */
    int sq_depth;

    /* QP number -> world rank (open addressing, power-of-two size) */
    uint32_t *qpn_key;
    int *qpn_rank;
    uint32_t qpn_mask;

    char *rx_buf;
    struct ibv_mr *rx_mr;
    int rx_count;

    char *tx_buf;
    struct ibv_mr *tx_mr;
    int tx_count;
    int *tx_free;
    int tx_nfree;

    rc_op_t *op;
    int op_count;
    int op_free;              /* head of free list */

    rc_get_t *get_head, *get_tail;   /* gets with chunks still to post */
    rc_get_t *live;           /* every get not yet reported done */
    int rd_inflight;          /* READ WRs in flight, all peers */
    int credit_pending;       /* some peer owes credits but could not post */
    struct net_rcache *rcache;       /* rendezvous registrations (rc_reg.c) */
    int odp;                  /* they are made on-demand-paging */
    int hooked;               /* the memory hooks invalidate them */
    int in_progress;          /* guards against re-entry from upcalls */
    int fault_peer;           /* VCOLL_FAULT_RC_ERR: QP to break, or -1 */
    int fault_after;          /* ... after this many more sends to it */
} rc_net_t;

/* rc_qp.c */
int rc_qp_create(rc_net_t *r, int peer);
int rc_qp_connect(rc_net_t *r, int peer, const rc_blob_hdr_t *h,
                  const rc_blob_qp_t *q);
int rc_qpn_insert(rc_net_t *r, uint32_t qpn, int rank);
int rc_qpn_lookup(const rc_net_t *r, uint32_t qpn);

/* Can peer be sent to / read from? VC_ERR_ARG for a rank this transport
 * does not serve, VC_ERR_PEER_FAILED once its QP has failed. */
static inline int rc_peer_check(const rc_net_t *r, int peer)
{
    if (!r || peer < 0 || peer >= r->size)
        return VC_ERR_ARG;
    if (r->peer[peer].dead)
        return VC_ERR_PEER_FAILED;
    return r->peer[peer].connected ? VC_SUCCESS : VC_ERR_ARG;
}

/* rc_send.c */
int rc_send(net_t *n, int peer, const struct iovec *iov, int iovcnt);
int rc_op_alloc(rc_net_t *r);
void rc_op_release(rc_net_t *r, int i);
void rc_op_signal(rc_peer_t *p, rc_op_t *o);
int rc_send_credits(rc_net_t *r, int peer);
void rc_flush_credits(rc_net_t *r);

/* rc_progress.c */
int rc_progress(net_t *n);
int rc_post_recv(rc_net_t *r, int idx);
void rc_peer_fail(rc_net_t *r, int peer, const char *op, struct ibv_wc *wc,
                  const char *text);
int rc_check_peer(net_t *n, int peer);

/* rc_reg.c: registrations of user buffers for rendezvous, through the
 * registration cache. kind is NET_RCACHE_READ (peers read it) or
 * NET_RCACHE_WRITE (READ responses land in it). */
int rc_reg_open(rc_net_t *r);
void rc_reg_close(rc_net_t *r);
int rc_reg_get(rc_net_t *r, const void *buf, size_t len, int kind,
               struct net_rcache_entry **out);
void rc_reg_put(rc_net_t *r, struct net_rcache_entry *e);
static inline struct ibv_mr *rc_reg_mr(const struct net_rcache_entry *e)
{
    return (struct ibv_mr *)e->reg;
}

/* rc_rdma.c */
int rc_mem_expose(net_t *n, const void *buf, size_t len, net_key_t *key,
                  void **handle);
int rc_mem_release(net_t *n, void *handle);
int rc_get(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
           const net_key_t *key, void *cookie);
void rc_get_post_pending(rc_net_t *r);
void rc_get_chunk_done(rc_net_t *r, rc_get_t *g, int status);
void rc_get_fail_peer(rc_net_t *r, int peer);

#endif
