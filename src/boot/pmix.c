/*
 * pmix.c -- bootstrap through PMIx: works under Open MPI's mpirun and Slurm's
 * srun --mpi=pmix (both serve the same libpmix here, but type some keys
 * differently, so every integer read accepts several types).
 * With no launcher at all we run as a 1-rank job with a local key store.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vcoll.h"
#include "boot.h"
#include "../core/log.h"

/* PMIx's names for this process and for all of the job: built from the
   state in boot_info_t (boot.h keeps PMIx's types out of the context) */
static void me_proc(const boot_info_t *b, pmix_proc_t *p)
{
    PMIX_LOAD_PROCID(p, b->st.nspace, (pmix_rank_t)b->st.prank);
}

static void wild_proc(const boot_info_t *b, pmix_proc_t *p)
{
    PMIX_LOAD_PROCID(p, b->st.nspace, PMIX_RANK_WILDCARD);
}

static const char *getenv_c(const char *n) { return getenv(n); }

static int get_uint(const pmix_proc_t *p, const char *key, int optional, long *out)
{
    pmix_value_t *val = NULL;
    pmix_info_t info;
    bool t = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &t, PMIX_BOOL);
    pmix_status_t rc = PMIx_Get(p, key, optional ? &info : NULL, optional ? 1 : 0, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || !val)
        return -1;
    int ok = 0;
    switch (val->type) {
    case PMIX_UINT8: *out = val->data.uint8; break;
    case PMIX_UINT16: *out = val->data.uint16; break;
    case PMIX_UINT32: *out = val->data.uint32; break;
    case PMIX_UINT64: *out = (long)val->data.uint64; break;
    case PMIX_INT: *out = val->data.integer; break;
    case PMIX_INT32: *out = val->data.int32; break;
    case PMIX_SIZE: *out = (long)val->data.size; break;
    case PMIX_PROC_RANK: *out = val->data.rank; break;
    default: ok = -1;
    }
    PMIX_VALUE_RELEASE(val);
    return ok;
}

/* node: NULL, or ask about that node (job-level data of another node) */
static int get_string_qual(const pmix_proc_t *p, const char *node, const char *key,
                           char **out)
{
    pmix_value_t *val = NULL;
    pmix_info_t info[2];
    bool t = true;
    PMIX_INFO_LOAD(&info[0], PMIX_OPTIONAL, &t, PMIX_BOOL);
    if (node)
        PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, node, PMIX_STRING);
    pmix_status_t rc = PMIx_Get(p, key, info, node ? 2 : 1, &val);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (node)
        PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS || !val)
        return -1;
    int ok = -1;
    if (val->type == PMIX_STRING && val->data.string) {
        *out = strdup(val->data.string);
        ok = *out ? 0 : -1;
    }
    PMIX_VALUE_RELEASE(val);
    return ok;
}

static int get_string(const pmix_proc_t *p, const char *key, char **out)
{
    return get_string_qual(p, NULL, key, out);
}


/* "0,1,2,3" or ranges "0-3,8" -> sorted list */
static int parse_peers(const char *s, int size, int **out, int *n)
{
    int *v = calloc((size_t)size, sizeof *v), cnt = 0;
    if (!v)
        return VC_ERR_NOMEM;
    while (s && *s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long r = a; r <= b; r++)
            if (r >= 0 && r < size && cnt < size)
                v[cnt++] = (int)r;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' )
            break;
    }
    *out = v;
    *n = cnt;
    return VC_SUCCESS;
}

/* Every rank's host name, exchanged through one collecting fence of its
 * own: after it, each lookup is local to this rank's PMIx client, so the
 * map costs one fence and one local Get per rank whatever the server knows.
 * Why not PMIx's own maps: Open MPI 4.1's server describes only some nodes
 * to each rank (PMIX_NODE_MAP and PMIX_NUM_NODES absent, PMIx_Resolve_peers
 * blocking forever for the others), and a Get of another rank's
 * PMIX_HOSTNAME before that rank has committed anything turns into a
 * direct-modex request that, on emulated nodes in the SoftRoCE guest, never
 * returned. Data every rank puts and fences cannot have that problem. */
#define HOST_KEY "vc.host"
static int map_by_exchange(boot_info_t *info, char *err, size_t errlen)
{
    int ret = boot_put(info, HOST_KEY, info->node_name, strlen(info->node_name) + 1);
    if (ret || (ret = boot_fence(info, 1))) {
        snprintf(err, errlen, "exchanging host names failed");
        return ret ? ret : VC_ERR_BOOTSTRAP;
    }
    char **host = calloc((size_t)info->size, sizeof *host);
    if (!host)
        return VC_ERR_NOMEM;
    for (int r = 0; r < info->size && !ret; r++) {
        char buf[sizeof info->node_name];
        size_t len = sizeof buf;
        if (boot_get(info, r, HOST_KEY, buf, &len) || len < 1 || buf[len - 1]) {
            snprintf(err, errlen, "no host name from rank %d", r);
            ret = VC_ERR_BOOTSTRAP;
        } else if (!(host[r] = strdup(buf))) {
            ret = VC_ERR_NOMEM;
        }
    }
    if (!ret)
        ret = boot_nodemap_from_hosts(info->size, (const char *const *)host, info->node_of,
                                      &info->nnodes, err, errlen);
    for (int r = 0; r < info->size; r++)
        free(host[r]);
    free(host);
    return ret;
}

/* The node map in O(nodes) Gets (map_by_leaders): every rank publishes its
 * node's leader, the leader also its node's ranks (from PMIX_LOCAL_PEERS).
 * A Get per rank of the host names would be 100k lookups per rank at 100k
 * ranks; PMIx's own per-node maps (PMIx_Resolve_peers) block under Open MPI
 * 4.1 for another node's data before a fence. */
#define NODE_KEY   "vc.node"
#define NODE_MAGIC 0x766e6f64u      /* "vnod" */

typedef struct node_fetch_arg {
    boot_info_t *info;
    int32_t *buf;           /* 12 + 4 * size bytes: a node holds at most all */
} node_fetch_arg_t;

/* The record's rank list is handed out where it lies in a->buf: the walk
   reads it before it fetches again. */
static int node_fetch(void *arg, int rank, int *leader, const int **ranks, int *nranks)
{
    node_fetch_arg_t *a = arg;
    boot_info_t *info = a->info;
    size_t len = 12 + (size_t)info->size * 4;
    int32_t *b = a->buf;
    int rc = boot_get(info, rank, NODE_KEY, b, &len);
    uint32_t n = 0;
    if (rc == VC_SUCCESS && len >= 12)
        n = (uint32_t)b[2];     /* only what this Get filled is read */
    if (rc || len < 12 || (uint32_t)b[0] != NODE_MAGIC || n > (uint32_t)info->size ||
        len != 12 + (size_t)n * 4) {
        LOG_ERR("rank %d published no node record this vcoll understands", rank);
        return VC_ERR_BOOTSTRAP;
    }
    *leader = b[1];
    *nranks = (int)n;
    *ranks = n ? b + 3 : NULL;
    return VC_SUCCESS;
}

static int map_by_leaders(boot_info_t *info, char *err, size_t errlen)
{
    int leader = info->local_peers[0];      /* sorted: the node's lowest rank */
    uint32_t n = leader == info->rank ? (uint32_t)info->local_size : 0;
    size_t len = 12 + (size_t)n * 4;
    int32_t *b = malloc(len);
    if (!b)
        return VC_ERR_NOMEM;
    b[0] = (int32_t)NODE_MAGIC;
    b[1] = leader;
    b[2] = (int32_t)n;
    for (uint32_t i = 0; i < n; i++)
        b[3 + i] = info->local_peers[i];
    int ret = boot_put(info, NODE_KEY, b, len);
    free(b);
    if (ret || (ret = boot_fence(info, 1))) {
        snprintf(err, errlen, "exchanging node records failed");
        return ret ? ret : VC_ERR_BOOTSTRAP;
    }
    int fetches = 0;
    node_fetch_arg_t a = {info, malloc(12 + (size_t)info->size * 4)};
    if (!a.buf)
        return VC_ERR_NOMEM;
    ret = boot_nodemap_walk(info->size, node_fetch, &a, info->node_of, &info->nnodes,
                            &fetches, err, errlen);
    free(a.buf);
    if (!ret)
        LOG_DEBUG("node map: %d nodes from %d lookups", info->nnodes, fetches);
    return ret;
}

/* Fill node_of, nnodes, node_id and node_name; check them against
 * PMIX_LOCAL_PEERS, which every launcher gives and transports rely on. */
static int load_nodemap(boot_info_t *info)
{
    char *name = NULL;
    pmix_proc_t me;
    me_proc(info, &me);
    if (get_string(&me, PMIX_HOSTNAME, &name) == 0) {
        snprintf(info->node_name, sizeof info->node_name, "%s", name);
        free(name);
    } else if (gethostname(info->node_name, sizeof info->node_name)) {
        info->node_name[0] = 0;
    }
    info->node_name[sizeof info->node_name - 1] = 0;
    info->node_of = malloc((size_t)info->size * sizeof(int));
    if (!info->node_of)
        return VC_ERR_NOMEM;

    char err[200] = "";
    int rc = VC_ERR_BOOTSTRAP;
    if (info->local_size == info->size && info->local_size > 0) {
        for (int r = 0; r < info->size; r++)
            info->node_of[r] = 0;
        info->nnodes = 1;
        info->map_source = "every rank is local (PMIX_LOCAL_PEERS)";
    } else if (info->local_size > 0 &&
               (rc = map_by_leaders(info, err, sizeof err)) == VC_SUCCESS) {
        info->map_source = "node leaders' PMIX_LOCAL_PEERS, exchanged at init";
    } else if (info->local_size == 0 &&
               (rc = map_by_exchange(info, err, sizeof err)) == VC_SUCCESS) {
        info->map_source = "host names exchanged at init";
    } else {
        if (rc != VC_ERR_NOMEM)
            LOG_ERR("cannot tell which node each rank is on: %s", err);
        return rc;
    }
    info->node_id = info->node_of[info->rank];
    if (info->local_size == 0) {
        /* PMIx gave no local peer list: the map is the only source */
        int k = 0;
        info->local_peers = malloc((size_t)info->size * sizeof(int));
        if (!info->local_peers)
            return VC_ERR_NOMEM;
        for (int r = 0; r < info->size; r++)
            if (info->node_of[r] == info->node_id) {
                if (r == info->rank)
                    info->local_rank = k;
                info->local_peers[k++] = r;
            }
        info->local_size = k;
    }
    int mine = 0;
    for (int r = 0; r < info->size; r++)
        mine += info->node_of[r] == info->node_id;
    int ok = mine == info->local_size;
    for (int i = 0; ok && i < info->local_size; i++)
        ok = info->node_of[info->local_peers[i]] == info->node_id;
    if (!ok) {
        LOG_ERR("PMIx contradicts itself: the node map (%s) puts %d ranks on this node, "
                "PMIX_LOCAL_PEERS lists %d", info->map_source, mine, info->local_size);
        return VC_ERR_BOOTSTRAP;
    }
    return VC_SUCCESS;
}

static int set_singleton(boot_info_t *info)
{
    info->rank = 0;
    info->size = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->node_id = 0;
    info->nnodes = 1;
    info->singleton = 1;
    info->launcher = "singleton";
    info->local_peers = calloc(1, sizeof(int));
    info->node_of = calloc(1, sizeof(int));
    if (!info->local_peers || !info->node_of)
        return VC_ERR_NOMEM;
    snprintf(info->jobid, sizeof info->jobid, "singleton.%d", (int)getpid());
    if (gethostname(info->node_name, sizeof info->node_name))
        info->node_name[0] = 0;
    info->node_name[sizeof info->node_name - 1] = 0;
    info->map_source = "singleton";
    return VC_SUCCESS;
}

int boot_init(boot_info_t *info)
{
    if (boot_exch_armed(info))
        return boot_exch_init(info);
    memset(info, 0, sizeof *info);

    const char *who;
    int foreign = boot_foreign_launcher(getenv_c, &who);
    /* Without any PMIx server address, PMIx_Init would only time out or
     * fall back to a singleton; skip it and decide from the environment. */
    if (!getenv("PMIX_SERVER_URI41") && !getenv("PMIX_SERVER_URI4") &&
        !getenv("PMIX_SERVER_URI3") && !getenv("PMIX_SERVER_URI2") &&
        !getenv("PMIX_SERVER_URI21") && !getenv("PMIX_NAMESPACE")) {
        if (foreign > 1) {
            LOG_ERR("this process was started by %s with %d processes, but vcoll "
                    "bootstraps through PMIx only: launch with `mpirun` (Open MPI) or "
                    "`srun --mpi=pmix` instead (refusing to run %d separate 1-rank jobs)",
                    who, foreign, foreign);
            return VC_ERR_BOOTSTRAP;
        }
        return set_singleton(info);
    }

    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc == PMIX_ERR_UNREACH || rc != PMIX_SUCCESS) {
        if (foreign > 1) {
            LOG_ERR("PMIx server unreachable (%s) and %s started %d processes: launch with "
                    "`mpirun` (Open MPI) or `srun --mpi=pmix`", PMIx_Error_string(rc), who, foreign);
            if (PMIx_Initialized())
                PMIx_Finalize(NULL, 0);
            return VC_ERR_BOOTSTRAP;
        }
        if (rc != PMIX_ERR_UNREACH) {
            LOG_ERR("PMIx_Init failed: %s (%d); launch with `mpirun` or `srun --mpi=pmix`",
                    PMIx_Error_string(rc), rc);
            return VC_ERR_BOOTSTRAP;
        }
        if (PMIx_Initialized())
            PMIx_Finalize(NULL, 0);
        return set_singleton(info);
    }
    info->st.pmix_up = 1;
    snprintf(info->st.nspace, sizeof info->st.nspace, "%s", me.nspace);
    info->st.prank = (uint32_t)me.rank;

    pmix_proc_t wild;
    wild_proc(info, &wild);
    long size = 0, lrank = 0;
    if (get_uint(&wild, PMIX_JOB_SIZE, 0, &size) || size < 1) {
        LOG_ERR("PMIx did not provide the job size (PMIX_JOB_SIZE)");
        return VC_ERR_BOOTSTRAP;
    }
    if (get_uint(&me, PMIX_LOCAL_RANK, 1, &lrank))
        lrank = 0;

    info->rank = (int)me.rank;
    info->size = (int)size;
    info->local_rank = (int)lrank;
    snprintf(info->jobid, sizeof info->jobid, "%s", me.nspace);
    info->launcher = !strncmp(me.nspace, "slurm.pmix", 10) ? "srun"
                   : getenv("OMPI_COMM_WORLD_SIZE") ? "mpirun" : "pmix";

    char *peers = NULL;
    int n = 0;
    if (get_string(&wild, PMIX_LOCAL_PEERS, &peers) == 0) {
        int r = parse_peers(peers, info->size, &info->local_peers, &n);
        free(peers);
        if (r)
            return r;
    }
    if (n < 1) {
        /* no peer list: the ranks sharing this node come from the host
           names exchanged for the node map (load_nodemap) */
        if (info->size > 1)
            LOG_WARN("PMIx did not provide PMIX_LOCAL_PEERS: the ranks sharing this node "
                     "are found from their host names");
        free(info->local_peers);
        info->local_peers = NULL;
        n = 0;
    }
    info->local_size = n;
    return load_nodemap(info);
}

size_t boot_put_bytes(const boot_info_t *b)
{
    return b->st.put_bytes;
}

int boot_put(boot_info_t *b, const char *key, const void *data, size_t len)
{
    b->st.put_bytes += strlen(key) + len;
    if (boot_exch_armed(b))
        return boot_exch_put(b, key, data, len);
    if (b->singleton)
        return boot_kv_push(&b->st.local, key, data, len);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)data;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) {
        LOG_ERR("PMIx_Put(%s) failed: %s", key, PMIx_Error_string(rc));
        return VC_ERR_BOOTSTRAP;
    }
    return VC_SUCCESS;
}

int boot_fence(boot_info_t *b, int collect_data)
{
    if (boot_exch_armed(b))
        return boot_exch_fence(b, collect_data);
    if (b->singleton)
        return VC_SUCCESS;
    pmix_status_t rc;
    if (collect_data && (rc = PMIx_Commit()) != PMIX_SUCCESS) {
        LOG_ERR("PMIx_Commit failed: %s", PMIx_Error_string(rc));
        return VC_ERR_BOOTSTRAP;
    }
    pmix_proc_t wild;
    wild_proc(b, &wild);
    pmix_info_t info;
    bool t = collect_data ? true : false;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    rc = PMIx_Fence(&wild, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        LOG_ERR("PMIx_Fence failed: %s (a peer may have died during start-up)",
                PMIx_Error_string(rc));
        return VC_ERR_BOOTSTRAP;
    }
    return VC_SUCCESS;
}

static void fence_done(pmix_status_t status, void *cbdata)
{
    __atomic_store_n((volatile int *)cbdata, status == PMIX_SUCCESS ? 1 : VC_ERR_BOOTSTRAP,
                     __ATOMIC_RELEASE);
}

int boot_fence_begin(boot_info_t *b)
{
    if (boot_exch_armed(b) || b->singleton || !b->st.pmix_up) {
        int rc = boot_fence(b, 0);
        b->st.fence_state = rc ? rc : 1;
        return rc;
    }
    bool no = false;
    pmix_info_t *fi = b->st.fence_info;
    if (!fi) {
        PMIX_INFO_CREATE(fi, 1);
        if (!fi)
            return VC_ERR_NOMEM;
        b->st.fence_info = fi;
    }
    PMIX_INFO_LOAD(fi, PMIX_COLLECT_DATA, &no, PMIX_BOOL);
    pmix_proc_t wild;
    wild_proc(b, &wild);
    b->st.fence_state = 0;
    pmix_status_t rc = PMIx_Fence_nb(&wild, 1, fi, 1, fence_done,
                                     (void *)&b->st.fence_state);
    if (rc != PMIX_SUCCESS) {
        LOG_ERR("PMIx_Fence_nb failed: %s", PMIx_Error_string(rc));
        b->st.fence_state = VC_ERR_BOOTSTRAP;
        return VC_ERR_BOOTSTRAP;
    }
    return VC_SUCCESS;
}

int boot_fence_poll(boot_info_t *b)
{
    return __atomic_load_n(&b->st.fence_state, __ATOMIC_ACQUIRE);
}

int boot_get(boot_info_t *b, int rank, const char *key, void *buf, size_t *len)
{
    if (boot_exch_armed(b))
        return boot_exch_get(b, rank, key, buf, len);
    if (b->singleton) {
        for (boot_kv_t *kv = b->st.local; kv; kv = kv->next)
            if (!strcmp(kv->key, key)) {
                if (kv->len > *len)
                    return VC_ERR_TRUNCATE;
                memcpy(buf, kv->val, kv->len);
                *len = kv->len;
                return VC_SUCCESS;
            }
        return VC_ERR_BOOTSTRAP;
    }
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, b->st.nspace, (pmix_rank_t)rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || !val) {
        /* the caller says what was missing and why it matters */
        LOG_DEBUG("PMIx_Get(rank %d, %s) failed: %s", rank, key, PMIx_Error_string(rc));
        return VC_ERR_BOOTSTRAP;
    }
    int ret = VC_SUCCESS;
    if (val->type != PMIX_BYTE_OBJECT) {
        LOG_ERR("PMIx_Get(rank %d, %s): unexpected value type %d", rank, key, val->type);
        ret = VC_ERR_BOOTSTRAP;
    } else if (val->data.bo.size > *len) {
        ret = VC_ERR_TRUNCATE;
    } else {
        memcpy(buf, val->data.bo.bytes, val->data.bo.size);
        *len = val->data.bo.size;
    }
    PMIX_VALUE_RELEASE(val);
    return ret;
}

void boot_abort(boot_info_t *b, int code, const char *msg)
{
    if (boot_exch_armed(b))
        boot_exch_abort(b, code, msg);
    LOG_ERR("aborting the job: %s", msg);
    if (b->st.pmix_up)
        PMIx_Abort(code ? code : 1, msg, NULL, 0);
    /* PMIx_Abort asks the launcher to kill everyone; make sure we go too */
    _exit(code ? code : 1);
}

int boot_finalize(boot_info_t *b)
{
    if (boot_exch_armed(b))
        return boot_exch_finalize(b);
    int ret = VC_SUCCESS;
    if (b->st.pmix_up) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS)
            ret = VC_ERR_BOOTSTRAP;
    }
    boot_kv_free(&b->st.local);
    /* a fence given up on (a dead peer) may still be read by PMIx: leave
       it allocated and keep pointing at it */
    void *keep = b->st.fence_info;
    if (keep && b->st.fence_state != 0) {
        pmix_info_t *fi = keep;
        PMIX_INFO_FREE(fi, 1);
        keep = NULL;
    }
    memset(&b->st, 0, sizeof b->st);
    b->st.fence_info = keep;
    return ret;
}

void boot_info_free(boot_info_t *info)
{
    free(info->local_peers);
    free(info->node_of);
    info->local_peers = info->node_of = NULL;
}
