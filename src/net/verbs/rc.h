/*
 * rc.h -- verbs RC transport internals (the public seam is net.h:
 * net_rc_open / net_rc_connect).
 *
 * Shape: one CQ (send + receive), one SRQ of eager buffers, and RC QPs
 * made on demand, one per peer this rank has actually talked to, on the
 * device and PD the rank's verbs transports share (net_vdev_t).
 * Packets go as SEND_WITH_IMM; the immediate carries receive credits
 * returned to the peer, so the payload is exactly the caller's packet and
 * the source rank comes from the QP number.
 *
 * Connections on demand (rc_wire.c). vc_init creates no per-peer QP and
 * each rank publishes one O(1) blob (address, MTU, its handshake QP). The
 * first send to a peer makes a QP and asks the peer for its QP number over
 * a small UD "wire-up" QP every RC rank opens; send returns NET_AGAIN
 * meanwhile, so the packet waits in p2p's backlog. Why a UD handshake and
 * not PMIx: a QP number per peer cannot be published in advance without
 * O(N) data per rank (the old blob), and a PMIx put + fence per pair would
 * make every first contact a job-wide collective. The wire-up QP is the
 * transport's own (not the liveness detector's, whose thread must never
 * touch data-path state): its answers come from progress(), like every
 * other packet.
 *
 *   A -> B  REQ(A's qpn, psn)      A: QP in INIT, retransmits REQ
 *   B       makes its QP if it has none, connects it to A's (RTS), sends
 *   B -> A  REP(B's qpn, psn)      B: WAIT (sends nothing on RC yet: A's
 *                                  QP is not ready to receive)
 *   A       connects to B's QP: UP; posts a zero-byte RC SEND (the RTU)
 *   B       any RC packet from A (the RTU or data): UP
 * Each side owns exactly one QP per peer, and whichever message first
 * brings the other side's QP number (REQ or REP) pairs them; so when both
 * sides start at once, each connects its one QP to the other's, answers the
 * other's REQ, and both come up on one QP pair. Lost datagrams are covered
 * by the initiator's REQ retransmission (a REQ for a pair already made is
 * answered again). A peer that answers nothing: see rc_wire.c.
 *
 * A side that cannot make a QP for the peer (VCOLL_RC_MAX_QP or the
 * device's max_qp reached, the SRQ full, ibv_create_qp or a registration
 * failing) does not fail: with VCOLL_NET=auto the pair moves to UD. That
 * side opens a UD transport of its own (the fallback, first time only, on
 * RC's port) and sends UDX(its UD QP number, why) instead of REQ or REP;
 * the peer opens its own, drops the QP it may have made for the pair,
 * answers with its UDX, and from then on both send to each other over UD
 * (rc_send forwards; no RC packet ever went between them, so the order
 * p2p relies on holds). With VCOLL_NET=rc there is no UD to go to: the
 * refusing side answers NAK(why) and the requester fails the operations
 * addressing that peer with VC_ERR_PEER_FAILED, naming it and the reason.
 *
 * Flow control (why nothing can overflow):
 *  - Every connected peer adds `credits` + RC_CREDIT_RESERVE receive buffers
 *    to the SRQ (a slab allocated and registered when its QP is made), so
 *    receive memory grows with the peers used, not with the job. A sender
 *    spends one credit per data packet and gets it back when the receiver
 *    reposted the buffer (piggybacked on the receiver's next packet, or a
 *    zero-byte credit-only message once half the window is owed).
 *    Credit-only messages need no credit: at most credits / (credits/2) = 2
 *    of them can be unread at the peer, because each returns at least half
 *    a window the peer must have spent first; the third reserved buffer is
 *    the RTU, once per connection.
 *  - Each QP's send queue has sq_depth slots; the CQ is sized for every
 *    receive plus every send that can be outstanding.
 *  - send() returns NET_AGAIN when credits, SQ slots or tx buffers run out,
 *    or while the peer is still being connected.
 */
#ifndef VC_NET_VERBS_RC_H
#define VC_NET_VERBS_RC_H

#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#include "core/config.h"
#include "net/net.h"
#include "net/verbs/device.h"
#include "net/verbs/rcache.h"
#include "net/verbs/ud.h"

#define RC_BLOB_KEY        "vc.rc"
#define RC_BLOB_MAGIC      0x76635233u    /* "vcR3", bump on layout change */
#define RC_CREDIT_RESERVE  3
#define RC_IMM_CREDIT_ONLY 0x80000000u    /* no payload, only returns credits */
#define RC_IMM_CREDIT_MASK 0x0000ffffu
#define RC_MAX_CREDITS     4096           /* fits the 16-bit immediate field */
/* Receive window per connected peer (VCOLL_IB_RX_DEPTH caps it lower): 32
   eager packets in flight keep a link busy, and each costs max_packet bytes
   of registered memory for as long as the peer stays connected. */
#define RC_PEER_CREDITS    32
/* SRQ ring entries at most: 1872 peers at 32 credits + 3 reserved each,
   which is where VCOLL_RC_MAX_PEERS's default comes from (config.h). A
   device with a smaller max_srq_wr lowers it, and so does a smaller
   VCOLL_RC_MAX_QP; the peers past either move to UD one by one. */
#define RC_SRQ_MAX         65536
#define RC_OPS_MAX         2048           /* send WRs tracked, all peers */
_Static_assert(RC_SRQ_MAX / (RC_PEER_CREDITS + RC_CREDIT_RESERVE) ==
               CFG_RC_MAX_PEERS_DEFAULT, "VCOLL_RC_MAX_PEERS's default is the "
               "number of peers the SRQ serves with full windows");
/* wire-up (handshake) QP */
#define RC_HS_MAGIC        0x76635748u    /* "vcWH" */
#define RC_HS_RX           64
#define RC_HS_TX           64
#define RC_HS_GRH          40
/* The wire-up CQ is polled on every progress call only while a handshake of
   ours is under way; otherwise 1 call in this many. A peer's REQ then waits
   a few microseconds more, and the 8-byte ping-pong loses a CQ poll (a
   spinlock in rxe) per iteration. */
#define RC_HS_POLL_EVERY   16
#define RC_HS_RETRY_S      0.05           /* first REQ retransmission, doubling */
#define RC_HS_RETRY_MAX_S  1.0
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

/* Endpoint blob published with boot_put(RC_BLOB_KEY): O(1), the same for
   every peer; QP numbers travel in the wire-up handshake. */
typedef struct rc_blob {
    uint32_t magic;
    uint32_t hs_qpn;          /* my wire-up UD QP */
    uint16_t lid;
    uint8_t  mtu;             /* enum ibv_mtu (active) */
    uint8_t  link_layer;
    uint8_t  gid[16];
    int32_t  gid_index;       /* -1: IB without GRH */
    uint32_t max_packet;      /* my eager receive buffer size */
    uint32_t credits;         /* receive buffers I add for each peer */
    uint32_t rd_atom;         /* RDMA READs I accept in flight per QP */
    int32_t  pid;             /* liveness check for peers on the same node */
} rc_blob_t;

/* REQ, REP: qpn/psn of the sender's RC QP for dst. UDX: qpn is the
   sender's fallback UD QP, psn an RC_NO_* reason, plus RC_HS_ANSWER when
   the sender still needs the receiver's UDX. NAK: psn an RC_NO_* reason. */
enum { RC_HS_REQ = 1, RC_HS_REP = 2, RC_HS_UDX = 3, RC_HS_NAK = 4 };
#define RC_HS_ANSWER 0x80000000u
typedef struct rc_hs_msg {
    uint32_t magic;
    uint32_t type;
    uint32_t src, dst;        /* world ranks */
    uint32_t qpn, psn;
} rc_hs_msg_t;

/* why a side could make no QP for a peer (sent in UDX and NAK) */
enum { RC_NO_NONE, RC_NO_BUDGET, RC_NO_SRQ, RC_NO_QP, RC_NO_MEM, RC_NO_UD, RC_NO_COUNT };
extern const char *const rc_no_text[RC_NO_COUNT];

/* connection state of a peer */
enum { RC_S_NONE,             /* no QP */
       RC_S_REQ,              /* QP in INIT, REQ sent, no answer yet */
       RC_S_WAIT,             /* QP in RTS, the peer's may not be ready yet */
       RC_S_UP,               /* usable */
       RC_S_UD_WAIT,          /* no QP possible: UDX sent, the peer's UD QP unknown */
       RC_S_UD };             /* served by the fallback UD transport */

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
    list_node_t live_link;    /* every live get (for close) */
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
    int state;                /* RC_S_* */
    int initiated;            /* we addressed it first: we retransmit REQ / UDX */
    int no_why;               /* RC_NO_*: why this side made no QP for it */
    uint32_t rqpn;            /* the peer's QP ours is connected to */
    double t_start, t_next;   /* first REQ; next retransmission */
    double backoff;
    int warned;               /* said it is alive but does not answer */
    int dead;
    int dead_flushed;         /* the first error seen was a flush: the cause
                                 (a responder-side error) may still come */
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
    const net_env_t *env;
    int me, size;

    net_vdev_t *dev;          /* the shared device (a reference), or NULL */
    struct ibv_context *ctx;  /* dev's context, PD and port, copied at open */
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    net_vport_t port;         /* the chosen device/port */
    char why[256];            /* why this HCA (topo) */
    uint32_t max_inline;
    int max_send_sge;
    int rd_atom;

    rc_peer_t *peer;          /* [size]; qp == NULL until first contact */
    int ncand;                /* ranks this transport may reach */
    int nqp;                  /* RC QPs for peers now */
    int max_qp;               /* ... at most (VCOLL_RC_MAX_QP, device max_qp) */
    int dev_max_qp;
    ud_net_t *fb;             /* UD for the peers no QP could be made for, or NULL */
    int nfb;                  /* peers it serves */
    int credits;              /* per-peer receive window */
    int sq_depth;
    int srq_cap;              /* SRQ ring entries */

    /* wire-up: UD QP, its own CQ, HS_RX receive + HS_TX send slots */
    struct ibv_cq *hs_cq;
    struct ibv_qp *hs_qp;
    char *hs_buf;
    struct ibv_mr *hs_mr;
    size_t hs_stride;
    int hs_tx_next, hs_tx_free;
    uint32_t qkey;
    struct ibv_ah **hs_ah;    /* [size], made on first use */
    uint32_t *hs_qpn;         /* [size], the peer's wire-up QP */
    int *connecting;          /* peers we retransmit REQs to */
    int nconnecting, capconnecting;

    /* QP number -> world rank (open addressing, power-of-two size) */
    uint32_t *qpn_key;
    int *qpn_rank;
    uint32_t qpn_mask;        /* grows: at most half full */
    int qpn_used;

    /* receive slabs: one per connected peer, all posted to the one SRQ */
    struct rc_slab { char *buf; struct ibv_mr *mr; int n; } *slab;
    int nslab, capslab;
    int rx_count;             /* buffers posted in all slabs */
    int rx_spare;             /* ... of which no peer's share (its QP dropped) */
    size_t rx_bytes;          /* ... and their registered bytes */

    char *tx_buf;
    struct ibv_mr *tx_mr;
    int tx_count;
    int *tx_free;
    int tx_nfree;

    rc_op_t *op;
    int op_count;
    int op_free;              /* head of free list */

    rc_get_t *get_head, *get_tail;   /* gets with chunks still to post */
    list_t live;              /* every get not yet reported done, by live_link */
    int rd_inflight;          /* READ WRs in flight, all peers */
    int credit_pending;       /* some peer owes credits but could not post */
    struct net_rcache *rcache;       /* rendezvous registrations (rc_reg.c) */
    int odp;                  /* they are made on-demand-paging */
    int hooked;               /* the memory hooks invalidate them */
    int in_progress;          /* guards against re-entry from upcalls */
    unsigned hs_tick;         /* progress calls, to poll the wire-up CQ 1 in RC_HS_POLL_EVERY */
    int fault_peer;           /* VCOLL_FAULT_RC_ERR: QP to break, or -1 */
    int fault_after;          /* ... after this many more sends to it */
} rc_net_t;

/* rc_qp.c */
/* RC_NO_NONE, or why not (why: the details, for the log) */
int rc_qp_create(rc_net_t *r, int peer, char *why, size_t wlen);
void rc_qp_drop(rc_net_t *r, int peer);
int rc_qp_connect(rc_net_t *r, int peer, const rc_blob_t *b, uint32_t qpn,
                  uint32_t psn);
int rc_qpn_insert(rc_net_t *r, uint32_t qpn, int rank);
int rc_qpn_lookup(const rc_net_t *r, uint32_t qpn);

/* rc_wire.c: the wire-up QP and the connection handshake */
int rc_hs_open(rc_net_t *r);
void rc_hs_close(rc_net_t *r);
int rc_hs_progress(rc_net_t *r);
int rc_connect_start(rc_net_t *r, int peer);
int rc_peer_blob(rc_net_t *r, int peer, rc_blob_t *b);
double rc_now(void);

/* Can peer be sent to / read from now? Starts connecting a peer never
 * addressed (NET_AGAIN until it is up); VC_ERR_ARG for a rank out of range,
 * VC_ERR_PEER_FAILED once it has failed; VC_ERR_UNSUPPORTED for a peer UD
 * serves (no RDMA READ: p2p streams rendezvous data instead). */
static inline int rc_peer_check(rc_net_t *r, int peer)
{
    if (!r || peer < 0 || peer >= r->size || peer == r->me)
        return VC_ERR_ARG;
    rc_peer_t *p = &r->peer[peer];
    if (p->dead)
        return VC_ERR_PEER_FAILED;
    if (p->state == RC_S_UP)
        return VC_SUCCESS;
    if (p->state == RC_S_UD)
        return VC_ERR_UNSUPPORTED;
    if (p->state == RC_S_NONE)
        return rc_connect_start(r, peer);
    return NET_AGAIN;
}

/* rc_send.c */
int rc_send(net_t *n, int peer, const struct iovec *iov, int iovcnt);
int rc_op_alloc(rc_net_t *r);
void rc_op_release(rc_net_t *r, int i);
void rc_op_signal(rc_peer_t *p, rc_op_t *o);
int rc_send_credits(rc_net_t *r, int peer);
int rc_send_rtu(rc_net_t *r, int peer);
void rc_flush_credits(rc_net_t *r);

/* the fallback UD transport when it serves peer, else NULL */
static inline net_t *rc_fb_for(const rc_net_t *r, int peer)
{
    return peer >= 0 && peer < r->size && r->peer[peer].state == RC_S_UD ? &r->fb->base
                                                                           : NULL;
}

/* rc_progress.c */
int rc_progress(net_t *n);
int rc_quiesce(net_t *n);
int rc_post_recv(rc_net_t *r, int slab, int idx);
int rc_slab_add(rc_net_t *r, int n);
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
