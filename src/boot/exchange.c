/*
 * exchange.c -- bootstrap through an allgather the caller supplies
 * (vc_bootstrap_exchange). Used where a parallel job already exists but no
 * PMIx server does, e.g. an MPI library started by MPICH's hydra.
 *
 * Node layout comes from host names gathered once at boot_exch_init; the
 * key/value store is mine locally until a collecting fence, which gathers
 * every rank's serialized puts (sizes first, then blobs padded to the
 * largest) and keeps them for boot_exch_get.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vcoll.h"
#include "boot.h"
#include "../core/ctx.h"
#include "../core/log.h"

#define HOST_LEN 256

/* Armed before vc_init builds the context and read by the boot_* entry
 * points, which (like PMIx's) are process-global: so it lives here. */
static struct {
    int armed, rank, size;
    vc_allgather_fn *fn;
    void *arg;
    boot_kv_t *mine;
    unsigned char *all;   /* size blobs of stride bytes, after a fence */
    size_t stride;
} X;

typedef struct {
    char host[HOST_LEN];
    int64_t pid;
    double t;
} host_rec_t;

int vc_bootstrap_exchange(int rank, int size, vc_allgather_fn *allgather, void *ctx)
{
    VC_API_ENTER();
    if (vc_ctx.initialized)
        return VC_ERR_ARG;          /* it would apply to no vc_init */
    if (!allgather || size < 1 || rank < 0 || rank >= size)
        return VC_ERR_ARG;
    X.armed = 1;
    X.rank = rank;
    X.size = size;
    X.fn = allgather;
    X.arg = ctx;
    return VC_SUCCESS;
}

int boot_exch_armed(void)
{
    return X.armed;
}

static int gather(const void *mine, void *all, size_t len)
{
    if (X.fn(mine, all, len, X.arg)) {
        LOG_ERR("bootstrap: the caller's allgather of %zu bytes failed", len);
        return VC_ERR_BOOTSTRAP;
    }
    return VC_SUCCESS;
}

/* Nodes numbered in order of their lowest rank, so every rank agrees. */
static int layout(boot_info_t *info, const host_rec_t *h)
{
    int n = info->size;
    info->node_of = malloc((size_t)n * sizeof(int));
    info->local_peers = malloc((size_t)n * sizeof(int));
    if (!info->node_of || !info->local_peers)
        return VC_ERR_NOMEM;
    int nnodes = 0;
    for (int r = 0; r < n; r++) {
        int q = 0;
        while (q < r && strcmp(h[q].host, h[r].host))
            q++;
        info->node_of[r] = q < r ? info->node_of[q] : nnodes++;
    }
    info->nnodes = nnodes;
    info->node_id = info->node_of[info->rank];
    info->local_size = 0;
    for (int r = 0; r < n; r++)
        if (info->node_of[r] == info->node_id) {
            if (r == info->rank)
                info->local_rank = info->local_size;
            info->local_peers[info->local_size++] = r;
        }
    return VC_SUCCESS;
}

int boot_exch_init(boot_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->rank = X.rank;
    info->size = X.size;
    info->launcher = "exchange";
    host_rec_t me, *all = calloc((size_t)X.size, sizeof *all);
    if (!all)
        return VC_ERR_NOMEM;
    memset(&me, 0, sizeof me);
    if (gethostname(me.host, sizeof me.host - 1))
        snprintf(me.host, sizeof me.host, "unknown");
    me.pid = (int64_t)getpid();
    me.t = vc_wtime();
    int rc = gather(&me, all, sizeof me);
    if (!rc)
        rc = layout(info, all);
    /* unique per job: rank 0's host, pid and start time (shm segment names
       are derived from it, so two jobs on one node must differ) */
    if (!rc)
        snprintf(info->jobid, sizeof info->jobid, "x-%.64s-%lld-%.0f", all[0].host,
                 (long long)all[0].pid, all[0].t * 1e6);
    free(all);
    return rc;
}

int boot_exch_put(const char *key, const void *data, size_t len)
{
    return boot_kv_push(&X.mine, key, data, len);
}

/* blob: for each key, u32 key length, key, u64 value length, value; ends
   with a zero key length */
static size_t blob_size(void)
{
    size_t n = 4;
    for (boot_kv_t *kv = X.mine; kv; kv = kv->next)
        n += 4 + strlen(kv->key) + 8 + kv->len;
    return n;
}

static void blob_write(unsigned char *p)
{
    for (boot_kv_t *kv = X.mine; kv; kv = kv->next) {
        uint32_t kl = (uint32_t)strlen(kv->key);
        uint64_t vl = kv->len;
        memcpy(p, &kl, 4);
        memcpy(p + 4, kv->key, kl);
        memcpy(p + 4 + kl, &vl, 8);
        memcpy(p + 12 + kl, kv->val, kv->len);
        p += 12 + kl + kv->len;
    }
    memset(p, 0, 4);
}

int boot_exch_fence(int collect_data)
{
    if (!collect_data) {
        unsigned char b = 0, *sink = malloc((size_t)X.size);
        int rc = sink ? gather(&b, sink, 1) : VC_ERR_NOMEM;
        free(sink);
        return rc;
    }
    uint64_t mine = blob_size(), *sizes = malloc((size_t)X.size * sizeof *sizes);
    if (!sizes)
        return VC_ERR_NOMEM;
    int rc = gather(&mine, sizes, sizeof mine);
    size_t stride = 0;
    for (int r = 0; !rc && r < X.size; r++)
        if (sizes[r] > stride)
            stride = sizes[r];
    free(sizes);
    if (rc)
        return rc;
    unsigned char *blob = calloc(1, stride), *all = malloc((size_t)X.size * stride);
    if (!blob || !all) {
        free(blob);
        free(all);
        return VC_ERR_NOMEM;
    }
    blob_write(blob);
    rc = gather(blob, all, stride);
    free(blob);
    if (rc) {
        free(all);
        return rc;
    }
    free(X.all);
    X.all = all;
    X.stride = stride;
    return VC_SUCCESS;
}

static int copy_out(const void *val, size_t vl, void *buf, size_t *len)
{
    if (vl > *len)
        return VC_ERR_TRUNCATE;
    memcpy(buf, val, vl);
    *len = vl;
    return VC_SUCCESS;
}

int boot_exch_get(int rank, const char *key, void *buf, size_t *len)
{
    if (rank < 0 || rank >= X.size)
        return VC_ERR_RANK;
    if (rank == X.rank) {
        for (boot_kv_t *kv = X.mine; kv; kv = kv->next)
            if (!strcmp(kv->key, key))
                return copy_out(kv->val, kv->len, buf, len);
        return VC_ERR_BOOTSTRAP;
    }
    if (!X.all) {
        LOG_ERR("bootstrap: get of %s from rank %d before any fence", key, rank);
        return VC_ERR_BOOTSTRAP;
    }
    /* the blob came from another process: bound every step by the stride */
    const unsigned char *p = X.all + (size_t)rank * X.stride, *end = p + X.stride;
    size_t want = strlen(key);
    for (;;) {
        uint32_t kl;
        uint64_t vl;
        if (end - p < 4)
            break;
        memcpy(&kl, p, 4);
        if (kl == 0 || (size_t)(end - p) < 12 + (size_t)kl)
            break;
        memcpy(&vl, p + 4 + kl, 8);
        if (vl > (uint64_t)(end - p) - 12 - kl)
            break;
        if (kl == want && !memcmp(p + 4, key, kl))
            return copy_out(p + 12 + kl, (size_t)vl, buf, len);
        p += 12 + kl + vl;
    }
    LOG_ERR("bootstrap: rank %d published no %s", rank, key);
    return VC_ERR_BOOTSTRAP;
}

void boot_exch_abort(int code, const char *msg)
{
    /* no launcher to ask: leaving is enough, the caller's job runtime sees
       a process die and ends the job */
    LOG_ERR("aborting the job: %s", msg);
    _exit(code ? code : 1);
}

int boot_exch_finalize(void)
{
    boot_kv_free(&X.mine);
    free(X.all);
    memset(&X, 0, sizeof X);
    return VC_SUCCESS;
}
