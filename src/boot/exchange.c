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
#include "../core/clock.h"
#include "../core/log.h"

#define HOST_LEN 256

typedef struct {
    char host[HOST_LEN];
    int64_t pid;
    double t;
} host_rec_t;

void boot_exch_arm(boot_info_t *b, int rank, int size, vc_allgather_fn *fn, void *arg)
{
    boot_exch_t *x = &b->st.x;
    x->armed = 1;
    x->rank = rank;
    x->size = size;
    x->fn = fn;
    x->arg = arg;
}

int boot_exch_armed(const boot_info_t *b)
{
    return b->st.x.armed;
}

static int gather(const boot_exch_t *x, const void *mine, void *all, size_t len)
{
    if (x->fn(mine, all, len, x->arg)) {
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
    boot_exch_t x = info->st.x;     /* armed before vc_init: kept */
    memset(info, 0, sizeof *info);
    info->st.x = x;
    info->rank = x.rank;
    info->size = x.size;
    info->launcher = "exchange";
    host_rec_t me, *all = calloc((size_t)x.size, sizeof *all);
    if (!all)
        return VC_ERR_NOMEM;
    memset(&me, 0, sizeof me);
    if (gethostname(me.host, sizeof me.host - 1))
        snprintf(me.host, sizeof me.host, "unknown");
    me.pid = (int64_t)getpid();
    me.t = core_wtime();
    int rc = gather(&x, &me, all, sizeof me);
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

int boot_exch_put(boot_info_t *b, const char *key, const void *data, size_t len)
{
    return boot_kv_push(&b->st.x.mine, key, data, len);
}

/* blob: for each key, u32 key length, key, u64 value length, value; ends
   with a zero key length */
static size_t blob_size(const boot_exch_t *x)
{
    size_t n = 4;
    for (boot_kv_t *kv = x->mine; kv; kv = kv->next)
        n += 4 + strlen(kv->key) + 8 + kv->len;
    return n;
}

static void blob_write(const boot_exch_t *x, unsigned char *p)
{
    for (boot_kv_t *kv = x->mine; kv; kv = kv->next) {
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

int boot_exch_fence(boot_info_t *b, int collect_data)
{
    boot_exch_t *x = &b->st.x;
    if (!collect_data) {
        unsigned char one = 0, *sink = malloc((size_t)x->size);
        int rc = sink ? gather(x, &one, sink, 1) : VC_ERR_NOMEM;
        free(sink);
        return rc;
    }
    uint64_t mine = blob_size(x), *sizes = malloc((size_t)x->size * sizeof *sizes);
    if (!sizes)
        return VC_ERR_NOMEM;
    int rc = gather(x, &mine, sizes, sizeof mine);
    size_t stride = 0;
    for (int r = 0; !rc && r < x->size; r++)
        if (sizes[r] > stride)
            stride = sizes[r];
    free(sizes);
    if (rc)
        return rc;
    unsigned char *blob = calloc(1, stride), *all = malloc((size_t)x->size * stride);
    if (!blob || !all) {
        free(blob);
        free(all);
        return VC_ERR_NOMEM;
    }
    blob_write(x, blob);
    rc = gather(x, blob, all, stride);
    free(blob);
    if (rc) {
        free(all);
        return rc;
    }
    free(x->all);
    x->all = all;
    x->stride = stride;
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

int boot_exch_get(boot_info_t *b, int rank, const char *key, void *buf, size_t *len)
{
    const boot_exch_t *x = &b->st.x;
    if (rank < 0 || rank >= x->size)
        return VC_ERR_RANK;
    if (rank == x->rank) {
        for (boot_kv_t *kv = x->mine; kv; kv = kv->next)
            if (!strcmp(kv->key, key))
                return copy_out(kv->val, kv->len, buf, len);
        return VC_ERR_BOOTSTRAP;
    }
    if (!x->all) {
        LOG_ERR("bootstrap: get of %s from rank %d before any fence", key, rank);
        return VC_ERR_BOOTSTRAP;
    }
    /* the blob came from another process: bound every step by the stride */
    const unsigned char *p = x->all + (size_t)rank * x->stride, *end = p + x->stride;
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

void boot_exch_abort(boot_info_t *b, int code, const char *msg)
{
    (void)b;
    /* no launcher to ask: leaving is enough, the caller's job runtime sees
       a process die and ends the job */
    LOG_ERR("aborting the job: %s", msg);
    _exit(code ? code : 1);
}

int boot_exch_finalize(boot_info_t *b)
{
    boot_exch_t *x = &b->st.x;
    boot_kv_free(&x->mine);
    free(x->all);
    memset(x, 0, sizeof *x);
    return VC_SUCCESS;
}
