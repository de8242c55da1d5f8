/*
 * request.c -- requests come from a free list carved out of slabs that are
 * never returned to malloc while the library runs. A stale vc_request_t
 * therefore still points at readable memory whose magic is cleared, which
 * is how vc_wait tells a double-wait from a live request. The slabs are
 * also indexed, so the handles peers echo back (req_handle) are checked
 * against the slot's generation before anything is touched.
 */
#include <stdlib.h>
#include <string.h>
#include "request.h"

#define SLAB 256

struct req_slab { struct vc_request r[SLAB]; };

static int grow(req_pool_t *pool)
{
    if (pool->nslabs == pool->cap) {
        uint32_t ncap = pool->cap ? 2 * pool->cap : 8;
        struct req_slab **n = realloc(pool->slabs, ncap * sizeof *n);
        if (!n)
            return -1;
        pool->slabs = n;
        pool->cap = ncap;
    }
    struct req_slab *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    uint32_t base = pool->nslabs * SLAB;
    pool->slabs[pool->nslabs++] = s;
    for (int i = SLAB - 1; i >= 0; i--) {
        s->r[i].idx = base + (uint32_t)i;
        s->r[i].next_free = pool->free;
        pool->free = &s->r[i];
    }
    return 0;
}

struct vc_request *req_alloc(req_pool_t *pool, int kind)
{
    if (!pool->free && grow(pool))
        return NULL;
    struct vc_request *r = pool->free;
    pool->free = r->next_free;
    uint32_t idx = r->idx, gen = r->gen;
    memset(r, 0, sizeof *r);
    r->idx = idx;
    r->gen = gen;
    r->pool = pool;
    r->magic = REQ_MAGIC;
    r->kind = kind;
    return r;
}

void req_free(struct vc_request *r)
{
    req_pool_t *pool = r->pool;
    if (r->release)
        r->release(r);
    r->magic = 0;
    r->gen++;
    r->next_free = pool->free;
    pool->free = r;
}

int req_valid(const struct vc_request *r)
{
    return r && r->magic == REQ_MAGIC;
}

struct vc_request *req_from_handle(const req_pool_t *pool, uint64_t h, int kind)
{
    uint32_t idx = (uint32_t)h, gen = (uint32_t)(h >> 32);
    if (idx / SLAB >= pool->nslabs)
        return NULL;
    struct vc_request *r = &pool->slabs[idx / SLAB]->r[idx % SLAB];
    if (r->magic != REQ_MAGIC || r->gen != gen || r->kind != kind || r->done)
        return NULL;
    return r;
}

int req_check_array(int n, struct vc_request *const rs[])
{
    /* each live entry is marked the first time it is met, so a second
       entry for the same request shows; every mark is undone before
       returning */
    int rc = VC_SUCCESS, i;
    for (i = 0; i < n && rc == VC_SUCCESS; i++) {
        if (!rs[i])
            continue;
        if (req_valid(rs[i]) && !rs[i]->listed)
            rs[i]->listed = 1;
        else
            rc = VC_ERR_REQUEST;
    }
    while (i-- > 0)
        if (req_valid(rs[i]))
            rs[i]->listed = 0;
    return rc;
}

void req_pool_fini(req_pool_t *pool)
{
    for (uint32_t i = 0; i < pool->nslabs; i++)
        free(pool->slabs[i]);
    free(pool->slabs);
    memset(pool, 0, sizeof *pool);
}
