/*
 * topo_load.c -- build the hwloc topology the HCA selector needs.
 */
#include <hwloc.h>

#include "vcoll.h"
#include "topo/topo.h"

static int finish_load(hwloc_topology_t t, hwloc_topology_t *out)
{
    /* OS devices (mlx5_0, ...) live under PCI objects; keep those, drop the
       rest of the I/O tree that the selector never looks at. */
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return VC_ERR_INTERNAL;
    }
    *out = t;
    return VC_SUCCESS;
}

int topo_load(hwloc_topology_t *topo)
{
    hwloc_topology_t t;
    if (!topo || hwloc_topology_init(&t) != 0)
        return VC_ERR_INTERNAL;
    return finish_load(t, topo);
}

int topo_load_xml(hwloc_topology_t *topo, const char *path)
{
    hwloc_topology_t t;
    if (!topo || !path || hwloc_topology_init(&t) != 0)
        return VC_ERR_INTERNAL;
    if (hwloc_topology_set_xml(t, path) != 0) {
        hwloc_topology_destroy(t);
        return VC_ERR_ARG;
    }
    return finish_load(t, topo);
}

hwloc_bitmap_t topo_my_cpuset(hwloc_topology_t topo)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return NULL;
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 ||
        hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
    return set;
}
