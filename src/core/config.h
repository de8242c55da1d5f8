/*
 * config.h -- every VCOLL_* environment variable, parsed in one place
 * (config.c holds the table: name, default, allowed values, help text).
 * vcoll_info --config prints the same table.
 */
#ifndef VC_CONFIG_H
#define VC_CONFIG_H

#include <stddef.h>

enum { CFG_NET_AUTO, CFG_NET_SHM, CFG_NET_RC, CFG_NET_UD };
enum { CFG_LOG_ERROR, CFG_LOG_WARN, CFG_LOG_INFO, CFG_LOG_DEBUG };
enum { CFG_CMA_AUTO, CFG_CMA_OFF, CFG_CMA_ON };

/* Default VCOLL_RC_MAX_PEERS: the most peers the RC transport's shared
 * receive queue can give a full window, RC_SRQ_MAX / (RC_PEER_CREDITS +
 * RC_CREDIT_RESERVE) = 65536 / 35 (net/verbs/rc.h checks the arithmetic).
 * A job whose ranks may have more remote peers than that uses UD for all
 * of them from the start, instead of every rank finding out one peer at a
 * time. */
#define CFG_RC_MAX_PEERS_DEFAULT 1872

/* collectives with a VCOLL_<COLL>_ALG (coll/sched.h: COLL_NKINDS) */
#define CFG_NCOLL 16

typedef struct vc_config {
    int net;                 /* VCOLL_NET */
    size_t eager_limit;      /* VCOLL_EAGER_LIMIT (bytes) */
    int log_level;           /* VCOLL_LOG */
    int shm_cma;             /* VCOLL_SHM_CMA */
    int shm_cells;           /* VCOLL_SHM_CELLS: cells per sender->receiver ring */
    size_t shm_pull_min;     /* VCOLL_SHM_PULL_MIN: 0 = from the measured CMA call */
    size_t shm_coll_max;     /* VCOLL_SHM_COLL_MAX: collective segments per node (bytes) */
    int spin;                /* VCOLL_SPIN: empty polls before yielding */
    double peer_check;       /* VCOLL_PEER_CHECK: seconds between liveness checks */
    double peer_timeout;     /* VCOLL_PEER_TIMEOUT: remote peer silent this long = dead */
    /* verbs */
    char hca[256];           /* VCOLL_HCA: "" = choose with hwloc */
    int gid_index;           /* VCOLL_GID_INDEX: -1 = choose */
    int rc_max_peers;        /* VCOLL_RC_MAX_PEERS */
    int rc_max_qp;           /* VCOLL_RC_MAX_QP: 0 = the device's max_qp */
    int ib_timeout;          /* VCOLL_IB_TIMEOUT (4.096us * 2^x) */
    int ib_retry;            /* VCOLL_IB_RETRY */
    int ib_rnr_retry;        /* VCOLL_IB_RNR_RETRY */
    int ib_rx_depth;         /* VCOLL_IB_RX_DEPTH: receive buffers per QP/SRQ */
    int ib_tx_depth;         /* VCOLL_IB_TX_DEPTH: send queue depth per QP */
    size_t ud_window;        /* VCOLL_UD_WINDOW: UD bytes in flight per peer */
    double ud_rto;           /* VCOLL_UD_RTO: first retransmission timeout (s) */
    double ud_timeout;       /* VCOLL_UD_TIMEOUT: unacknowledged this long = dead */
    double ud_loss;          /* VCOLL_UD_LOSS: fault injection, drop fraction */
    char fault_rc_err[64];   /* VCOLL_FAULT_RC_ERR: "A>B@N" fault injection */
    char fault_shm_send[64]; /* VCOLL_FAULT_SHM_SEND: "A>B@N" fault injection */
    char fault_shm_pull[64]; /* VCOLL_FAULT_SHM_PULL: "short" or "refuse@N" */
    int rcache;              /* VCOLL_RCACHE: keep rendezvous registrations */
    size_t rcache_max;       /* VCOLL_RCACHE_MAX: bytes they may pin */
    int fault_rcache_stale;  /* testing only: releases not forwarded to the cache */
    /* collectives: VCOLL_<COLL>_ALG as written ("auto" or an algorithm
       name, checked against the registry by coll at vc_init), in the
       order of the COLL_* kinds; the rules table to use */
    char coll_alg[CFG_NCOLL][32];
    char tune_file[512];     /* VCOLL_TUNE_FILE */
} vc_config_t;

/* Parse from an environment lookup function (getenv, or a test's fake).
 * On a bad value: returns VC_ERR_ARG and writes a message naming the
 * variable into err (errlen bytes). */
int cfg_parse(vc_config_t *cfg, const char *(*getenv_fn)(const char *),
              char *err, size_t errlen);

/* For vcoll_info: iterate the table. Returns 0 past the end. */
int cfg_describe(int i, const char **name, const char **deflt,
                 const char **help);

/* Allowed values of table entry i as "a|b|c" ("" for free-form values). */
int cfg_values(int i, char *buf, size_t len);

#endif
