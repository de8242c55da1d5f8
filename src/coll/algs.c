/*
 * algs.c -- algorithm names (VCOLL_<COLL>_ALG values, index 0 = auto) and
 * the matching schedule builders. The two lists of a collective must stay
 * in the same order.
 */
#include <stddef.h>
#include <string.h>
#include "core/config.h"
#include "sched.h"

/* "shm" (shm_node.c) runs blocking calls through shared segments; where
   none can be used (non-blocking calls, the unit simulator, a node
   without one) it is hier's schedule, so its builder is hier's */
const char *const cfg_barrier_algs[] = {"auto", "dissemination", "linear", "hier", "shm",
                                        NULL};
const char *const cfg_bcast_algs[] = {"auto", "binomial", "scatter_allgather", "hier",
                                      "shm", NULL};
const char *const cfg_reduce_algs[] = {"auto", "binomial", "rsag", "hier", "shm", NULL};
const char *const cfg_allreduce_algs[] = {"auto", "recursive_doubling",
                                          "rabenseifner", "ring", "linear", "hier", "shm",
                                          NULL};
const char *const cfg_allgather_algs[] = {"auto", "ring", "recursive_doubling", "hier",
                                          "shm", NULL};
const char *const cfg_gather_algs[] = {"auto", "binomial", "linear", NULL};
const char *const cfg_gatherv_algs[] = {"auto", "linear", NULL};
const char *const cfg_scatter_algs[] = {"auto", "binomial", "linear", NULL};
const char *const cfg_scatterv_algs[] = {"auto", "linear", NULL};
const char *const cfg_allgatherv_algs[] = {"auto", "ring", "recursive_doubling", NULL};
/* alltoall(v), reduce_scatter(_block), scan, exscan */
const char *const cfg_alltoall_algs[] = {"auto", "bruck", "pairwise", NULL};
const char *const cfg_alltoallv_algs[] = {"auto", "pairwise", NULL};
const char *const cfg_reduce_scatter_block_algs[] = {"auto", "recursive_halving",
                                                     "pairwise", "ring", NULL};
const char *const cfg_reduce_scatter_algs[] = {"auto", "recursive_halving",
                                               "pairwise", "ring", NULL};
const char *const cfg_scan_algs[] = {"auto", "recursive_doubling", NULL};
const char *const cfg_exscan_algs[] = {"auto", "recursive_doubling", NULL};

static const coll_build_fn barrier_b[] = {NULL, coll_barrier_dissemination,
                                          coll_barrier_linear, coll_barrier_hier,
                                          coll_barrier_hier};
static const coll_build_fn bcast_b[] = {NULL, coll_bcast_binomial,
                                        coll_bcast_scatter_allgather, coll_bcast_hier,
                                        coll_bcast_hier};
static const coll_build_fn reduce_b[] = {NULL, coll_reduce_binomial, coll_reduce_rsag,
                                         coll_reduce_hier, coll_reduce_hier};
static const coll_build_fn allreduce_b[] = {NULL, coll_allreduce_recursive_doubling,
                                            coll_allreduce_rabenseifner,
                                            coll_allreduce_ring,
                                            coll_allreduce_linear, coll_allreduce_hier,
                                            coll_allreduce_hier};
static const coll_build_fn allgather_b[] = {NULL, coll_allgather_ring,
                                            coll_allgather_recursive_doubling,
                                            coll_allgather_hier, coll_allgather_hier};
static const coll_build_fn gather_b[] = {NULL, coll_gather_binomial, coll_gather_linear};
static const coll_build_fn gatherv_b[] = {NULL, coll_gatherv_linear};
static const coll_build_fn scatter_b[] = {NULL, coll_scatter_binomial, coll_scatter_linear};
static const coll_build_fn scatterv_b[] = {NULL, coll_scatterv_linear};
static const coll_build_fn allgatherv_b[] = {NULL, coll_allgatherv_ring,
                                             coll_allgatherv_recursive_doubling};

static const coll_build_fn alltoall_b[] = {NULL, coll_alltoall_bruck,
                                           coll_alltoall_pairwise};
static const coll_build_fn alltoallv_b[] = {NULL, coll_alltoallv_pairwise};
/* one builder per algorithm serves both reduce_scatter kinds */
static const coll_build_fn reduce_scatter_b[] = {NULL, coll_reduce_scatter_recursive_halving,
                                                 coll_reduce_scatter_pairwise,
                                                 coll_reduce_scatter_ring};
static const coll_build_fn scan_b[] = {NULL, coll_scan_recursive_doubling};
static const coll_build_fn exscan_b[] = {NULL, coll_exscan_recursive_doubling};

const coll_build_fn *const coll_builders[COLL_NKINDS] = {
    barrier_b, bcast_b, reduce_b, allreduce_b, allgather_b,
    gather_b, gatherv_b, scatter_b, scatterv_b, allgatherv_b,
    [COLL_ALLTOALL] = alltoall_b, [COLL_ALLTOALLV] = alltoallv_b,
    [COLL_REDUCE_SCATTER_BLOCK] = reduce_scatter_b, [COLL_REDUCE_SCATTER] = reduce_scatter_b,
    [COLL_SCAN] = scan_b, [COLL_EXSCAN] = exscan_b,
};

const char *const *const coll_alg_names[COLL_NKINDS] = {
    cfg_barrier_algs, cfg_bcast_algs, cfg_reduce_algs, cfg_allreduce_algs,
    cfg_allgather_algs,
    cfg_gather_algs, cfg_gatherv_algs, cfg_scatter_algs, cfg_scatterv_algs,
    cfg_allgatherv_algs,
    [COLL_ALLTOALL] = cfg_alltoall_algs, [COLL_ALLTOALLV] = cfg_alltoallv_algs,
    [COLL_REDUCE_SCATTER_BLOCK] = cfg_reduce_scatter_block_algs,
    [COLL_REDUCE_SCATTER] = cfg_reduce_scatter_algs,
    [COLL_SCAN] = cfg_scan_algs, [COLL_EXSCAN] = cfg_exscan_algs,
};

/* the index of a named algorithm ("hier", "shm") where a collective has it, else 0 */
int coll_alg_index(int kind, const char *name)
{
    for (int i = 1; i < coll_nalgs(kind); i++)
        if (!strcmp(coll_alg_names[kind][i], name))
            return i;
    return 0;
}

int coll_nalgs(int kind)
{
    int n = 0;
    if (kind < 0 || kind >= COLL_NKINDS || !coll_alg_names[kind])
        return 0;
    while (coll_alg_names[kind][n])
        n++;
    return n;
}
