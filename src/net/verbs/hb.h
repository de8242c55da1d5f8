/*
 * hb.h -- the liveness detector for peers on other nodes (seam: net.h
 * net_hb_*).
 *
 * Why a separate service: a rank that computes for an hour makes no vcoll
 * calls, so its data-path transports answer nothing; a rank that was
 * killed on another node leaves nothing a pid probe could see, and Open
 * MPI 4.1's mpirun (even with --enable-recovery) sends the survivors no
 * PMIx event. So every rank that uses verbs runs one small thread with its
 * own UD QP and CQ, touching no state of the data path:
 *  - it answers every PING with a PONG at once, whatever the application
 *    does (busy is not dead);
 *  - while a vcoll call waits on a remote peer, the waiting thread asks it
 *    to watch that peer (net_hb_watch); it PINGs the peer every interval
 *    and declares it dead when nothing came back for VCOLL_PEER_TIMEOUT
 *    seconds (killed, stopped, or unreachable are dead);
 *  - it sleeps in poll() on the CQ's completion channel between ticks, so
 *    it costs no core and nothing on the data path.
 * The application thread reads the verdict (net_hb_dead) and fails what
 * involves that peer; the detector never calls upward.
 *
 * Addresses: each rank publishes an O(1) blob; a peer's blob is fetched and
 * its address handle made by the application thread on the first watch.
 * PINGs are answered through an address handle made from the arriving
 * completion, so answering needs no lookup. Datagrams carry the per-job
 * Q_Key (a hash of the job id), and a PONG counts only when it comes from
 * the QP and GID the peer published.
 */
#ifndef VC_NET_VERBS_HB_H
#define VC_NET_VERBS_HB_H

#include <pthread.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "net/net.h"
#include "net/verbs/device.h"

#define HB_BLOB_KEY   "vc.hb"
#define HB_BLOB_MAGIC 0x76634842u       /* "vcHB" */
#define HB_PKT_MAGIC  0x68625054u
#define HB_RX         64                /* receive buffers */
#define HB_TX         64                /* send slots (and send queue depth) */
#define HB_GRH        40
#define HB_RECV_WRID  (1ull << 62)     /* receives' wr_id: this bit | slot */

typedef struct hb_blob {
    uint32_t magic;
    uint32_t qpn;
    uint16_t lid;
    uint8_t  link_layer;
    uint8_t  pad;
    uint8_t  gid[16];
} hb_blob_t;

/* DOWN: "I have given up on you" -- sent by a rank whose connection to
   the receiver failed (or that declared it dead), in answer to its PINGs and
   a few times unasked. Without it a one-sided failure hangs the other side:
   an RC QP can go to error on one end only (a retry timeout under load), and
   the rank that only waits to receive keeps hearing PONGs from a live peer
   that will never send. */
enum { HB_PING = 1, HB_PONG = 2, HB_DOWN = 3 };

typedef struct hb_pkt {
    uint32_t magic;
    uint8_t  type;
    uint8_t  pad[3];
    uint32_t src;             /* sender's world rank */
    uint32_t dst;             /* the rank it is meant for */
    uint64_t stamp;           /* PING: sender's clock; PONG: echoed */
} hb_pkt_t;

enum { HB_P_UNKNOWN = 0, HB_P_READY, HB_P_NONE, HB_P_DEAD };

typedef struct hb_peer {
    int state;                /* HB_P_*: written by the application thread
                                 (READY, NONE) and the detector (DEAD) */
    struct ibv_ah *ah;        /* to its heartbeat QP */
    uint32_t qpn;
    uint8_t gid[16];
    uint64_t heard;           /* ns: last PONG or PING from it (detector) */
    uint64_t watch_from;      /* ns: watching started (0 = not watched) */
    uint64_t watch_until;     /* ns: keep watching until */
    uint64_t pinged;          /* ns: last PING (detector only) */
    struct ibv_ah *reply_ah;  /* detector only: from its PINGs' completions */
    uint32_t reply_qpn;
    int broken;               /* we gave up on it: answer DOWN, not PONG */
    int down;                 /* DEAD because it sent us DOWN */
} hb_peer_t;

struct net_hb {
    const net_env_t *env;
    int me, size;
    net_vdev_t *dev;          /* the shared device (a reference) */
    net_vport_t port;         /* dev's port, context and PD, copied at open */
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint32_t qkey;
    char *buf;                /* HB_RX receive + HB_TX send slots */
    struct ibv_mr *mr;
    size_t rx_stride;
    int tx_next, tx_free;

    hb_peer_t **peer;         /* [size], each made on first use */
    pthread_mutex_t lock;     /* watch list, peer state changes */
    int *watch;               /* peers being watched */
    int nwatch, capwatch;
    uint64_t interval_ns, timeout_ns;

    pthread_t thread;
    int running, stop;
    char dead_why[200];       /* text of the latest verdict */
    uint64_t n_ping, n_pong, n_bad, n_down;
};

/* hb_open.c: the application thread's calls (also RC's and UD's own
   waits); harmless on a NULL detector */
void net_hb_watch(net_hb_t *h, int peer);          /* keep pinging it for a while */
/* net_hb_dead: 0 alive or unknown; NET_HB_SILENT: no heartbeat for the
   timeout; NET_HB_DOWN: it told us it gave up on this rank */
enum { NET_HB_SILENT = 1, NET_HB_DOWN = 2 };
int net_hb_dead(net_hb_t *h, int peer);
void net_hb_broken(net_hb_t *h, int peer);         /* we gave up on it: tell it */
int net_hb_heard_within(net_hb_t *h, int peer, double secs);
double net_hb_timeout(const net_hb_t *h);

/* hb_thread.c */
void *hb_main(void *arg);
/* What a well-formed packet of `type` from p's rank, received as wc with
   its GRH at grh, may do: answer it, count as p's life, count as a PONG,
   mark p down. Life and DOWN only from the QP and GID p published. */
enum { HB_ACT_REPLY = 1, HB_ACT_ALIVE = 2, HB_ACT_PONG = 4, HB_ACT_DOWN = 8 };
int hb_classify(const hb_peer_t *p, int type, const struct ibv_wc *wc, const uint8_t *grh);
int hb_post_recv(struct net_hb *h, int i);
uint64_t hb_now_ns(void);

#endif
