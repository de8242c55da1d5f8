/*
 * net.h -- the one interface every transport (self, shm, verbs rc, verbs ud)
 * implements. The p2p layer talks only to this.
 *
 * Contract:
 *  - A transport moves *packets* (<= max_packet bytes) to a peer, whole and in
 *    FIFO order per (sender, receiver) pair. p2p relies on that order for MPI's
 *    non-overtaking rule, so a transport that can reorder (UD) must restore it.
 *  - send() either takes the packet (copies it or sends it inline; the iovec
 *    memory may be reused when it returns) or returns NET_AGAIN when it has no
 *    room (ring full, no send credits). It never blocks: the caller queues the
 *    packet and retries from progress, so two ranks that both fill their rings
 *    cannot deadlock.
 *  - progress() polls completions/arrivals and hands every arrived packet to
 *    up->packet(); the packet memory is only valid during that call.
 *  - Bulk data (rendezvous): the sender exposes its buffer (mem_expose gives an
 *    opaque key, e.g. an rkey), the receiver get()s it straight into its own
 *    buffer (CMA for shm, RDMA READ for verbs). Completion is reported through
 *    up->get_done(), possibly from inside get() itself. A transport without a
 *    pull path leaves get, mem_expose and mem_release NULL (or returns
 *    VC_ERR_UNSUPPORTED from get) and p2p falls back to a CTS + streamed DATA packets protocol.
 *  - Every function returns VC_SUCCESS or a VC_ERR_* code (vcoll.h), plus
 *    NET_AGAIN from send/get.
 */
#ifndef VC_NET_H
#define VC_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define NET_AGAIN (-11)      /* no resources right now: retry after progress */
#define NET_KEY_BYTES 16

typedef struct { uint8_t b[NET_KEY_BYTES]; } net_key_t;

struct vc_config;
struct boot_info;
struct net_hb;
struct net_vdev;

/* All a transport sees of the library: who it is, the job's node map, job
 * id and key-value store (boot_put / boot_get of its endpoint blob), the
 * configuration, and what the lifecycle lets the transports share. Never
 * the whole context: a transport cannot reach the layers above it, and a
 * failure goes up through net_upcalls_t.peer_failed or a return code.
 * The lifecycle builds it and keeps it in place until the last transport
 * is closed; transports keep the pointer, not a copy, because hb is only
 * filled in after they open. */
typedef struct net_env {
    int rank, size;                 /* world */
    const struct vc_config *cfg;
    struct boot_info *boot;         /* node_of, node_id, local_peers, jobid;
                                       boot_put / boot_get */
    struct net_hb *hb;              /* liveness detector for remote peers, or
                                       NULL (the lifecycle's, set after
                                       net_hb_open) */
    struct net_vdev **vdev;         /* the lifecycle's slot for the verbs
                                       device the verbs transports share
                                       (verbs/device.h: net_vdev_get) */
} net_env_t;

/* What a transport calls back into (set by the core at open time). */
typedef struct net_upcalls {
    /* a packet from world rank src arrived; pkt valid only during the call */
    void (*packet)(void *arg, int src, const void *pkt, size_t len);
    /* a get() finished; status VC_SUCCESS or VC_ERR_*. VC_ERR_UNSUPPORTED
       after get() had accepted it: the transport can no longer pull from
       this peer and what it wrote is not the message (stream it instead) */
    void (*get_done)(void *arg, void *cookie, int status);
    /* the transport found a peer dead / unreachable (world rank, reason) */
    void (*peer_failed)(void *arg, int peer, const char *why);
    void *arg;
} net_upcalls_t;

typedef struct net net_t;

typedef struct net_ops {
    int (*send)(net_t *n, int peer, const struct iovec *iov, int iovcnt);
    /* returns number of events handled (>= 0) or a VC_ERR_* code (negated) */
    int (*progress)(net_t *n);
    int (*mem_expose)(net_t *n, const void *buf, size_t len, net_key_t *key,
                      void **handle);
    int (*mem_release)(net_t *n, void *handle);
    int (*get)(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
               const net_key_t *key, void *cookie);
    /* cheap liveness probe used while a blocking call waits: VC_SUCCESS or
       VC_ERR_PEER_FAILED. May be NULL. */
    int (*check_peer)(net_t *n, int peer);
    /* Before the finalize fence: send every acknowledgement still owed and
       return how many of our own packets the peers have not acknowledged
       yet (0 = nothing of ours is still in flight). May be NULL: transports
       whose delivery the hardware guarantees (shm, rc) have nothing to wait
       for. */
    int (*quiesce)(net_t *n);
    /* Node memory for collectives that synchronise through memory (shm
       only; NULL elsewhere): the per-rank flag slots, NET_SHM_SLOTS of
       NET_SHM_SLOT_BYTES per local rank, indexed [local rank][slot],
       zeroed; and the node's count of bytes in the collectives' shared
       segments (atomic). Both NULL before the node segment is mapped. */
    void *(*node_slots)(net_t *n);
    uint64_t *(*node_bytes)(net_t *n);
    /* A large message copied by both ends at once (shm only, NULL
       elsewhere; net_t.split_min says from which size): the receiver gets
       one part and asks the sender to put() the other straight into its
       buffer. Whoever takes the part's claim word first copies it, so a
       sender that is not in the library leaves it to the receiver instead
       of holding it up, and a late sender never writes into a buffer the
       receiver has finished with.
       claim_open: the receiver names a fresh word for a part of a message
       from peer (*token), or returns non-zero when none is free (then it
       does not split). claim_take: take the word of token; owner 1: I am the
       receiver (the word is mine, for messages from peer), 0: I am the
       sender asked by peer. Returns 1 to the one caller that wins.
       claim_close: the receiver is done with the word. put: write len
       bytes of my memory at src into peer's memory at raddr, now, for the
       part whose word I took (token); done, the word says so. */
    int (*claim_open)(net_t *n, int peer, uint64_t *token);
    int (*claim_take)(net_t *n, int peer, uint64_t token, int owner);
    void (*claim_close)(net_t *n, int peer, uint64_t token);
    int (*put)(net_t *n, int peer, uint64_t token, const void *src, size_t len,
               uint64_t raddr);
    void (*close)(net_t *n);
} net_ops_t;

struct net {
    const net_ops_t *ops;
    const char *name;       /* "self", "shm", "rc", "ud" */
    size_t max_packet;      /* largest packet send() accepts, header included */
    size_t eager_packet;    /* largest packet of an ordinary eager message or
                               of a stream's DATA (0: max_packet); the room
                               above it takes fan-in eager sends only
                               (p2p_send_fast's P2P_SEND_EAGER) */
    size_t fanin_packet;    /* largest packet of a fan-in eager send, when
                               larger than eager_packet (<= max_packet; 0:
                               eager_packet) */
    size_t split_min;       /* messages from this size are copied by both ends
                               (claim_open ... put above); 0: never */
    size_t split_lone_min;  /* the same, from this size, when the sender has
                               nothing else to copy (p2p's P2P_F_LONE;
                               <= split_min; 0: split_min applies) */
    size_t eager_cap;       /* largest payload worth sending eagerly here, when
                               smaller than VCOLL_EAGER_LIMIT (0 = no cap) */
    size_t pull_min;        /* a rendezvous message from this size is pulled
                               (get); a smaller one the receiver asks the
                               sender to stream (0: pull every one) */
    size_t pull_pays;       /* the size from which a pull would pay on this
                               machine (its system call against the copies
                               it saves), measured even where pull_min stays
                               0 (more ranks than cores): collective selection
                               reads it as the machine's price of a system
                               call. 0: no pull here at all (CMA off) */
    int pull_alias_slow;    /* a pull into a destination 1-63 bytes above its
                               source modulo 4 KiB (core_copy_aliases) runs
                               several times slower than a stream here (the
                               kernel's copy has memcpy's cliff, core/copy.h):
                               the receiver streams such a message */
    net_upcalls_t up;
};

/* plan.c: the transport for this rank's peers on its own node (local) and
 * on other nodes (remote), from the job-wide node map and the config only,
 * so it comes out the same on every rank that shares them. */
enum { NET_KIND_NONE, NET_KIND_SHM, NET_KIND_RC, NET_KIND_UD };
extern const char *const net_kind_names[];   /* indexed by NET_KIND_* */
typedef struct net_plan {
    int local, remote;        /* NET_KIND_*; NONE when there is no such peer */
    int max_remote;           /* job-wide: remote peers of the rank with most */
    char why[160];            /* why remote peers use what they use */
} net_plan_t;
int net_plan(const struct vc_config *cfg, const struct boot_info *b, net_plan_t *p,
             char *err, size_t errlen);
/* A peer's endpoint blob is missing: log why this transport cannot reach
 * it -- naming the setting and both ranks when the peer's job-wide
 * settings differ from ours (vc_init already ends such a job when it
 * differs from rank 0). The caller fails the peer. */
void net_peer_missing(const net_env_t *env, int peer, const char *what);

/* fault.c: a fault-injection setting "A>B@N" (testing only; name is the
 * setting's, for the message): *peer = B and *after = N on rank A, *peer =
 * -1 elsewhere or when spec is empty; VC_ERR_ARG, logged, when malformed */
int net_fault_spec(const net_env_t *env, const char *name, const char *spec, int *peer,
                   int *after);

/* pid_alive.c: 1 when the process (on this node) is gone or a zombie;
 * 0 for pid <= 0 (not known: the peer is on another node) */
int net_pid_gone(pid_t pid);

/*
 * Opening is two-phase so the whole job needs a single PMIx fence:
 *   open():    create local resources, boot_put() the endpoint blob
 *   (core does one boot_fence with data collection)
 *   connect(): boot_get() peers' blobs, connect to the peers this net serves
 * peers[] lists the world ranks this transport must reach (may be empty).
 */
int net_self_open(const net_env_t *env, const net_upcalls_t *up, net_t **out);

int net_shm_open(const net_env_t *env, const net_upcalls_t *up, net_t **out);
/* the smallest message worth pulling with process_vm_readv when one call
   costs call_us microseconds and a hot 64 KiB memcpy copy64k_us (shm.c) */
size_t net_shm_pull_min(double call_us, double copy64k_us);
int net_shm_connect(net_t *n);
/* after the post-connect fence: every local rank has mapped the segment,
 * so its name can go (nothing is left in /dev/shm even after kill -9) */
void net_shm_after_fence(net_t *n);
/* sizes of the node_slots() flag slots (net_ops_t): NET_SHM_BLK_DEPTH
   (a ring, one per call in flight) for the blocking calls, and two for
   each of NET_SHM_PSETS persistent requests and for the non-blocking
   calls (shm_flags_nb.c); 2 KiB of data each (+ the
   sequence line), so allreduce to 2 KiB and alltoall with 2 KiB in all
   (np 8: 256 B per pair) skip the message path (np 4/8 through the
   drop-in: 0.30-0.48 of Open MPI where the message algorithms ran
   0.62-1.28). The ring's depth less one is how many calls a rooted
   call's root may run ahead of its slowest reader (shm_flags.c; why 4:
   doc/collectives.md, "The blocking ring"). */
#define NET_SHM_BLK_DEPTH 4
#define NET_SHM_PSETS 8
#define NET_SHM_SLOTS (NET_SHM_BLK_DEPTH + 2 * NET_SHM_PSETS + 2)
#define NET_SHM_SLOT_BYTES 2112

/* verbs RC (src/net/verbs): see verbs/rc.h */
int net_rc_open(const net_env_t *env, const net_upcalls_t *up, net_t **out);
int net_rc_connect(net_t *n, const int *peers, int npeers);

/* A liveness detector beside the data path (the verbs heartbeat): all the
 * layers above see of it. watch() keeps an eye on a peer a call waits on
 * and returns 0 (alive, or not known yet) or 1 with the reason in why;
 * broken() says we gave up on the peer, so it learns even if it only
 * waits to receive. Set by the lifecycle; functions NULL when there is no
 * detector. */
typedef struct net_liveness {
    int (*watch)(void *h, int peer, char *why, size_t wlen);
    void (*broken)(void *h, int peer);
    void *h;
} net_liveness_t;

/* Liveness detector for peers on other nodes (src/net/verbs/hb.h): a
 * thread with its own UD QP answers heartbeats while the application
 * computes and pings the peers a waiting call asks it to watch. Opened by
 * every rank that uses verbs; all calls below are the application
 * thread's, and harmless on a NULL detector. */
typedef struct net_hb net_hb_t;
int net_hb_open(const net_env_t *env, net_hb_t **out);
void net_hb_close(net_hb_t *h);
/* the detector behind the liveness interface above (the verbs
   transports' own calls into it are in verbs/hb.h) */
void net_hb_liveness(net_hb_t *h, net_liveness_t *out);
/* the per-job Q_Key of every UD QP (a hash of the job id): datagrams of
 * another job on the same fabric are dropped by the HCA */
uint32_t net_verbs_qkey(const net_env_t *env);

/* What the verbs transports hold now (src/net/verbs/usage.c), for the
 * scaling benchmark and the on-demand tests: rc, ud and hb are the ones
 * the lifecycle opened, each may be NULL. */
typedef struct net_usage {
    int qps;                  /* every QP: RC per peer, wire-up, UD, heartbeat */
    int rc_qps;               /* RC QPs made for peers */
    int rc_up;                /* ... of which connected and usable */
    int ud_peers;             /* peers UD has an address handle for */
    int rc_to_ud;             /* peers RC could make no QP for, served by UD */
    size_t reg_bytes;         /* memory registered (pinned) for the data path */
    size_t rx_bytes;          /* ... of which receive buffers */
} net_usage_t;
void net_usage(const net_t *rc, const net_t *ud, const net_hb_t *hb, net_usage_t *u);

/* verbs UD with software reliability (src/net/verbs): see verbs/ud.h.
 * Peers are connected lazily, on the first packet to or from them. */
int net_ud_open(const net_env_t *env, const net_upcalls_t *up, net_t **out);

#endif
