/*
 * ctx.h -- the one context struct that holds all library state.
 */
#ifndef VC_CTX_H
#define VC_CTX_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "config.h"
#include "../boot/boot.h"
#include "../net/net.h"
#include "ops.h"
#include "request.h"

struct p2p_state;
typedef struct net net_t;    /* net/net.h */

struct vc_ctx {
    int initialized;         /* between vc_init and vc_finalize */
    int finalized;
    vc_config_t cfg;
    boot_info_t boot;
    int rank, size;          /* world (copies of boot.*) */

    net_t *self;             /* loopback to my own rank */
    net_t *shm;              /* same-node peers */
    net_t *rc;               /* verbs RC (remote peers, or all with VCOLL_NET=rc) */
    net_t *ud;               /* verbs UD */
    net_t **net_of;          /* transport for each world rank */
    net_env_t net_env;       /* what the transports see of this context
                                (net.h), built by the lifecycle; its hb is
                                the liveness detector for remote peers, or
                                NULL (the lifecycle opens and closes it) */
    struct net_vdev *net_vdev;   /* net_env.vdev's slot: the verbs device the
                                    verbs transports share, NULL when none
                                    holds it (they open and close it) */

    struct p2p_state *p2p;   /* matching queues, backlogs (p2p layer) */
    req_pool_t reqs;         /* every request object (request.c) */
    uint32_t next_ctx;       /* next free communicator context id (even) */
    struct ctx_resv *ctx_resv;   /* ids held by comm creations in flight (comm_split.c) */
    ops_slot_t user_ops[OP_USER_SLOTS];   /* vc_op_create */
    net_liveness_t live;     /* what the layers above see of it (net.h) */
    uint8_t *dead;           /* [size]: world rank found dead (failures are
                                scoped: only what involves it fails) */
    int ndead;
    int dead_peer;           /* first world rank found dead, or -1 */
    char dead_why[160];
    /* First error each transport's progress() returned (VC_ERR_*, 0 = none),
       in vc_progress's order: self, shm, rc, ud. A failed transport is not
       polled again and the waits that depend on it fail with its error
       (progress.c); net_failed says whether any has failed. */
    int net_err[4];
    int net_failed;

    /* VC_THREAD_MULTIPLE: one lock around the whole library (lock.c). The
       owner/depth pair makes it re-entrant (a public call may call another)
       and lets a waiting call hand it over completely; depth is only ever
       touched by the owner. */
    int thread_level;        /* granted by vc_init / vc_init_thread */
    int thread_multiple;     /* thread_level == MULTIPLE: public calls lock */
    pthread_mutex_t lock;
    pthread_t lock_owner;    /* read without the lock: atomics only */
    unsigned lock_depth;
    unsigned lock_waiters;   /* threads blocked on `lock` (atomic) */
    unsigned lock_handoffs;  /* contended acquisitions so far (atomic) */

    /* some node runs more ranks than it has cores: the same on every rank
       (from the endpoint fence's data, lifecycle/init.c), read by the
       collective algorithm choice */
    int any_node_oversub;
    /* vc_set_idle_hook: called by vc_backoff while a wait idles (a
       thread-local flag there keeps it from re-entering itself) */
    struct {
        void (*fn)(void *arg);
        void *arg;
    } idle_hook;
};

extern struct vc_ctx vc_ctx;

/* First statement of every public call that touches library state: under
 * VC_THREAD_MULTIPLE it takes the library lock, and the cleanup attribute
 * releases it on every return path. Otherwise it costs one well-predicted
 * test of thread_multiple (the leave test reads the same local); the flag is
 * copied because vc_init_thread sets it during its own call. */
int vc_lock_enter(void);
void vc_lock_leave(void);
static inline void vc_api_leave_(int *held)
{
    if (__builtin_expect(*held, 0))
        vc_lock_leave();
}
#define VC_API_ENTER() \
    __attribute__((cleanup(vc_api_leave_))) int vc_api_held_ = \
        __builtin_expect(vc_ctx.thread_multiple, 0) ? vc_lock_enter() : 0

/* A blocking call that found nothing to do: let other threads into the
 * library for a moment (lock.c). spinning = still in the polling phase. */
void vc_lock_idle(int spinning);
/* A blocking call that made progress: hand the lock over only if another
 * thread is queued for it, so a busy waiter cannot starve the others. */
void vc_lock_pass(void);

/* Shared guard for every public call. */
#define VC_CHECK_INIT() \
    do { if (!vc_ctx.initialized) return VC_ERR_NOT_INITIALIZED; } while (0)

#endif
