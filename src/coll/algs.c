/*
 * algs.c -- algorithm names (VCOLL_<COLL>_ALG values, index 0 = auto) and
 * the matching schedule builders. The two lists of a collective must stay
 * in the same order.
 */
#include <stddef.h>
#include "core/config.h"
#include "sched.h"

const char *const cfg_barrier_algs[] = {"auto", "dissemination", "linear", NULL};
const char *const cfg_bcast_algs[] = {"auto", "binomial", "scatter_allgather", NULL};
const char *const cfg_reduce_algs[] = {"auto", "binomial", "rsag", NULL};
const char *const cfg_allreduce_algs[] = {"auto", "recursive_doubling",
                                          "rabenseifner", "ring", "linear", NULL};
const char *const cfg_allgather_algs[] = {"auto", "ring", "recursive_doubling", NULL};
const char *const cfg_gather_algs[] = {"auto", "binomial", "linear", NULL};
const char *const cfg_gatherv_algs[] = {"auto", "linear", NULL};
const char *const cfg_scatter_algs[] = {"auto", "binomial", "linear", NULL};
const char *const cfg_scatterv_algs[] = {"auto", "linear", NULL};
const char *const cfg_allgatherv_algs[] = {"auto", "ring", "recursive_doubling", NULL};

static const coll_build_fn barrier_b[] = {NULL, coll_barrier_dissemination,
                                          coll_barrier_linear};
static const coll_build_fn bcast_b[] = {NULL, coll_bcast_binomial,
                                        coll_bcast_scatter_allgather};
static const coll_build_fn reduce_b[] = {NULL, coll_reduce_binomial, coll_reduce_rsag};
static const coll_build_fn allreduce_b[] = {NULL, coll_allreduce_recursive_doubling,
                                            coll_allreduce_rabenseifner,
                                            coll_allreduce_ring,
                                            coll_allreduce_linear};
static const coll_build_fn allgather_b[] = {NULL, coll_allgather_ring,
                                            coll_allgather_recursive_doubling};
static const coll_build_fn gather_b[] = {NULL, coll_gather_binomial, coll_gather_linear};
static const coll_build_fn gatherv_b[] = {NULL, coll_gatherv_linear};
static const coll_build_fn scatter_b[] = {NULL, coll_scatter_binomial, coll_scatter_linear};
static const coll_build_fn scatterv_b[] = {NULL, coll_scatterv_linear};
static const coll_build_fn allgatherv_b[] = {NULL, coll_allgatherv_ring,
                                             coll_allgatherv_recursive_doubling};

const coll_build_fn *const coll_builders[COLL_NKINDS] = {
    barrier_b, bcast_b, reduce_b, allreduce_b, allgather_b,
    gather_b, gatherv_b, scatter_b, scatterv_b, allgatherv_b,
};

const char *const *const coll_alg_names[COLL_NKINDS] = {
    cfg_barrier_algs, cfg_bcast_algs, cfg_reduce_algs, cfg_allreduce_algs,
    cfg_allgather_algs,
    cfg_gather_algs, cfg_gatherv_algs, cfg_scatter_algs, cfg_scatterv_algs,
    cfg_allgatherv_algs,
};

int coll_nalgs(int kind)
{
    int n = 0;
    if (kind < 0 || kind >= COLL_NKINDS || !coll_alg_names[kind])
        return 0;
    while (coll_alg_names[kind][n])
        n++;
    return n;
}
