/*
 * rc_reg.c -- registrations of rendezvous buffers (the sender's, read by
 * the peer; the receiver's, written by READ responses) through the
 * registration cache, so buffers used again are not registered again.
 *
 * Which mode, in order of preference:
 *  - ODP, when the device pages RC READ buffers on demand: the HCA follows
 *    the page tables, so a cached registration is always current and no
 *    hooks are needed;
 *  - pinned registrations, invalidated by the memory hooks (memhook.c)
 *    when their memory leaves the address space;
 *  - no cache (VCOLL_RCACHE=off, or hooks impossible here): register per
 *    transfer, deregister when it is done, as before the cache existed.
 * A cached registration readable by the peer stays readable after the
 * transfer, as with every MPI's registration cache: the peer could read
 * that memory until it is evicted or unmapped.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "net/verbs/memhook.h"
#include "net/verbs/rc.h"

/* Bounds the index (binary search, memmove on insert) and the MRs a
   process holds; VCOLL_RCACHE_MAX bounds the pinned bytes. */
#define RC_RCACHE_ENTRIES 1024

static void *reg_mr(void *arg, void *addr, size_t len, int kind)
{
    rc_net_t *r = arg;
    /* least privilege: a send buffer is only read by peers, so read-only
       (e.g. const) pages register too; a READ sink is only written locally */
    int access = kind == NET_RCACHE_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_LOCAL_WRITE;
    if (r->odp)
        access |= IBV_ACCESS_ON_DEMAND;
    struct ibv_mr *mr = ibv_reg_mr(r->pd, addr, len, access);
    if (!mr)
        LOG_DEBUG("rc: rank %d: registering %zu bytes at %p (%s) failed: %s", r->me,
                  len, addr, kind == NET_RCACHE_READ ? "remote read" : "local write",
                  strerror(errno));
    return mr;
}

static void dereg_mr(void *arg, void *mr)
{
    rc_net_t *r = arg;
    if (ibv_dereg_mr(mr))
        LOG_ERR("rc: rank %d: ibv_dereg_mr failed: %s", r->me, strerror(errno));
}

static void on_release(void *arg, uintptr_t start, uintptr_t end)
{
    net_rcache_invalidate(arg, start, end);
}

/* Asked by the cache before each lookup: once the hooks stop being
   trustworthy, the cache empties itself and stays off. */
static int hooks_valid(void *arg)
{
    rc_net_t *r = arg;
    if (net_memhook_intact())
        return 1;
    char why[240];
    net_memhook_state(why, sizeof why);
    LOG_WARN("rc: rank %d: registration cache turned off and emptied: %s", r->me, why);
    return 0;
}

int rc_reg_open(rc_net_t *r)
{
    const vc_config_t *cfg = r->env->cfg;
    int entries = RC_RCACHE_ENTRIES;
    char why[240] = "";
    const char *mode;
    if (!cfg->rcache) {
        entries = 0;
        mode = "off (VCOLL_RCACHE=off)";
    } else if (r->port.odp) {
        r->odp = 1;
        mode = "on, on-demand paging (no memory hooks needed)";
    } else if (net_memhook_install(why, sizeof why) != VC_SUCCESS) {
        entries = 0;
        mode = "off, no trustworthy memory hooks";
    } else {
        r->hooked = 1;
        mode = "on, pinned, invalidated by memory hooks";
    }
    if (r->hooked && cfg->fault_rcache_stale) {
        r->hooked = 0;      /* hooks in, but nobody tells the cache */
        mode = "on, pinned, NOT invalidated (VCOLL_FAULT_RCACHE_STALE: stale on purpose)";
    }
    net_rcache_ops_t ops = { .reg = reg_mr, .dereg = dereg_mr, .arg = r,
                             .valid = r->hooked ? hooks_valid : NULL };
    if (!(r->rcache = net_rcache_create(&ops, cfg->rcache_max, entries)))
        return VC_ERR_NOMEM;
    if (r->hooked)
        net_memhook_route(on_release, r->rcache);
    LOG_INFO("rc: rank %d: registration cache %s%s%s (at most %d entries, %zu bytes)",
             r->me, mode, why[0] ? ": " : "", why, entries, cfg->rcache_max);
    return VC_SUCCESS;
}

void rc_reg_close(rc_net_t *r)
{
    if (!r->rcache)
        return;
    if (r->hooked)
        net_memhook_route(NULL, NULL);
    net_rcache_stats_t s;
    net_rcache_stats(r->rcache, &s);
    LOG_DEBUG("rc: rank %d: registration cache: %lu hits, %lu misses, %lu evictions, "
              "%lu invalidations, %lu uncached; %d entries / %zu bytes left, peak %zu bytes",
              r->me, s.hits, s.misses, s.evictions, s.invalidations, s.uncached,
              s.entries, s.bytes, s.peak_bytes);
    net_rcache_destroy(r->rcache);
    r->rcache = NULL;
}

int rc_reg_get(rc_net_t *r, const void *buf, size_t len, int kind,
               struct net_rcache_entry **out)
{
    int rc = net_rcache_get(r->rcache, buf, len, kind, out);
    if (rc == VC_ERR_TRANSPORT)
        LOG_ERR("rc: rank %d: registering %zu-byte %s buffer %p failed: %s (ulimit -l?)",
                r->me, len, kind == NET_RCACHE_READ ? "send" : "receive", buf,
                strerror(errno));
    return rc;
}

void rc_reg_put(rc_net_t *r, struct net_rcache_entry *e)
{
    net_rcache_put(r->rcache, e);
}
