/*
 * hca_select.c -- pick the verbs HCA nearest to the cores a rank runs on.
 *
 * Why this shape: the choice must be identical in the library and in
 * vcoll_info, and must be testable without hardware, so everything here
 * works on a given hwloc topology (real or loaded from XML) and a given
 * cpuset, never on global state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>

#include "vcoll.h"
#include "topo/topo.h"

static hwloc_obj_t find_ofed_osdev(hwloc_topology_t topo, const char *name)
{
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_osdev(topo, o)) != NULL) {
        if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS &&
            o->name && strcmp(o->name, name) == 0)
            return o;
    }
    return NULL;
}

int topo_hca_distance(hwloc_topology_t topo, hwloc_const_bitmap_t cpuset,
                      const char *name, char *where, size_t wlen)
{
    char tmp[8];
    if (!where) { where = tmp; wlen = sizeof tmp; }
    where[0] = 0;

    hwloc_obj_t os = find_ofed_osdev(topo, name);
    if (!os) {
        /* SoftRoCE (rxe), siw, or I/O discovery disabled: no locality known,
           so the device is equally far from every rank. */
        snprintf(where, wlen, "not placed by hwloc");
        return TOPO_NEAR_REMOTE;
    }
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, os);
    if (!anc || anc == hwloc_get_root_obj(topo) || !anc->cpuset ||
        !anc->nodeset) {
        snprintf(where, wlen, "attached to the whole machine");
        return TOPO_NEAR_REMOTE;
    }

    /* A rank that is not bound (or whose cpuset is unknown) runs anywhere:
       only a device local to the whole machine counts as near. */
    hwloc_const_bitmap_t mine = cpuset && !hwloc_bitmap_iszero(cpuset)
        ? cpuset : hwloc_topology_get_topology_cpuset(topo);

    char nodes[64];
    hwloc_bitmap_list_snprintf(nodes, sizeof nodes, anc->nodeset);

    hwloc_bitmap_t numa_cs = hwloc_bitmap_alloc();
    int dist = TOPO_NEAR_REMOTE;
    if (numa_cs) {
        hwloc_cpuset_from_nodeset(topo, numa_cs, anc->nodeset);
        if (!hwloc_bitmap_iszero(numa_cs) && hwloc_bitmap_isincluded(mine, numa_cs))
            dist = TOPO_NEAR_NUMA;
        hwloc_bitmap_free(numa_cs);
    }
    hwloc_obj_t pkg = anc->type == HWLOC_OBJ_PACKAGE ? anc
        : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, anc);
    if (dist != TOPO_NEAR_NUMA && pkg && pkg->cpuset &&
        hwloc_bitmap_isincluded(mine, pkg->cpuset))
        dist = TOPO_NEAR_PACKAGE;

    if (pkg)
        snprintf(where, wlen, "NUMA node %s, package %u", nodes, pkg->os_index);
    else
        snprintf(where, wlen, "NUMA node %s", nodes);
    return dist;
}

static const char *dist_word(int d)
{
    switch (d) {
    case TOPO_NEAR_NUMA: return "same NUMA node";
    case TOPO_NEAR_PACKAGE: return "same package";
    default: return "remote or unplaced";
    }
}

/* Pick entry local_rank % count of the comma list in spec; parse dev[:port]. */
static int parse_override(const char *spec, int local_rank, char *dev,
                          size_t devlen, int *port, char *why, size_t wlen)
{
    int count = 1;
    for (const char *p = spec; *p; p++)
        if (*p == ',')
            count++;
    int want = (local_rank < 0 ? 0 : local_rank) % count;
    const char *s = spec;
    for (int i = 0; i < want; i++)
        s = strchr(s, ',') + 1;
    size_t len = strcspn(s, ",");
    if (len == 0 || len >= devlen) {
        snprintf(why, wlen, "VCOLL_HCA=\"%s\": entry %d is empty or too long",
                 spec, want);
        return VC_ERR_ARG;
    }
    memcpy(dev, s, len);
    dev[len] = 0;
    *port = 0;
    char *colon = strchr(dev, ':');
    if (colon) {
        *colon = 0;
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (colon == dev || *end || p < 1 || p > 255) {
            snprintf(why, wlen, "VCOLL_HCA=\"%s\": bad entry \"%.*s\" "
                     "(want dev[:port], port 1..255)", spec, (int)len, s);
            return VC_ERR_ARG;
        }
        *port = (int)p;
    }
    return VC_SUCCESS;
}

int topo_hca_select(hwloc_topology_t topo, hwloc_const_bitmap_t cpuset,
                    const char *const *names, int n, int local_rank,
                    const char *override, topo_hca_choice_t *out)
{
    if (!out)
        return VC_ERR_ARG;
    memset(out, 0, sizeof *out);
    out->dev = -1;
    if (n <= 0 || !names) {
        snprintf(out->why, sizeof out->why, "no usable verbs device");
        return VC_ERR_TRANSPORT;
    }
    if (local_rank < 0)
        local_rank = 0;

    if (override && *override) {
        char dev[128];
        int port, rc = parse_override(override, local_rank, dev, sizeof dev,
                                      &port, out->why, sizeof out->why);
        if (rc != VC_SUCCESS)
            return rc;
        for (int i = 0; i < n; i++) {
            if (strcmp(names[i], dev) == 0) {
                out->dev = i;
                out->port = port;
                out->distance = -1;
                snprintf(out->why, sizeof out->why,
                         "%s: set by VCOLL_HCA=%s (local rank %d)",
                         dev, override, local_rank);
                return VC_SUCCESS;
            }
        }
        int off = snprintf(out->why, sizeof out->why,
                           "VCOLL_HCA=%s names \"%s\", which is not a usable "
                           "device; usable:", override, dev);
        for (int i = 0; i < n && off > 0 && (size_t)off < sizeof out->why; i++)
            off += snprintf(out->why + off, sizeof out->why - off, " %s",
                            names[i]);
        return VC_ERR_ARG;
    }

    int *dist = malloc(sizeof(int) * (size_t)n);
    if (!dist) {
        snprintf(out->why, sizeof out->why, "out of memory");
        return VC_ERR_NOMEM;
    }
    int best = TOPO_NEAR_REMOTE + 1, ntie = 0;
    for (int i = 0; i < n; i++) {
        dist[i] = topo ? topo_hca_distance(topo, cpuset, names[i], NULL, 0)
                       : TOPO_NEAR_REMOTE;
        if (dist[i] < best) {
            best = dist[i];
            ntie = 0;
        }
        if (dist[i] == best)
            ntie++;
    }
    /* Equally near devices are shared out by local rank, so ranks on the
       same side of the machine do not all pile onto the first HCA. */
    int pick = local_rank % ntie, seen = 0;
    for (int i = 0; i < n; i++) {
        if (dist[i] != best)
            continue;
        if (seen++ == pick) {
            out->dev = i;
            break;
        }
    }
    free(dist);
    out->distance = best;

    char where[96] = "";
    if (topo)
        topo_hca_distance(topo, cpuset, names[out->dev], where, sizeof where);
    snprintf(out->why, sizeof out->why,
             "%s (%s): %s; %d equally near of %d usable, local rank %d -> #%d",
             names[out->dev], where[0] ? where : "no topology",
             dist_word(best), ntie, n, local_rank, pick);
    return VC_SUCCESS;
}
