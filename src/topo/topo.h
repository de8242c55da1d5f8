/*
 * topo.h -- hwloc-based locality: which verbs HCA a rank should use.
 *
 * The selection is a pure function of (topology, the rank's cpuset, the
 * usable device names, local rank, VCOLL_HCA) so it can be unit tested with
 * synthetic XML topologies and reused by vcoll_info to explain a choice.
 */
#ifndef VC_TOPO_H
#define VC_TOPO_H

#include <stddef.h>
#include <hwloc.h>

/* Distance classes, smaller is nearer. */
enum {
    TOPO_NEAR_NUMA = 0,     /* HCA sits on the NUMA node(s) the rank runs on */
    TOPO_NEAR_PACKAGE = 1,  /* same package (socket), other NUMA node */
    TOPO_NEAR_REMOTE = 2,   /* placed by hwloc, but on another package; also
                               devices hwloc cannot place (e.g. rxe), which
                               are therefore equidistant from every rank */
};

typedef struct topo_hca_choice {
    int dev;                /* index into the names[] given to the selector */
    int port;               /* port from VCOLL_HCA, 0 = first usable port */
    int distance;           /* TOPO_NEAR_*, -1 when chosen by VCOLL_HCA */
    char why[256];          /* one line, for logs and vcoll_info */
} topo_hca_choice_t;

/* Load the machine's topology with I/O devices (OpenFabrics OS devices). */
int topo_load(hwloc_topology_t *topo);

/* Load a topology from an XML file (tests, or HWLOC_XMLFILE-like use). */
int topo_load_xml(hwloc_topology_t *topo, const char *path);

/* Where this process is allowed to run (caller frees with hwloc_bitmap_free). */
hwloc_bitmap_t topo_my_cpuset(hwloc_topology_t topo);

/* Distance class of device `name` for a rank bound to cpuset (TOPO_NEAR_*).
 * If where is non-NULL it receives a short description ("NUMA node 1",
 * "not placed by hwloc"). */
int topo_hca_distance(hwloc_topology_t topo, hwloc_const_bitmap_t cpuset,
                      const char *name, char *where, size_t wlen);

/*
 * Choose the HCA for a rank.
 *   names[0..n-1]: usable devices (the caller's order must be the same on
 *                  every rank of a node, e.g. sorted by name)
 *   override:      VCOLL_HCA ("" or NULL = choose by locality), a comma list
 *                  of dev[:port], indexed by local_rank modulo its length
 * Nearest class wins; ties are spread round-robin by local rank.
 * Returns VC_SUCCESS, or VC_ERR_ARG (bad/unknown override, text in out->why)
 * or VC_ERR_TRANSPORT (n == 0).
 */
int topo_hca_select(hwloc_topology_t topo, hwloc_const_bitmap_t cpuset,
                    const char *const *names, int n, int local_rank,
                    const char *override, topo_hca_choice_t *out);

#endif
