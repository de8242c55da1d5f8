/*
 * comm_graph.c -- communicators that carry a neighbour graph: a general
 * one (vc_comm_create_graph, MPI's Dist_graph_create_adjacent without
 * reordering) and a Cartesian grid (vc_comm_create_cart). The API checked
 * the parent communicator; everything else is checked here, and agreed.
 *
 * Agreement costs one allreduce whatever the size of the job: instead of
 * exchanging every rank's lists, each rank adds a 128-bit hash of every
 * edge it lists as a destination, (me -> b), and subtracts the hash of
 * every edge it lists as a source, (a -> me). The sum over the job is zero
 * exactly when the two multisets of edges are equal, i.e. when every rank
 * that lists b as a destination k times is listed by b as a source k
 * times (up to a 2^-128 chance for lists that do not match). Out-of-range
 * neighbours and malformed arguments are counted in the same allreduce, so
 * every rank learns the outcome together and none waits for a rank that
 * gave up. A second allreduce agrees on the largest out-degree (what the
 * shared-segment algorithm sizes by). Then the communicator is duplicated
 * (its own context id) and the graph attached.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "comm_priv.h"
#include "graph.h"

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void edge_hash(int from, int to, uint64_t h[2])
{
    uint64_t e = (uint64_t)(uint32_t)from << 32 | (uint32_t)to;
    h[0] = mix64(e);
    h[1] = mix64(e ^ 0x5851f42d4c957f2dULL);
}

const coll_graph_t *coll_comm_graph(struct vc_comm *comm)
{
    coll_comm_t *cc = coll_priv(comm);
    return cc ? cc->graph : NULL;
}

void coll_graph_free(coll_graph_t *g)
{
    if (!g)
        return;
    free(g->src);
    free(g->dst);
    free(g->dims);
    free(g->periods);
    free(g);
}

static int *dup_ints(const int *v, int n)
{
    int *c = malloc((size_t)(n ? n : 1) * sizeof *c);
    if (c && n)
        memcpy(c, v, (size_t)n * sizeof *c);
    return c;
}

static coll_graph_t *graph_new(int cart, int indeg, const int *src, int outdeg,
                               const int *dst, int maxout, int ndims, const int *dims,
                               const int *periods)
{
    coll_graph_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->cart = cart;
    g->indeg = indeg;
    g->outdeg = outdeg;
    g->maxout = maxout;
    g->ndims = ndims;
    g->src = dup_ints(src, indeg);
    g->dst = dup_ints(dst, outdeg);
    g->dims = dup_ints(dims, ndims);
    g->periods = dup_ints(periods, ndims);
    if (!g->src || !g->dst || !g->dims || !g->periods) {
        coll_graph_free(g);
        return NULL;
    }
    return g;
}

coll_graph_t *coll_graph_new(int indeg, const int *src, int outdeg, const int *dst)
{
    return graph_new(0, indeg, src, outdeg, dst, outdeg, 0, NULL, NULL);
}

/* the grid's neighbours of rank r, MPI's order: for each dimension the -1
   neighbour, then the +1 one; VC_PROC_NULL off a non-periodic edge */
static void cart_neighbors(const int *dims, const int *periods, int ndims, int r, int *nb)
{
    int stride = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        int c = (r / stride) % dims[d];
        for (int side = 0; side < 2; side++) {
            int n = c + (side ? 1 : -1);
            if (n < 0 || n >= dims[d])
                n = periods[d] ? (n + dims[d]) % dims[d] : -1;
            nb[2 * d + side] = n < 0 ? VC_PROC_NULL : r + (n - c) * stride;
        }
        stride *= dims[d];
    }
}

coll_graph_t *coll_graph_cart(int ndims, const int *dims, const int *periods, int rank)
{
    int *per = malloc((size_t)(ndims ? ndims : 1) * sizeof *per);
    int *nb = malloc((size_t)(ndims ? 2 * ndims : 1) * sizeof *nb);
    coll_graph_t *g = NULL;
    if (per && nb) {
        for (int d = 0; d < ndims; d++)
            per[d] = periods[d] != 0;
        cart_neighbors(dims, per, ndims, rank, nb);
        g = graph_new(1, 2 * ndims, nb, 2 * ndims, nb, 2 * ndims, ndims, dims, per);
    }
    free(per);
    free(nb);
    return g;
}

int coll_graph_copy(struct vc_comm *to, const coll_graph_t *g)
{
    coll_comm_t *cc = coll_priv(to);
    if (!cc)
        return VC_ERR_NOMEM;
    cc->graph = graph_new(g->cart, g->indeg, g->src, g->outdeg, g->dst, g->maxout, g->ndims,
                          g->dims, g->periods);
    return cc->graph ? VC_SUCCESS : VC_ERR_NOMEM;
}

/* a duplicate of comm carrying g (takes g; frees it on failure) */
static int attach(struct vc_comm *comm, coll_graph_t *g, struct vc_comm **newcomm)
{
    struct vc_comm *nc;
    int rc = coll_comm_dup(comm, &nc);
    coll_comm_t *cc = rc ? NULL : coll_priv(nc);
    if (!rc && !cc)
        rc = VC_ERR_NOMEM;
    if (rc) {
        coll_graph_free(g);
        return rc;
    }
    coll_graph_free(cc->graph);     /* comm's own, copied by the dup */
    cc->graph = g;
    *newcomm = nc;
    return VC_SUCCESS;
}

enum { AG_RANGE, AG_BAD, AG_H0, AG_H1, AG_N };

int coll_comm_create_graph(struct vc_comm *comm, int indeg, const int *src, int outdeg,
                           const int *dst, struct vc_comm **newcomm)
{
    uint64_t mine[AG_N] = {0}, all[AG_N];
    int bad = !newcomm || indeg < 0 || outdeg < 0 || (indeg && !src) || (outdeg && !dst);
    if (bad) {
        mine[AG_BAD] = 1;
        indeg = outdeg = 0;     /* take part in the agreement with no edges */
    }
    for (int i = 0; i < outdeg; i++) {
        uint64_t h[2];
        if (dst[i] < 0 || dst[i] >= comm->size) {
            mine[AG_RANGE] = 1;
            continue;
        }
        edge_hash(comm->rank, dst[i], h);
        mine[AG_H0] += h[0];
        mine[AG_H1] += h[1];
    }
    for (int i = 0; i < indeg; i++) {
        uint64_t h[2];
        if (src[i] < 0 || src[i] >= comm->size) {
            mine[AG_RANGE] = 1;
            continue;
        }
        edge_hash(src[i], comm->rank, h);
        mine[AG_H0] -= h[0];
        mine[AG_H1] -= h[1];
    }
    int rc = coll_run_msgs(COLL_ALLREDUCE, comm, mine, all, AG_N, VC_UINT64, VC_SUM, 0);
    if (rc)
        return rc;
    if (all[AG_RANGE])
        return mine[AG_RANGE] ? VC_ERR_RANK : VC_ERR_ARG;
    if (all[AG_BAD] || all[AG_H0] || all[AG_H1])
        return VC_ERR_ARG;
    /* the largest out-degree, which every member must size alike (a
       second allreduce: the one above sums) */
    uint64_t deg = (uint64_t)outdeg, maxdeg = 0;
    if ((rc = coll_run_msgs(COLL_ALLREDUCE, comm, &deg, &maxdeg, 1, VC_UINT64, VC_MAX, 0)))
        return rc;
    coll_graph_t *g = graph_new(0, indeg, src, outdeg, dst, (int)maxdeg, 0, NULL, NULL);
    return g ? attach(comm, g, newcomm) : VC_ERR_NOMEM;
}

int coll_comm_create_cart(struct vc_comm *comm, int ndims, const int *dims,
                          const int *periods, struct vc_comm **newcomm)
{
    int bad = !newcomm || ndims < 0 || (ndims && (!dims || !periods));
    uint64_t h = mix64((uint64_t)(uint32_t)ndims);
    long long prod = 1;
    for (int d = 0; !bad && d < ndims; d++) {
        if (dims[d] <= 0 || prod * dims[d] > comm->size) {
            bad = 1;
            break;
        }
        prod *= dims[d];
        h = mix64(h ^ (uint64_t)(uint32_t)dims[d] << 1 ^ (periods[d] != 0));
    }
    if (prod != comm->size)
        bad = 1;
    /* the same grid on every rank: a rank that saw different dimensions
       would compute different neighbours and wait for messages never sent */
    uint64_t mine[3] = {(uint64_t)bad, h, ~h}, all[3];
    int rc = coll_run_msgs(COLL_ALLREDUCE, comm, mine, all, 3, VC_UINT64, VC_MAX, 0);
    if (rc)
        return rc;
    if (all[0] || all[1] != ~all[2])
        return VC_ERR_ARG;
    coll_graph_t *g = coll_graph_cart(ndims, dims, periods, comm->rank);
    return g ? attach(comm, g, newcomm) : VC_ERR_NOMEM;
}
