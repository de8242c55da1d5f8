/*
 * ctx.h -- the library's state: one handle per layer, and what the API
 * keeps for itself (the thread lock, the op table). Only the API
 * (src/api) and the lifecycle (src/lifecycle) touch it: every layer below
 * gets its own handle passed in (p2p and coll through the communicator,
 * the transports a net_env_t at open) and never reaches up here.
 */
#ifndef VC_CTX_H
#define VC_CTX_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "config.h"
#include "ops.h"
#include "request.h"
#include "../boot/boot.h"
#include "../net/net.h"
#include "../progress/progress.h"
#include "../coll/coll.h"

struct p2p_state;

struct vc_ctx {
    int initialized;         /* between vc_init and vc_finalize */
    int finalized;
    vc_config_t cfg;
    boot_info_t boot;
    int rank, size;          /* world (copies of boot.*) */

    /* the transports the lifecycle opened (it closes them); the layers
       above reach them only through the progress layer's list */
    net_t *self;             /* loopback to my own rank */
    net_t *shm;              /* same-node peers */
    net_t *rc;               /* verbs RC (remote peers, or all with VCOLL_NET=rc) */
    net_t *ud;               /* verbs UD */
    net_env_t net_env;       /* what the transports see of this context
                                (net.h), built by the lifecycle; its hb is
                                the liveness detector for remote peers, or
                                NULL (the lifecycle opens and closes it) */
    struct net_vdev *net_vdev;   /* net_env.vdev's slot: the verbs device the
                                    verbs transports share, NULL when none
                                    holds it (they open and close it) */

    prog_t prog;             /* progress: transports, pollers, liveness, dead table */
    struct p2p_state *p2p;   /* matching queues, backlogs (p2p layer) */
    coll_state_t coll;       /* context ids, node memory, settings (coll layer) */
    req_pool_t reqs;         /* every request object (request.c) */
    ops_table_t ops;         /* vc_op_create */

    /* VC_THREAD_MULTIPLE: one lock around the whole library (api/lock.c).
       The owner/depth pair makes it re-entrant (a public call may call
       another) and lets a waiting call hand it over completely; depth is
       only ever touched by the owner. */
    int thread_level;        /* granted by vc_init / vc_init_thread */
    int thread_multiple;     /* thread_level == MULTIPLE: public calls lock */
    pthread_mutex_t lock;
    pthread_t lock_owner;    /* read without the lock: atomics only */
    unsigned lock_depth;
    unsigned lock_waiters;   /* threads blocked on `lock` (atomic) */
    unsigned lock_handoffs;  /* contended acquisitions so far (atomic) */
};

/* the one instance (src/api/ctx.c) */
extern struct vc_ctx ctx_lib;

#endif
