/*
 * ctx.h -- the one context struct that holds all library state.
 */
#ifndef VC_CTX_H
#define VC_CTX_H

#include <sys/types.h>
#include "config.h"
#include "../boot/boot.h"
#include "ops.h"
#include "request.h"

struct p2p_state;
typedef struct net net_t;    /* net/net.h */
typedef struct net_hb net_hb_t;

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

    struct p2p_state *p2p;   /* matching queues, backlogs (p2p layer) */
    req_pool_t reqs;         /* every request object (request.c) */
    uint32_t next_ctx;       /* next free communicator context id (even) */
    ops_slot_t user_ops[OP_USER_SLOTS];   /* vc_op_create */
    net_hb_t *hb;            /* liveness detector for remote peers, or NULL */
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
};

extern struct vc_ctx vc_ctx;

/* Shared guard for every public call. */
#define VC_CHECK_INIT() \
    do { if (!vc_ctx.initialized) return VC_ERR_NOT_INITIALIZED; } while (0)

#endif
