/*
 * ud.h -- verbs UD transport with software reliability (the public seam is
 * net.h: net_ud_open).
 *
 * Why UD: an RC mesh costs a QP, a send queue and connection state per peer;
 * at tens of thousands of ranks, or on a device with few QPs, that does not
 * fit. UD needs one QP per process whatever the job size, at the price of
 * doing in software what RC does in the NIC: ordering, loss recovery and
 * segmentation. VCOLL_NET=ud forces it; auto picks it when an RC mesh would
 * exceed VCOLL_RC_MAX_PEERS.
 *
 * Shape: one PD, one CQ, one UD QP. A peer is an address handle plus its QP
 * number, made on the first packet to or from it (lazy: a rank only pays for
 * the peers it talks to). Receive buffers are one path MTU plus the 40-byte
 * GRH slot UD receives always start with.
 *
 * Reliability, per ordered pair of ranks:
 *  - Every data fragment carries a sequence number. Delivery is in order and
 *    exactly once, which p2p needs for MPI's non-overtaking rule.
 *  - Acknowledgements are cumulative ("everything before N arrived") plus a
 *    64-bit selective map of the fragments after N that arrived too (SACK).
 *    They ride on every data packet going back; a standalone ACK goes when a
 *    quarter window is owed, when a duplicate shows an ACK was lost, when
 *    the sender asks (UD_F_ACKREQ: its window or send buffers are three
 *    quarters full), or when an ACK has been owed for a quarter of the
 *    resend timeout (end of a burst; a ping-pong never needs one: the reply
 *    carries it). Not sooner: every datagram costs the device the same
 *    whatever its size (on rxe a route lookup, an skb, a CRC, a CQE), and
 *    ACKing whenever the receiver found its CQ empty for a moment -- the
 *    rule until 0.2 -- sent one ACK per two data fragments in a stream.
 *  - A fragment that arrives ahead of a gap is kept (ud_reorder.c, up to
 *    UD_OOO_BYTES ahead) and handed up once the gap is filled; the first one
 *    past a new gap is answered with a NAK carrying the map. So a loss costs
 *    the lost fragment, not the window behind it (selective repeat): with
 *    a window sized for bandwidth, go-back-N resent hundreds of fragments
 *    per loss, which at 5-20 % loss meant most of the wire carried repeats.
 *    The store is allocated at the first out-of-order fragment, so a
 *    lossless fabric never pays for it.
 *  - Timers are looked at every UD_TIMER_POLLS progress calls, not on every
 *    poll or send: under emulation (and on some VMs) reading the clock costs
 *    more than a poll, and timeouts are milliseconds anyway.
 *  - The sender keeps every fragment until it is cumulatively acknowledged,
 *    at most VCOLL_UD_WINDOW per peer. A NAK resends the holes below the
 *    highest fragment the map shows, each hole once per NAK round; when the
 *    oldest has waited the retransmission timeout (VCOLL_UD_RTO, doubling
 *    up to UD_RTO_MAX_NS), every fragment the map does not show is resent.
 *  - A peer that acknowledges nothing for VCOLL_UD_TIMEOUT seconds is
 *    declared dead; a peer on this node is also checked by pid, which finds a
 *    killed process at once instead of after the timeout.
 *  - A packet larger than one MTU is split into fragments with consecutive
 *    sequence numbers; since delivery is in order, reassembly is an append.
 *    The fragments of one packet go to the device as one list of work
 *    requests: one ibv_post_send, so one doorbell (a system call on rxe)
 *    per packet instead of per fragment.
 *  - A send buffer is reused only when it is acknowledged *and* its last
 *    posted send completed: a resend may still be in the send queue when the
 *    ACK for the first copy arrives.
 *
 * Packet size: eager messages stay at VCOLL_EAGER_LIMIT (p2p caps them),
 * but the transport takes packets of up to UD_MAX_PACKET, so p2p streams
 * rendezvous data in 64 KiB packets: one header, one match and one post
 * list per 64 KiB rather than per eager size. A packet larger than
 * UD_RAS_KEEP is reassembled in the transport's one spare buffer (or a
 * buffer of its own when another peer holds the spare), given back once it
 * is delivered, so what a peer costs while idle does not grow with it.
 *
 * No RDMA on UD: get is NULL and p2p streams rendezvous data as packets
 * (RTS, CTS, DATA...), each up to max_packet, fragmented here.
 */
#ifndef VC_NET_VERBS_UD_H
#define VC_NET_VERBS_UD_H

#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#include "core/list.h"
#include "net/net.h"
#include "net/verbs/device.h"

#define UD_BLOB_KEY      "vc.ud"
#define UD_BLOB_MAGIC    0x76635545u    /* "vcUE": bump on blob or header layout change */
#define UD_GRH_BYTES     40
#define UD_POLL_BATCH    32
#define UD_CTRL_RESERVE  8              /* send-queue slots kept for ACK/NAK */
#define UD_TIMER_POLLS   64             /* progress calls between timer checks */
#define UD_RTO_MAX_NS    1000000000ull  /* resend backoff cap, 1 s */
#define UD_POST_BATCH    32             /* work requests per ibv_post_send */
#define UD_SIG_EVERY     16             /* a signaled send at least this often */
#define UD_SQ_POS_MASK   0x7fffffffu    /* a send's wr_id: its position (bit 63 clear) */
#define UD_MAX_PACKET    (65536u + 256u) /* largest packet p2p may hand us */
#define UD_RAS_KEEP      (16u << 10)    /* reassembly buffers past this are freed */
#define UD_OOO_BYTES     (256u << 10)   /* fragments kept ahead of a gap, in bytes */
#define UD_NAK_GAP_NS    200000ull      /* a NAK for the same gap at most this often
                                           (coarse clock: in practice once a tick) */

/* Endpoint blob published with boot_put(UD_BLOB_KEY). */
typedef struct ud_blob {
    uint32_t magic;
    uint32_t qpn;
    uint16_t lid;
    uint8_t  mtu;             /* enum ibv_mtu (active) */
    uint8_t  link_layer;
    uint8_t  gid[16];
    int32_t  gid_index;       /* -1: IB without GRH */
    uint32_t max_packet;      /* largest packet before fragmentation */
    int32_t  pid;             /* liveness check for peers on the same node */
} ud_blob_t;

enum { UD_T_DATA = 1, UD_T_ACK = 2, UD_T_NAK = 3 };
enum { UD_F_FIRST = 1, UD_F_LAST = 2, UD_F_ACKREQ = 4 /* acknowledge at once */ };

/* Wire header in front of every UD payload (after the receiver's GRH). */
typedef struct ud_hdr {
    uint32_t src;             /* sender's world rank */
    uint32_t seq;             /* DATA: this fragment's sequence number */
    uint32_t ack;             /* every type: all of the receiver's seq < ack arrived */
    uint32_t total;           /* DATA with UD_F_FIRST: whole packet length */
    uint64_t sack;            /* bit i: the receiver's seq ack + 1 + i arrived too */
    uint8_t  type;
    uint8_t  flags;
    uint16_t pad;
    uint32_t pad2;
} ud_hdr_t;
_Static_assert(sizeof(ud_hdr_t) == 32, "UD header layout is wire format");

/* Reassembly of one peer's fragmented packet (buf: max_packet bytes). */
typedef struct ud_ras {
    char *buf;
    uint32_t cap;             /* bytes at buf */
    uint32_t len, total;      /* total 0 = none in progress */
} ud_ras_t;

/* ud_reassemble.c: take one in-order fragment (flags UD_F_*, total from a
 * FIRST fragment). Returns NULL and sets *out and *olen when a whole packet is
 * ready (*out NULL while more is needed), or the reason it cannot be. The
 * caller gives r->buf at least total bytes (r->cap) before a FIRST fragment;
 * a packet announcing more than max_packet or r->cap is refused. */
const char *ud_reassemble(ud_ras_t *r, uint32_t max_packet, uint8_t flags, uint32_t total,
                          const char *data, uint32_t plen, const char **out, uint32_t *olen);

/* Fragments that arrived ahead of a gap (ud_reorder.c): sequence seq sits
 * in slot seq & (n - 1), its payload at buf + slot x frag. Pure: what it
 * stores came off the wire, and the fuzz/unit tests drive it directly. */
typedef struct ud_ooo_slot {
    uint32_t seq, len, total;
    uint8_t flags, used;
} ud_ooo_slot_t;

typedef struct ud_ooo {
    uint32_t n;               /* slots, a power of two */
    uint32_t frag;            /* payload bytes per slot */
    char *buf;                /* n x frag */
    ud_ooo_slot_t *slot;
    uint32_t held;            /* slots in use */
} ud_ooo_t;

int ud_ooo_init(ud_ooo_t *o, uint32_t n, uint32_t frag);
void ud_ooo_free(ud_ooo_t *o);
/* Keep fragment seq (expect < seq): 1 kept, 0 already held, -1 too far
   ahead (or larger than a slot): dropped, its sender resends it. */
int ud_ooo_put(ud_ooo_t *o, uint32_t expect, uint32_t seq, uint8_t flags, uint32_t total,
               const char *data, uint32_t plen);
/* The held fragment seq, if any: 1 and its fields (data valid until the
   slot is reused), or 0. Taking it empties the slot. */
int ud_ooo_take(ud_ooo_t *o, uint32_t seq, uint8_t *flags, uint32_t *total,
                const char **data, uint32_t *plen);
int ud_ooo_has(const ud_ooo_t *o, uint32_t seq);
/* Selective map for a cumulative ack: bit i set when ack + 1 + i is held. */
uint64_t ud_ooo_sack(const ud_ooo_t *o, uint32_t ack);

/* Fragments per peer window (ud_reorder.c, pure): VCOLL_UD_WINDOW bytes in
 * whole fragments of mtu bytes, a power of two rounded down (at least 8),
 * raised until two packets of max_packet fit. */
uint32_t ud_window_frags(size_t bytes, uint32_t mtu, size_t max_packet);

/* Wrap-safe sequence order. */
static inline int ud_seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

/* One registered send buffer: a data fragment (kept until acknowledged) or a
 * control packet (freed by its completion). */
typedef struct ud_slot {
    uint32_t len;             /* header + payload bytes */
    int peer;
    int posted;               /* sends of it still in the send queue */
    int acked;                /* data: the peer has it */
    int sacked;               /* data: the peer's map shows it (not resent) */
    int ctrl;                 /* ACK / NAK */
    int next_free;
} ud_slot_t;

typedef struct ud_peer {
    int state;                /* UD_P_* */
    struct ibv_ah *ah;
    uint32_t qpn;
    uint8_t gid[16];          /* the GID it published: datagrams must come from it */
    uint32_t frag;            /* payload bytes per fragment to this peer */
    pid_t pid;                /* > 0 when the peer is on this node */
    /* sending */
    uint32_t next_seq;        /* next sequence to assign */
    uint32_t una;             /* oldest unacknowledged */
    int *win;                 /* slot of seq s at win[s & wmask] */
    uint32_t wsize, wmask;    /* this pair's window (power of two), from the
                                 smaller of the two MTUs (ud_peer_set) */
    uint64_t rto_ns;          /* current retransmission timeout */
    uint64_t rto_at;          /* resend the window when now passes this;
                                 0 = arm at the next timer check */
    uint64_t stall_since;     /* una last moved (or window went non-empty);
                                 0 = not yet seen by a timer check or resend */
    uint32_t resends;         /* windows resent since una last moved */
    uint32_t fast_hi;         /* holes below this were resent by a NAK already */
    /* receiving */
    uint32_t expect;          /* next sequence accepted */
    uint32_t owed;            /* accepted, not yet acknowledged */
    int ack_now;              /* a duplicate or an ACKREQ arrived: acknowledge at once */
    uint64_t owed_since;      /* a timer check first saw owed > 0 (0: not yet) */
    uint32_t nak_for;         /* last NAK named this sequence ... */
    uint64_t nak_at;          /* ... at this time */
    ud_ras_t ras;             /* reassembly of a fragmented packet */
    ud_ooo_t ooo;             /* fragments ahead of a gap (n 0: none yet) */
    /* lists: peers with unacknowledged data / with ACKs owed */
    list_node_t tx_link;
    struct ud_peer *ack_next;
    int on_tx, on_ack;
    int rank;
} ud_peer_t;

enum { UD_P_NEW, UD_P_READY, UD_P_DEAD };

typedef struct ud_net {
    net_t base;               /* must be first */
    const net_env_t *env;
    int me, size;

    net_vdev_t *dev;          /* the shared device (a reference) */
    struct ibv_context *ctx;  /* dev's context, PD and port, copied at open */
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    net_vport_t port;
    char why[256];            /* why this HCA (topo) */
    uint32_t mtu;             /* my active path MTU, bytes */
    uint32_t max_inline;
    uint32_t qkey;            /* per job: net_verbs_qkey */

    ud_peer_t *peer;          /* [size] */
    uint32_t wsize, wmask;    /* window at our own MTU (sizes the queues) */
    int sq_depth, sq_free;
    /* Sends in the order posted, so that one signaled completion retires
       every unsignaled send before it (a send queue completes in order):
       a packet's fragments then cost one completion per UD_SIG_EVERY, not
       one each. Position pos is at sq_ring[pos & sq_mask]. */
    int *sq_ring;
    uint32_t sq_mask, sq_head, sq_tail;
    int sq_unsig;

    char *rx_buf;             /* rx_count x rx_stride */
    struct ibv_mr *rx_mr;
    int rx_count;
    size_t rx_stride;

    char *tx_buf;             /* tx_count x mtu */
    struct ibv_mr *tx_mr;
    ud_slot_t *slot;
    int tx_count;
    int tx_free;              /* free-list head */
    int tx_nfree;

    char *ras_spare;          /* one large reassembly buffer kept for reuse */
    uint32_t ras_spare_cap;
    list_t tx_list;           /* peers with unacknowledged data, by tx_link */
    ud_peer_t *ack_list;      /* peers owed an acknowledgement */
    int unacked;              /* fragments in flight, all peers */
    int ack_due;              /* some peer has ack_now set */
    unsigned ticks;           /* progress calls, for the timer check */
    double loss;              /* VCOLL_UD_LOSS */
    uint64_t rto_base_ns;     /* VCOLL_UD_RTO: first resend timeout */
    uint64_t rng;
    int in_progress;
    int qp_broken;
    int introduced;           /* RC's fallback: peers' addresses come from the RC
                                 handshake (ud_peer_set), none is published */
    /* counters for the info log at close */
    uint64_t n_tx, n_rx, n_resent, n_dup, n_ooo, n_acks, n_naks, n_dropped;
} ud_net_t;

/* ud_open.c */
int ud_peer_ready(ud_net_t *u, int peer);
int ud_peer_set(ud_net_t *u, int peer, const ud_blob_t *b);
void ud_blob_fill(const ud_net_t *u, ud_blob_t *b);
/* UD for the peers RC could not connect (rc_wire.c): opened when the first
 * such peer turns up, long after the endpoint fence, so it publishes
 * nothing. It uses RC's device (dev, another reference to it), so a peer's
 * address is its RC blob's and only the QP number travels in the RC
 * handshake (ud_peer_set). */
int ud_open_fallback(const net_env_t *env, const net_upcalls_t *up, net_vdev_t *dev,
                     ud_net_t **out);
void ud_peer_fail(ud_net_t *u, int peer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t ud_now_ns(void);

/* ud_send.c */
int ud_send(net_t *n, int peer, const struct iovec *iov, int iovcnt);
int ud_send_ctrl(ud_net_t *u, ud_peer_t *p, int type);
void ud_slot_put(ud_net_t *u, int s);
void ud_on_ack(ud_net_t *u, ud_peer_t *p, uint32_t ack, uint64_t sack);
/* holes_only: a NAK's selective resend; otherwise the timeout's */
void ud_resend(ud_net_t *u, ud_peer_t *p, uint64_t now, int holes_only);
void ud_tx_list_drop(ud_net_t *u, ud_peer_t *p);

/* ud_progress.c */
int ud_progress(net_t *n);
int ud_post_recv(ud_net_t *u, int idx);
int ud_check_peer(net_t *n, int peer);
int ud_quiesce(net_t *n);

#endif
