/*
 * request.c -- requests come from a free list carved out of slabs that are
 * never returned to malloc while the library runs. A stale vc_request_t
 * therefore still points at readable memory whose magic is cleared, which
 * is how vc_wait tells a double-wait from a live request.
 */
#include <stdlib.h>
#include <string.h>
#include "request.h"

#define SLAB 256

typedef struct slab { struct slab *next; struct vc_request r[SLAB]; } slab_t;
static struct { slab_t *slabs; struct vc_request *free; } pool;

struct vc_request *req_alloc(int kind)
{
    if (!pool.free) {
        slab_t *s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        s->next = pool.slabs;
        pool.slabs = s;
        for (int i = 0; i < SLAB; i++) {
            s->r[i].next = pool.free;
            pool.free = &s->r[i];
        }
    }
    struct vc_request *r = pool.free;
    pool.free = r->next;
    memset(r, 0, sizeof *r);
    r->magic = REQ_MAGIC;
    r->kind = kind;
    return r;
}

void req_free(struct vc_request *r)
{
    if (r->release)
        r->release(r);
    r->magic = 0;
    r->next = pool.free;
    pool.free = r;
}

int req_valid(const struct vc_request *r)
{
    return r && r->magic == REQ_MAGIC;
}

void req_pool_fini(void)
{
    while (pool.slabs) {
        slab_t *n = pool.slabs->next;
        free(pool.slabs);
        pool.slabs = n;
    }
    pool.free = NULL;
}
