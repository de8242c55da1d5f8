/*
 * progress.h -- the progress layer: the loop that drives every transport,
 * the back-off of a waiting call, peer liveness and the dead-peer table.
 *
 * It sits below p2p and coll and knows neither: transports are registered
 * in a list (prog_add_net), the layers above register pollers
 * (prog_add_poller: p2p retries its backlog and advances non-blocking
 * collectives there), and liveness reaches the verbs heartbeat only through
 * net_liveness_t. Its state is one prog_t, held by the context and handed
 * to the layers above by the lifecycle.
 *
 * No hidden threads: progress happens inside blocking calls, tests and
 * waits. A waiting rank polls for a while (lowest latency), then yields the
 * core on every empty poll, because on an oversubscribed node the peer it
 * waits for may need exactly this core. While it waits it checks every
 * VCOLL_PEER_CHECK seconds that its peers are alive, so a killed peer turns
 * into VC_ERR_PEER_FAILED instead of a hang.
 */
#ifndef VC_PROGRESS_H
#define VC_PROGRESS_H

#include <stdint.h>
#include "../net/net.h"

struct vc_comm;
struct boot_info;

#define PROG_MAX_NETS 8
#define PROG_MAX_POLLERS 4

typedef struct prog {
    int rank, size;                  /* world */
    /* transports in poll order, and the first error each one's progress()
       returned (0 = none): a failed transport is not polled again and the
       waits that depend on it fail with its error */
    net_t *nets[PROG_MAX_NETS];
    int net_err[PROG_MAX_NETS];
    int nnets;
    int failed;                      /* some transport failed */
    net_t **net_of;                  /* [size]: the transport of each world rank */
    /* the transport whose peers a pid probe tells everything about (the
       node's shared memory); peers over any other are watched by liveness */
    const net_t *node_net;
    struct {
        int (*poll)(void *arg);      /* events handled (>= 0) */
        void *arg;
    } pollers[PROG_MAX_POLLERS];
    int npollers;

    const struct boot_info *boot;    /* node map: same-node peers, node of a rank */
    net_liveness_t live;             /* the liveness detector, if any */
    double peer_check;               /* VCOLL_PEER_CHECK, seconds */
    int spin;                        /* empty polls before a wait yields */
    uint8_t *near;                   /* [size]: world rank bound to CPUs of
                                        mine, more ranks than CPUs there
                                        (prog_spin_for; NULL: none) */
    uint8_t *dead;                   /* [size]: world rank found dead */
    int ndead;
    int dead_peer;                   /* first rank found dead, or -1 */
    char dead_why[160];

    /* vc_set_idle_hook: called while a wait idles (another library's
       progress, for the MPI drop-in) */
    struct {
        void (*fn)(void *arg);
        void *arg;
    } idle_hook;
    /* VC_THREAD_MULTIPLE: the API's lock, given up while a wait idles
       (yield) and handed over after progress when others queue (pass);
       both NULL otherwise, which is how the layers below tell the level */
    void (*yield)(int spinning);
    void (*pass)(void);
} prog_t;

/* Set up for a world of size ranks (the dead table); VC_ERR_NOMEM. */
int prog_init(prog_t *p, int rank, int size, const struct boot_info *boot, double peer_check,
              int spin);
void prog_fini(prog_t *p);
/* register a transport (polled in the order added) / an upper layer's poller */
int prog_add_net(prog_t *p, net_t *n);
int prog_add_poller(prog_t *p, int (*poll)(void *arg), void *arg);

/* Drive every transport once, then the pollers. Events handled (>= 0). */
int prog_poll(prog_t *p);
/* The error of the failed transport n, or VC_SUCCESS. */
int prog_net_error(const prog_t *p, const net_t *n);

/* A blocking loop found nothing to do: spin first, then yield (and run the
 * idle hook now and then, and let other threads into the library). */
void prog_backoff(prog_t *p, unsigned *idle);
/* The empty polls before a wait for world rank w (-1: unknown) yields.
 * A rank bound to a core of mine can only run when I leave it: waiting
 * for it, every pause before yielding is its time lost, so yield at once.
 * Anyone else may be running on another core right now: spin first. */
static inline int prog_spin_for(const prog_t *p, int w)
{
    return p->near && w >= 0 && p->near[w] ? 0 : p->spin;
}
/* prog_backoff with spin empty polls before yielding */
void prog_backoff_spin(prog_t *p, unsigned *idle, int spin);
/* 1 when a waiting loop's peers are due for a probe: every
 * VCOLL_PEER_CHECK seconds, looked at only after the spin phase */
int prog_probe_due(prog_t *p, unsigned idle, double *next_check);
double prog_now(void);

/* Record world rank peer as dead (first reason kept, logged once) and tell
 * the liveness detector, so the peer learns we gave up on it. */
void prog_peer_failed(prog_t *p, int peer, const char *why);
/* Is world rank w dead? Probes it (pid on this node, heartbeats on
 * another) and records a death; 1 = dead. */
int prog_peer_probe(prog_t *p, int w);
/* Probe this node's peers by pid (cheap). */
void prog_probe_local(prog_t *p);
/* 1 if some member of comm is known dead */
int prog_comm_has_dead(const prog_t *p, const struct vc_comm *comm);

/* An idle step of a wait on something other than a request (shared-memory
 * flags, a communicator's segment): progress, back off, probe this node's
 * peers. VC_ERR_PEER_FAILED if a member of comm died (failures are scoped:
 * a death outside comm does not end the wait). peer: the world rank the
 * wait is for, if one is (prog_spin_for), else -1; PROG_YIELD_AT_ONCE:
 * yield on every empty poll (the wait is for a rank that may need this
 * very core, on a node with more ranks than cores). */
#define PROG_YIELD_AT_ONCE (-2)
int prog_wait_step(prog_t *p, const struct vc_comm *comm, unsigned *idle, double *next_check,
                   int peer);

#endif
