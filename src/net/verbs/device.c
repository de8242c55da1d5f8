/*
 * device.c -- enumerate verbs devices and ports, and pick the GID to use.
 *
 * Why a scan of every port rather than "first device": when nothing is
 * usable the user needs to see every device and why it was rejected
 * (port DOWN, no GID, ...), otherwise the failure is a riddle.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/log.h"
#include "net/verbs/device.h"

const char *net_vdev_gid_type_str(int type)
{
    switch (type) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
    default: return "?";
    }
}

const char *net_vdev_link_layer_str(int ll)
{
    switch (ll) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    default: return "unspecified";
    }
}

int net_vdev_mtu_bytes(enum ibv_mtu m)
{
    return (m >= IBV_MTU_256 && m <= IBV_MTU_4096) ? 128 << m : 0;
}

void net_vdev_gid_str(const union ibv_gid *g, char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len) && len)
        buf[0] = 0;
}

static int gid_is_zero(const union ibv_gid *g)
{
    for (int i = 0; i < 16; i++)
        if (g->raw[i])
            return 0;
    return 1;
}

static int gid_is_v4mapped(const union ibv_gid *g)
{
    for (int i = 0; i < 10; i++)
        if (g->raw[i])
            return 0;
    return g->raw[10] == 0xff && g->raw[11] == 0xff;
}

/* Higher is better: RoCE v2 with an IPv4 address routes across subnets and
   is what RoCE fabrics are configured for; link-local v2 next; v1 last. */
static int gid_score(const struct ibv_gid_entry *e)
{
    switch (e->gid_type) {
    case IBV_GID_TYPE_ROCE_V2: return gid_is_v4mapped(&e->gid) ? 4 : 3;
    case IBV_GID_TYPE_ROCE_V1: return 2;
    default: return 1;
    }
}

int net_vdev_choose_gid(struct ibv_context *ctx, int port,
                        const struct ibv_port_attr *pa, int gid_override,
                        int *idx, union ibv_gid *gid, int *type,
                        char *why, size_t wlen)
{
    struct ibv_gid_entry e;
    *idx = -1;
    *type = IBV_GID_TYPE_IB;
    memset(gid, 0, sizeof *gid);

    if (gid_override >= 0) {
        if (gid_override >= pa->gid_tbl_len ||
            ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)gid_override, &e, 0) != 0 ||
            gid_is_zero(&e.gid)) {
            snprintf(why, wlen, "VCOLL_GID_INDEX=%d: no such GID (table has %d entries)",
                     gid_override, pa->gid_tbl_len);
            return VC_ERR_TRANSPORT;
        }
        *idx = gid_override;
        *gid = e.gid;
        *type = (int)e.gid_type;
        return VC_SUCCESS;
    }
    if (pa->link_layer != IBV_LINK_LAYER_ETHERNET) {
        /* InfiniBand routes by LID inside a subnet: no GRH, no GID needed */
        if (pa->gid_tbl_len > 0 && ibv_query_gid_ex(ctx, (uint32_t)port, 0, &e, 0) == 0)
            *gid = e.gid;   /* for display only */
        return VC_SUCCESS;
    }
    int best = 0;
    for (int i = 0; i < pa->gid_tbl_len; i++) {
        /* empty slots fail with ENODATA; that is normal, keep looking */
        if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0) != 0 ||
            gid_is_zero(&e.gid))
            continue;
        int s = gid_score(&e);
        if (s > best) {
            best = s;
            *idx = i;
            *gid = e.gid;
            *type = (int)e.gid_type;
        }
    }
    if (*idx < 0) {
        snprintf(why, wlen, "RoCE port without any GID (no IP address on "
                 "its netdev?)");
        return VC_ERR_TRANSPORT;
    }
    return VC_SUCCESS;
}

int net_vdev_odp_read(struct ibv_context *ctx)
{
    struct ibv_device_attr_ex ax;
    memset(&ax, 0, sizeof ax);
    if (!ctx || ibv_query_device_ex(ctx, NULL, &ax))
        return 0;
    return (ax.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
           (ax.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_READ);
}

static void scan_device(struct ibv_device *d, int gid_override,
                        net_vport_t **ports, int *n, int *cap)
{
    const char *name = ibv_get_device_name(d);
    struct ibv_context *ctx = ibv_open_device(d);
    struct ibv_device_attr da;
    int nport = 1;

    if (ctx && ibv_query_device(ctx, &da) == 0)
        nport = da.phys_port_cnt;
    int odp = net_vdev_odp_read(ctx);
    for (int p = 1; p <= nport; p++) {
        if (*n == *cap) {
            int nc = *cap ? 2 * *cap : 8;
            net_vport_t *np = realloc(*ports, sizeof *np * (size_t)nc);
            if (!np)
                break;
            *ports = np;
            *cap = nc;
        }
        net_vport_t *v = &(*ports)[(*n)++];
        memset(v, 0, sizeof *v);
        snprintf(v->dev, sizeof v->dev, "%s", name ? name : "?");
        v->port = p;
        v->gid_index = -1;
        v->odp = odp;
        if (!ctx) {
            snprintf(v->why, sizeof v->why, "ibv_open_device failed: %s",
                     strerror(errno));
            break;
        }
        struct ibv_port_attr pa;
        if (ibv_query_port(ctx, (uint8_t)p, &pa) != 0) {
            snprintf(v->why, sizeof v->why, "ibv_query_port failed: %s",
                     strerror(errno));
            continue;
        }
        v->state = pa.state;
        v->link_layer = pa.link_layer;
        v->lid = pa.lid;
        v->active_mtu = pa.active_mtu;
        v->max_msg_sz = pa.max_msg_sz;
        v->gid_tbl_len = pa.gid_tbl_len;
        int rc = net_vdev_choose_gid(ctx, p, &pa, gid_override, &v->gid_index,
                                     &v->gid, &v->gid_type, v->why,
                                     sizeof v->why);
        if (pa.state != IBV_PORT_ACTIVE) {
            snprintf(v->why, sizeof v->why, "port state %s, not ACTIVE",
                     ibv_port_state_str(pa.state));
            LOG_DEBUG("verbs: skipping %s:%d: %s", v->dev, p, v->why);
            continue;
        }
        if (rc != VC_SUCCESS) {
            LOG_DEBUG("verbs: skipping %s:%d: %s", v->dev, p, v->why);
            continue;
        }
        if (pa.link_layer != IBV_LINK_LAYER_ETHERNET && pa.lid == 0 &&
            v->gid_index < 0) {
            snprintf(v->why, sizeof v->why, "InfiniBand port has no LID "
                     "(subnet manager not running?)");
            continue;
        }
        v->usable = 1;
    }
    if (ctx)
        ibv_close_device(ctx);
}

int net_vdev_scan(int gid_override, net_vport_t **ports, int *nports)
{
    int ndev = 0, n = 0, cap = 0;
    *ports = NULL;
    *nports = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    if (!list)
        return VC_SUCCESS;      /* no RDMA support at all: zero ports */
    for (int i = 0; i < ndev; i++)
        scan_device(list[i], gid_override, ports, &n, &cap);
    ibv_free_device_list(list);
    *nports = n;
    return VC_SUCCESS;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int net_vdev_usable_names(const net_vport_t *ports, int nports,
                          const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < nports && n < max; i++) {
        if (!ports[i].usable)
            continue;
        int dup = 0;
        for (int j = 0; j < n; j++)
            if (strcmp(names[j], ports[i].dev) == 0)
                dup = 1;
        if (!dup)
            names[n++] = ports[i].dev;
    }
    /* same order on every rank of a node, whatever the kernel's order */
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

void net_vdev_reject_report(const net_vport_t *ports, int nports,
                            char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    if (nports == 0) {
        snprintf(buf, len, "no RDMA devices found (ibv_get_device_list is "
                 "empty: no HCA, or ib_uverbs/rdma_rxe not loaded)");
        return;
    }
    size_t off = 0;
    for (int i = 0; i < nports && off < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s:%d: %s",
                         i ? "; " : "", ports[i].dev, ports[i].port,
                         ports[i].usable ? "usable" : ports[i].why);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}
