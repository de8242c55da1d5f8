/*
 * rcache.h -- memory registration cache: the index of registrations that
 * outlive the transfer they were made for, so a buffer sent or received
 * again is not registered again.
 *
 * The structure knows nothing of verbs: the transport passes reg/dereg
 * functions (rc_reg.c), the unit test passes its own and checks the cache
 * against a reference model.
 *
 * Never stale: net_rcache_invalidate() drops every registration that
 * overlaps a range whose memory went back to the system (memhook.c calls
 * it from inside munmap & co., in any thread). Dropped entries are no
 * longer found; their deregistration is deferred to the library's own next
 * call, because the invalidating thread may be inside free() holding
 * malloc's locks, where deregistering (which frees memory) would deadlock.
 *
 * Shape: per kind, a sorted array of non-overlapping page-aligned ranges
 * (binary search); a miss that overlaps cached ranges registers their union
 * and replaces them, so neighbours sharing a page do not evict each other.
 * Idle entries sit on an LRU list, evicted past max_bytes / max_entries.
 * Entries in use (refs > 0) are never deregistered: invalidation or
 * eviction only detaches them from the index and the last put frees them.
 *
 * Locking: one mutex guards everything; nothing that allocates, frees or
 * calls the reg/dereg functions runs while it is held. get/put/destroy are
 * called by one thread at a time (the library's lock); invalidate may run
 * concurrently from any thread.
 */
#ifndef VC_NET_VERBS_RCACHE_H
#define VC_NET_VERBS_RCACHE_H

#include <stddef.h>
#include <stdint.h>
#include "core/list.h"

/* Registration kinds: a kind's registrations only serve requests of that
   kind (their access rights differ). */
enum { NET_RCACHE_READ = 0,      /* peers RDMA-read it (send buffers) */
       NET_RCACHE_WRITE = 1,     /* the HCA writes it locally (READ sinks) */
       NET_RCACHE_KINDS = 2 };

typedef struct net_rcache_ops {
    /* register [addr, addr + len) (page-aligned) for kind; NULL on failure */
    void *(*reg)(void *arg, void *addr, size_t len, int kind);
    void (*dereg)(void *arg, void *reg);
    /* optional: is what keeps the cache honest still working (memhook.h)?
       Asked before every lookup; the first 0 empties the cache and turns
       it off for good (every later get registers afresh). */
    int (*valid)(void *arg);
    void *arg;
} net_rcache_ops_t;

typedef struct net_rcache_entry {
    uintptr_t start, end;     /* registered range, page-aligned */
    void *reg;                /* what ops.reg returned (a struct ibv_mr *) */
    int kind;
    int refs;                 /* in-flight users */
    int indexed;              /* findable by get; 0 = detached */
    list_node_t link;         /* the list it is on (see .c) */
} net_rcache_entry_t;

typedef struct net_rcache_stats {
    unsigned long hits, misses, evictions, invalidations;
    unsigned long uncached;   /* registrations made outside the cache */
    int entries;              /* cached now */
    int off;                  /* not caching (max_entries 0, or turned off) */
    size_t bytes, peak_bytes; /* registered by cached entries */
} net_rcache_stats_t;

typedef struct net_rcache net_rcache_t;

/* max_entries 0 turns caching off: every get registers, every last put
 * deregisters. NULL when out of memory. */
net_rcache_t *net_rcache_create(const net_rcache_ops_t *ops, size_t max_bytes,
                                int max_entries);
/* A registration covering [buf, buf + len), len > 0, with one reference
 * taken. VC_SUCCESS, VC_ERR_ARG, VC_ERR_NOMEM or VC_ERR_TRANSPORT (ops.reg
 * failed even after the idle entries were dropped). */
int net_rcache_get(net_rcache_t *c, const void *buf, size_t len, int kind,
                   net_rcache_entry_t **out);
void net_rcache_put(net_rcache_t *c, net_rcache_entry_t *e);
/* Memory in [start, end) is gone or replaced: no registration overlapping
 * it may be found again. Safe from any thread, inside malloc/free. */
void net_rcache_invalidate(net_rcache_t *c, uintptr_t start, uintptr_t end);
void net_rcache_stats(net_rcache_t *c, net_rcache_stats_t *s);
/* Deregisters everything, also entries still referenced (the transport is
 * closing; nobody may put them afterwards). */
void net_rcache_destroy(net_rcache_t *c);

#endif
