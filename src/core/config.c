/*
 * config.c -- the table of every VCOLL_* variable. One place parses them all,
 * so a typo in a value is an error at vc_init that names the variable, and
 * vcoll_info --config prints exactly what the library reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stddef.h>
#include "vcoll.h"
#include "config.h"

#define CFG_STR_(x) #x
#define CFG_STR(x) CFG_STR_(x)

enum { T_ENUM, T_SIZE, T_INT, T_DOUBLE, T_STRING, T_ALG };

typedef struct {
    const char *name;
    int type;
    size_t off;               /* field offset in vc_config_t */
    const char *deflt;
    const char *const *names; /* T_ENUM / T_ALG: allowed values (index = value) */
    long min, max;            /* T_INT / T_SIZE bounds; T_STRING: max = buffer size */
    const char *help;
} cfg_entry_t;

static const char *const net_names[] = {"auto", "shm", "rc", "ud", NULL};
static const char *const log_names[] = {"error", "warn", "info", "debug", NULL};
static const char *const cma_names[] = {"auto", "off", "on", NULL};
static const char *const onoff_names[] = {"off", "on", NULL};

#define F(x) offsetof(vc_config_t, x)
/* T_STRING: max is the buffer's size */
#define S(x) (long)sizeof(((vc_config_t *)0)->x)
static const cfg_entry_t table[] = {
    {"VCOLL_NET", T_ENUM, F(net), "auto", net_names, 0, 0,
     "transport: auto (shm on a node, rc across nodes, ud past VCOLL_RC_MAX_PEERS), or force shm|rc|ud for every peer"},
    {"VCOLL_EAGER_LIMIT", T_SIZE, F(eager_limit), "8192", NULL, 0, 1 << 20,
     "largest message (bytes) sent eagerly; larger ones use rendezvous"},
    {"VCOLL_LOG", T_ENUM, F(log_level), "warn", log_names, 0, 0,
     "log level: error|warn|info|debug (lines carry the rank)"},
    {"VCOLL_SHM_CMA", T_ENUM, F(shm_cma), "auto", cma_names, 0, 0,
     "single-copy large shm messages with process_vm_readv: auto|off|on"},
    {"VCOLL_SHM_PULL_MIN", T_SIZE, F(shm_pull_min), "0", NULL, 0, 1L << 30,
     "smallest shm message read with one process_vm_readv; smaller ones past the eager limit are streamed through the rings; 0 = from the cost of that call, measured at start-up"},
    {"VCOLL_SHM_CELLS", T_INT, F(shm_cells), "16", NULL, 2, 4096,
     "capacity of each sender->receiver shared-memory ring, in packets of the largest eager size (small packets take one 64-byte line each)"},
    {"VCOLL_SHM_COLL_MAX", T_SIZE, F(shm_coll_max), "64m", NULL, 0, 1L << 40,
     "most bytes of shared segments for collectives on one node (all communicators of the job); past it collectives use messages"},
    {"VCOLL_SPIN", T_INT, F(spin), "-1", NULL, -1, 100000000,
     "empty progress polls before a waiting call yields the core; -1 = 2000, or 16 when ranks outnumber cores"},
    {"VCOLL_PEER_CHECK", T_DOUBLE, F(peer_check), "0.2", NULL, 0, 0,
     "seconds between liveness checks of peers while a call waits"},
    {"VCOLL_PEER_TIMEOUT", T_DOUBLE, F(peer_timeout), "5", NULL, 0, 0,
     "seconds a remote peer a call waits on may leave heartbeats unanswered before it is declared dead; 0 = no detector"},
    {"VCOLL_HCA", T_STRING, F(hca), "", NULL, 0, S(hca),
     "dev[:port][,dev[:port]...] to use (list indexed by local rank); empty = nearest by hwloc"},
    {"VCOLL_GID_INDEX", T_INT, F(gid_index), "-1", NULL, -1, 65535,
     "RoCE GID index; -1 = prefer RoCE v2 IPv4-mapped"},
    {"VCOLL_RC_MAX_PEERS", T_INT, F(rc_max_peers), CFG_STR(CFG_RC_MAX_PEERS_DEFAULT), NULL,
     0, 1 << 24,
     "when a rank may have more remote peers than this (the most the RC receive queue "
     "serves with full windows), every rank uses UD for remote peers; 0 = no limit"},
    {"VCOLL_RC_MAX_QP", T_INT, F(rc_max_qp), "0", NULL, 0, 1 << 24,
     "RC QPs a process makes for peers at most (clamped to the device's max_qp; 0 = the "
     "device's); past it a peer uses UD (auto) or fails (VCOLL_NET=rc)"},
    {"VCOLL_IB_TIMEOUT", T_INT, F(ib_timeout), "14", NULL, 1, 31,
     "RC local ACK timeout exponent (4.096us * 2^x)"},
    {"VCOLL_IB_RETRY", T_INT, F(ib_retry), "7", NULL, 0, 7,
     "RC transport retry count"},
    {"VCOLL_IB_RNR_RETRY", T_INT, F(ib_rnr_retry), "7", NULL, 0, 7,
     "RC receiver-not-ready retry count (7 = infinite)"},
    {"VCOLL_IB_RX_DEPTH", T_INT, F(ib_rx_depth), "512", NULL, 16, 65536,
     "receive buffers posted to the shared receive queue"},
    {"VCOLL_IB_TX_DEPTH", T_INT, F(ib_tx_depth), "128", NULL, 8, 16384,
     "send queue depth per queue pair"},
    {"VCOLL_UD_WINDOW", T_SIZE, F(ud_window), "256k", NULL, 8192, 16L << 20,
     "UD bytes in flight per peer before the sender waits for acknowledgements (whole "
     "fragments of one path MTU, at least two of the largest packets)"},
    {"VCOLL_UD_RTO", T_DOUBLE, F(ud_rto), "0.02", NULL, 0, 60,
     "seconds before an unacknowledged UD packet is first resent (doubles up to 1 s)"},
    {"VCOLL_UD_TIMEOUT", T_DOUBLE, F(ud_timeout), "120", NULL, 0, 0,
     "seconds without an acknowledgement before a UD peer is declared dead; 0 = never"},
    {"VCOLL_UD_LOSS", T_DOUBLE, F(ud_loss), "0", NULL, 0, 1,
     "testing only: fraction of arriving UD packets dropped on purpose (exercises resends)"},
    {"VCOLL_FAULT_RC_ERR", T_STRING, F(fault_rc_err), "", NULL, 0, S(fault_rc_err),
     "testing only: A>B@N = rank A moves its RC queue pair to rank B into the error state after N sends (a failure one end sees)"},
    {"VCOLL_FAULT_SHM_SEND", T_STRING, F(fault_shm_send), "", NULL, 0, S(fault_shm_send),
     "testing only: A>B@N = from its Nth shared-memory send to rank B on, every one rank A makes fails (a broken link only the sender sees)"},
    {"VCOLL_FAULT_SHM_PULL", T_STRING, F(fault_shm_pull), "", NULL, 0, S(fault_shm_pull),
     "testing only: short = every CMA read reports half of what it copied (the rest is read again); refuse@N = CMA reads fail with EPERM after N worked (a policy changed under the job); refuse@batch = from the first read of several messages on"},
    {"VCOLL_RCACHE", T_ENUM, F(rcache), "on", onoff_names, 0, 0,
     "keep RC rendezvous buffers registered for reuse (on|off); invalidated when their memory is unmapped"},
    {"VCOLL_RCACHE_MAX", T_SIZE, F(rcache_max), "256m", NULL, 0, 1L << 40,
     "bytes the registration cache may keep registered; least recently used go first"},
    {"VCOLL_FAULT_RCACHE_STALE", T_ENUM, F(fault_rcache_stale), "off", onoff_names, 0, 0,
     "testing only: the registration cache ignores memory releases, so it goes stale (proves the stale-registration test can fail)"},
    {"VCOLL_BARRIER_ALG", T_ALG, F(coll_alg[0]), "auto", NULL, 0, 0,
     "force a barrier algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_BCAST_ALG", T_ALG, F(coll_alg[1]), "auto", NULL, 0, 0,
     "force a bcast algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_REDUCE_ALG", T_ALG, F(coll_alg[2]), "auto", NULL, 0, 0,
     "force a reduce algorithm (non-commutative ops always use a rank-ordered one); vcoll_info --algorithms lists them"},
    {"VCOLL_ALLREDUCE_ALG", T_ALG, F(coll_alg[3]), "auto", NULL, 0, 0,
     "force an allreduce algorithm (non-commutative ops always use a rank-ordered one); vcoll_info --algorithms lists them"},
    {"VCOLL_ALLGATHER_ALG", T_ALG, F(coll_alg[4]), "auto", NULL, 0, 0,
     "force an allgather algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_GATHER_ALG", T_ALG, F(coll_alg[5]), "auto", NULL, 0, 0,
     "force a gather algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_GATHERV_ALG", T_ALG, F(coll_alg[6]), "auto", NULL, 0, 0,
     "force a gatherv algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_SCATTER_ALG", T_ALG, F(coll_alg[7]), "auto", NULL, 0, 0,
     "force a scatter algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_SCATTERV_ALG", T_ALG, F(coll_alg[8]), "auto", NULL, 0, 0,
     "force a scatterv algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_ALLGATHERV_ALG", T_ALG, F(coll_alg[9]), "auto", NULL, 0, 0,
     "force an allgatherv algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_ALLTOALL_ALG", T_ALG, F(coll_alg[10]), "auto", NULL, 0, 0,
     "force an alltoall algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_ALLTOALLV_ALG", T_ALG, F(coll_alg[11]), "auto", NULL, 0, 0,
     "force an alltoallv algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_REDUCE_SCATTER_BLOCK_ALG", T_ALG, F(coll_alg[12]), "auto", NULL, 0, 0,
     "force a reduce_scatter_block algorithm (non-commutative ops always use a rank-ordered one); vcoll_info --algorithms lists them"},
    {"VCOLL_REDUCE_SCATTER_ALG", T_ALG, F(coll_alg[13]), "auto", NULL, 0, 0,
     "force a reduce_scatter algorithm (non-commutative ops always use a rank-ordered one); vcoll_info --algorithms lists them"},
    {"VCOLL_SCAN_ALG", T_ALG, F(coll_alg[14]), "auto", NULL, 0, 0,
     "force a scan algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_EXSCAN_ALG", T_ALG, F(coll_alg[15]), "auto", NULL, 0, 0,
     "force an exscan algorithm; vcoll_info --algorithms lists them"},
    {"VCOLL_TUNE_FILE", T_STRING, F(tune_file), "", NULL, 0, S(tune_file),
     "collective selection rules (vcoll_tune writes them): a file (an error if it is missing or malformed), optional:<file> (ignored with a warning then), builtin, or empty = ~/.config/vcoll/tune.rules, then <sysconfdir>/vcoll/tune.rules, else built-in"},
};
#undef F
#undef S
#define NENTRIES (sizeof table / sizeof table[0])

static void list_names(const char *const *names, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; names[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", names[i]);
}

/* Sizes accept k/m/g suffixes (powers of two), as users write "64k". */
static int parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1ull << 10, end++;
    else if (*end == 'm' || *end == 'M') mul = 1ull << 20, end++;
    else if (*end == 'g' || *end == 'G') mul = 1ull << 30, end++;
    if (*end)
        return -1;
    if (v > ~0ull / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int set_entry(vc_config_t *cfg, const cfg_entry_t *e, const char *val,
                     char *err, size_t errlen)
{
    char *p = (char *)cfg + e->off;
    char *end;
    char allowed[256];

    switch (e->type) {
    case T_ALG: {
        /* a name; coll checks it against its registry at vc_init */
        size_t n = strlen(val);
        if (n == 0 || n >= sizeof cfg->coll_alg[0] || strspn(val, "abcdefghijklmnopqrstuvwxyz"
                                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != n) {
            snprintf(err, errlen, "%s=\"%.40s\" is not an algorithm name (letters, digits, "
                     "'_'; vcoll_info --algorithms lists them)", e->name, val);
            return VC_ERR_ARG;
        }
        for (size_t i = 0; i <= n; i++)
            p[i] = (char)(val[i] >= 'A' && val[i] <= 'Z' ? val[i] - 'A' + 'a' : val[i]);
        return VC_SUCCESS;
    }
    case T_ENUM:
        for (int i = 0; e->names[i]; i++)
            if (!strcasecmp(val, e->names[i])) {
                *(int *)p = i;
                return VC_SUCCESS;
            }
        list_names(e->names, allowed, sizeof allowed);
        snprintf(err, errlen, "%s=\"%s\" is not valid; use one of %s", e->name, val, allowed);
        return VC_ERR_ARG;
    case T_SIZE: {
        unsigned long long v;
        if (parse_size(val, &v) || v < (unsigned long long)e->min || v > (unsigned long long)e->max) {
            snprintf(err, errlen, "%s=\"%s\" is not valid; use a byte count from %ld to %ld (k/m suffixes allowed)",
                     e->name, val, e->min, e->max);
            return VC_ERR_ARG;
        }
        *(size_t *)p = (size_t)v;
        return VC_SUCCESS;
    }
    case T_INT: {
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < e->min || v > e->max) {
            snprintf(err, errlen, "%s=\"%s\" is not valid; use an integer from %ld to %ld",
                     e->name, val, e->min, e->max);
            return VC_ERR_ARG;
        }
        *(int *)p = (int)v;
        return VC_SUCCESS;
    }
    case T_DOUBLE: {
        errno = 0;
        double v = strtod(val, &end);
        double hi = e->max ? (double)e->max : 1e6;
        if (errno || end == val || *end || !(v >= 0) || v > hi) {
            snprintf(err, errlen, "%s=\"%s\" is not valid; use a number from 0 to %g", e->name,
                     val, hi);
            return VC_ERR_ARG;
        }
        *(double *)p = v;
        return VC_SUCCESS;
    }
    case T_STRING:
        if (strlen(val) >= (size_t)e->max) {
            snprintf(err, errlen, "%s is longer than %zu characters", e->name,
                     (size_t)e->max - 1);
            return VC_ERR_ARG;
        }
        strcpy(p, val);
        return VC_SUCCESS;
    }
    snprintf(err, errlen, "%s: internal table error", e->name);
    return VC_ERR_INTERNAL;
}

int cfg_parse(vc_config_t *cfg, const char *(*getenv_fn)(const char *), char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NENTRIES; i++) {
        int rc = set_entry(cfg, &table[i], table[i].deflt, err, errlen);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < NENTRIES; i++) {
        const char *v = getenv_fn(table[i].name);
        if (!v)
            continue;
        int rc = set_entry(cfg, &table[i], v, err, errlen);
        if (rc)
            return rc;
    }
    return VC_SUCCESS;
}

int cfg_describe(int i, const char **name, const char **deflt, const char **help)
{
    if (i < 0 || (size_t)i >= NENTRIES)
        return 0;
    *name = table[i].name;
    *deflt = table[i].deflt;
    *help = table[i].help;
    return 1;
}

int cfg_values(int i, char *buf, size_t len)
{
    if (i < 0 || (size_t)i >= NENTRIES || !len)
        return 0;
    buf[0] = 0;
    if (table[i].type == T_ENUM)
        list_names(table[i].names, buf, len);
    return 1;
}
