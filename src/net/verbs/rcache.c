/*
 * rcache.c -- the registration cache's index, LRU and deferred release
 * (see rcache.h for the rules it keeps).
 *
 * Every entry is on exactly one list: `idle` (indexed, refs == 0; most
 * recently used first), `busy` (refs > 0, indexed or detached) or `dead`
 * (waiting for the library thread to deregister it). Only the library
 * thread allocates entries, registers, deregisters and frees; the
 * invalidating thread only moves entries between lists and out of the
 * index, so it needs nothing but the mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcoll.h"
#include "net/verbs/rcache.h"

struct net_rcache {
    net_rcache_ops_t ops;
    size_t max_bytes;
    int max_entries;
    uintptr_t page;
    pthread_mutex_t lock;
    net_rcache_entry_t **idx[NET_RCACHE_KINDS];   /* sorted by start */
    int n[NET_RCACHE_KINDS];
    int cap;                  /* slots per index */
    list_t idle, busy, dead;  /* of net_rcache_entry_t, by link */
    /* A registration being made outside the lock: an invalidation that
       overlaps it while it is made makes it unusable. */
    uintptr_t pend_start, pend_end;
    int pend_stale;
    net_rcache_stats_t st;
};

/* e leaves whichever list it is on for the front of l (idle: most
   recently used first) */
static void list_move(list_t *l, net_rcache_entry_t *e)
{
    list_unlink(&e->link);
    list_push_front(l, &e->link);
}

net_rcache_t *net_rcache_create(const net_rcache_ops_t *ops, size_t max_bytes,
                                int max_entries)
{
    if (!ops || !ops->reg || !ops->dereg || max_entries < 0)
        return NULL;
    net_rcache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->ops = *ops;
    c->max_bytes = max_bytes;
    c->max_entries = max_entries;
    long pg = sysconf(_SC_PAGESIZE);
    c->page = pg > 0 ? (uintptr_t)pg : 4096;
    pthread_mutex_init(&c->lock, NULL);
    list_init(&c->idle);
    list_init(&c->busy);
    list_init(&c->dead);
    /* one spare slot: an insert happens before the eviction that makes room */
    c->cap = max_entries + 1;
    for (int k = 0; k < NET_RCACHE_KINDS; k++)
        if (!(c->idx[k] = calloc((size_t)c->cap, sizeof *c->idx[k]))) {
            net_rcache_destroy(c);
            return NULL;
        }
    return c;
}

/* First index of kind k whose entry ends after addr (the ranges do not
   overlap, so ends are sorted like starts). */
static int first_ending_after(const net_rcache_t *c, int k, uintptr_t addr)
{
    int lo = 0, hi = c->n[k];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (c->idx[k][mid]->end > addr)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Indices [*lo, *hi) of kind k overlapping [s, e). */
static void overlap_run(const net_rcache_t *c, int k, uintptr_t s, uintptr_t e,
                        int *lo, int *hi)
{
    int i = first_ending_after(c, k, s), j = i;
    while (j < c->n[k] && c->idx[k][j]->start < e)
        j++;
    *lo = i;
    *hi = j;
}

/* Take idx[k][lo..hi) out of the index: idle ones die, busy ones live on
   detached until their last put. Lock held. */
static void unindex(net_rcache_t *c, int k, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        net_rcache_entry_t *e = c->idx[k][i];
        e->indexed = 0;
        c->st.bytes -= e->end - e->start;
        if (e->refs == 0)
            list_move(&c->dead, e);
    }
    memmove(&c->idx[k][lo], &c->idx[k][hi],
            (size_t)(c->n[k] - hi) * sizeof *c->idx[k]);
    c->n[k] -= hi - lo;
    c->st.entries -= hi - lo;
}

static void unindex_one(net_rcache_t *c, net_rcache_entry_t *e)
{
    int i = first_ending_after(c, e->kind, e->start);
    if (i < c->n[e->kind] && c->idx[e->kind][i] == e)
        unindex(c, e->kind, i, i + 1);
}

/* Evict least recently used idle entries while over a limit. Lock held. */
static void evict(net_rcache_t *c)
{
    while ((c->st.bytes > c->max_bytes || c->st.entries > c->max_entries) &&
           !list_empty(&c->idle)) {
        unindex_one(c, LIST_ENTRY(list_last(&c->idle), net_rcache_entry_t, link));
        c->st.evictions++;
    }
}

/* deregister and free every entry on l */
static void free_list(net_rcache_t *c, list_t *l)
{
    LIST_FOR_EACH_SAFE(n, nx, l) {
        net_rcache_entry_t *e = LIST_ENTRY(n, net_rcache_entry_t, link);
        list_unlink(n);
        c->ops.dereg(c->ops.arg, e->reg);
        free(e);
    }
}

/* Deregister and free what died; lock NOT held (dereg frees memory). */
static void reap(net_rcache_t *c)
{
    list_t dead;
    pthread_mutex_lock(&c->lock);
    if (list_empty(&c->dead)) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    /* take the whole list out, then work on it unlocked */
    list_take(&dead, &c->dead);
    pthread_mutex_unlock(&c->lock);
    free_list(c, &dead);
}

/* Register exactly [s, end) for e, outside the index (freed by its last
   put); e is consumed on failure. */
static int get_uncached(net_rcache_t *c, net_rcache_entry_t *e, uintptr_t s,
                        uintptr_t end, net_rcache_entry_t **out)
{
    e->start = s;
    e->end = end;
    e->reg = c->ops.reg(c->ops.arg, (void *)s, end - s, e->kind);
    if (!e->reg) {
        free(e);
        return VC_ERR_TRANSPORT;
    }
    pthread_mutex_lock(&c->lock);
    c->st.uncached++;
    list_push_front(&c->busy, &e->link);
    pthread_mutex_unlock(&c->lock);
    *out = e;
    return VC_SUCCESS;
}

/* Drop every idle entry (registration failed: pinned memory may be short). */
static void drop_idle(net_rcache_t *c)
{
    pthread_mutex_lock(&c->lock);
    while (!list_empty(&c->idle))
        unindex_one(c, LIST_ENTRY(list_first(&c->idle), net_rcache_entry_t, link));
    pthread_mutex_unlock(&c->lock);
    reap(c);
}

/* Nothing cached can be trusted any more: forget it all (as if all memory
   went back), and cache nothing again. */
static void turn_off(net_rcache_t *c)
{
    net_rcache_invalidate(c, 0, UINTPTR_MAX);
    pthread_mutex_lock(&c->lock);
    c->max_entries = 0;
    pthread_mutex_unlock(&c->lock);
}

int net_rcache_get(net_rcache_t *c, const void *buf, size_t len, int kind,
                   net_rcache_entry_t **out)
{
    if (!c || !out || !len || kind < 0 || kind >= NET_RCACHE_KINDS ||
        (uintptr_t)buf + len < (uintptr_t)buf || (uintptr_t)buf + len > UINTPTR_MAX - c->page)
        return VC_ERR_ARG;
    uintptr_t s = (uintptr_t)buf & ~(c->page - 1);
    uintptr_t end = ((uintptr_t)buf + len + c->page - 1) & ~(c->page - 1);
    *out = NULL;
    if (c->max_entries && c->ops.valid && !c->ops.valid(c->ops.arg))
        turn_off(c);
    reap(c);

    pthread_mutex_lock(&c->lock);
    int i = first_ending_after(c, kind, s);
    if (i < c->n[kind] && c->idx[kind][i]->start <= s && c->idx[kind][i]->end >= end) {
        net_rcache_entry_t *e = c->idx[kind][i];
        if (e->refs++ == 0)
            list_move(&c->busy, e);
        c->st.hits++;
        pthread_mutex_unlock(&c->lock);
        *out = e;
        return VC_SUCCESS;
    }
    c->st.misses++;
    pthread_mutex_unlock(&c->lock);

    net_rcache_entry_t *e = calloc(1, sizeof *e);
    if (!e)
        return VC_ERR_NOMEM;
    e->kind = kind;
    e->refs = 1;
    if (c->max_entries == 0)
        return get_uncached(c, e, s, end, out);
    for (int tries = 0; tries < 4; tries++) {
        /* the union with the overlapping entries: all of it is mapped (each
           part was registered and has not been invalidated since) */
        pthread_mutex_lock(&c->lock);
        int lo, hi;
        overlap_run(c, kind, s, end, &lo, &hi);
        e->start = lo < hi && c->idx[kind][lo]->start < s ? c->idx[kind][lo]->start : s;
        e->end = lo < hi && c->idx[kind][hi - 1]->end > end ? c->idx[kind][hi - 1]->end : end;
        c->pend_start = e->start;
        c->pend_end = e->end;
        c->pend_stale = 0;
        pthread_mutex_unlock(&c->lock);

        e->reg = c->ops.reg(c->ops.arg, (void *)e->start, e->end - e->start, kind);
        if (!e->reg && tries == 0) {
            drop_idle(c);
            continue;
        }
        pthread_mutex_lock(&c->lock);
        int stale = c->pend_stale;
        c->pend_start = c->pend_end = 0;
        if (!e->reg || stale) {
            pthread_mutex_unlock(&c->lock);
            if (e->reg)
                c->ops.dereg(c->ops.arg, e->reg);
            e->reg = NULL;
            if (!stale)
                break;          /* the union will not register: go alone */
            continue;           /* part of it went away meanwhile: again */
        }
        /* only invalidations can have changed the index meanwhile, and none
           touched [start, end): the run is the same entries */
        overlap_run(c, kind, e->start, e->end, &lo, &hi);
        unindex(c, kind, lo, hi);
        if (c->n[kind] == c->cap) {
            /* every slot busy: serve it, but it leaves with its last put */
            c->st.uncached++;
            list_push_front(&c->busy, &e->link);
        } else {
            memmove(&c->idx[kind][lo + 1], &c->idx[kind][lo],
                    (size_t)(c->n[kind] - lo) * sizeof *c->idx[kind]);
            c->idx[kind][lo] = e;
            c->n[kind]++;
            c->st.entries++;
            c->st.bytes += e->end - e->start;
            if (c->st.bytes > c->st.peak_bytes)
                c->st.peak_bytes = c->st.bytes;
            e->indexed = 1;
            list_push_front(&c->busy, &e->link);
            evict(c);
        }
        pthread_mutex_unlock(&c->lock);
        reap(c);
        *out = e;
        return VC_SUCCESS;
    }
    /* no cached registration possible: the request alone, uncached */
    return get_uncached(c, e, s, end, out);
}

void net_rcache_put(net_rcache_t *c, net_rcache_entry_t *e)
{
    if (!c || !e)
        return;
    pthread_mutex_lock(&c->lock);
    if (--e->refs == 0) {
        if (e->indexed) {
            list_move(&c->idle, e);
            evict(c);           /* limits passed while everything was busy */
        } else {
            list_move(&c->dead, e);
        }
    }
    pthread_mutex_unlock(&c->lock);
    reap(c);
}

void net_rcache_invalidate(net_rcache_t *c, uintptr_t start, uintptr_t end)
{
    if (!c || end <= start)
        return;
    pthread_mutex_lock(&c->lock);
    for (int k = 0; k < NET_RCACHE_KINDS; k++) {
        int lo, hi;
        overlap_run(c, k, start, end, &lo, &hi);
        if (lo < hi) {
            c->st.invalidations += (unsigned long)(hi - lo);
            unindex(c, k, lo, hi);
        }
    }
    if (c->pend_end > start && c->pend_start < end)
        c->pend_stale = 1;
    pthread_mutex_unlock(&c->lock);
}

void net_rcache_stats(net_rcache_t *c, net_rcache_stats_t *s)
{
    if (!c || !s)
        return;
    pthread_mutex_lock(&c->lock);
    *s = c->st;
    s->off = c->max_entries == 0;
    pthread_mutex_unlock(&c->lock);
}

void net_rcache_destroy(net_rcache_t *c)
{
    if (!c)
        return;
    free_list(c, &c->idle);
    free_list(c, &c->busy);
    free_list(c, &c->dead);
    for (int k = 0; k < NET_RCACHE_KINDS; k++)
        free(c->idx[k]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
