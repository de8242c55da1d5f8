/*
 * comm.c -- the world communicator and the public communicator calls:
 * rank and size, and dup, split, create_group and free, which check their
 * arguments here and run in the collective layer (src/coll/comm_split.c,
 * comm_create_group.c).
 */
#include "api.h"
#include "coll/coll.h"
#include "coll/graph.h"

/* what VC_COMM_WORLD points at (vcoll.h), set up by vc_init */
struct vc_comm vc_comm_world_obj;

int vc_comm_rank(vc_comm_t comm, int *rank)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!rank)
        return VC_ERR_ARG;
    *rank = comm->rank;
    return VC_SUCCESS;
}

int vc_comm_size(vc_comm_t comm, int *size)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!size)
        return VC_ERR_ARG;
    *size = comm->size;
    return VC_SUCCESS;
}

/* the checks dup, split and create_group share; *newcomm is NULL on
   every error */
static int check_new(vc_comm_t comm, vc_comm_t *newcomm)
{
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!newcomm)
        return VC_ERR_ARG;
    *newcomm = VC_COMM_NULL;
    return VC_SUCCESS;
}

int vc_comm_dup(vc_comm_t comm, vc_comm_t *newcomm)
{
    VC_API_ENTER();
    int rc = check_new(comm, newcomm);
    return rc ? rc : coll_comm_dup(comm, newcomm);
}

int vc_comm_split(vc_comm_t comm, int color, int key, vc_comm_t *newcomm)
{
    VC_API_ENTER();
    int rc = check_new(comm, newcomm);
    return rc ? rc : coll_comm_split(comm, color, key, newcomm);
}

int vc_comm_create_group(vc_comm_t comm, int n, const int ranks[], int tag,
                         vc_comm_t *newcomm)
{
    VC_API_ENTER();
    int rc = check_new(comm, newcomm);
    if (rc)
        return rc;
    if (tag < 0 || tag > VC_TAG_UB)
        return VC_ERR_TAG;
    return coll_comm_create_group(comm, n, ranks, tag, newcomm);
}

int vc_comm_free(vc_comm_t *comm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!comm)
        return VC_ERR_ARG;
    if (comm_check(*comm) || *comm == VC_COMM_WORLD)
        return VC_ERR_COMM;
    coll_comm_free(*comm);
    *comm = VC_COMM_NULL;
    return VC_SUCCESS;
}

/* ---- communicators with a neighbour graph (src/coll/comm_graph.c) ---- */

int vc_comm_create_graph(vc_comm_t comm, int indegree, const int sources[], int outdegree,
                         const int destinations[], vc_comm_t *newcomm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    /* the rest is agreed by every member (a bad list on one rank fails
       the creation everywhere instead of leaving the others waiting) */
    if (newcomm)
        *newcomm = VC_COMM_NULL;
    return coll_comm_create_graph(comm, indegree, sources, outdegree, destinations, newcomm);
}

int vc_comm_create_cart(vc_comm_t comm, int ndims, const int dims[], const int periods[],
                        vc_comm_t *newcomm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (newcomm)
        *newcomm = VC_COMM_NULL;
    return coll_comm_create_cart(comm, ndims, dims, periods, newcomm);
}

/* the graph comm carries: VC_ERR_COMM for a communicator without one */
static int graph_of(vc_comm_t comm, const coll_graph_t **g)
{
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    return (*g = coll_comm_graph(comm)) ? VC_SUCCESS : VC_ERR_COMM;
}

int vc_neighbors_count(vc_comm_t comm, int *indegree, int *outdegree)
{
    VC_API_ENTER();
    const coll_graph_t *g;
    int rc = graph_of(comm, &g);
    if (rc)
        return rc;
    if (!indegree || !outdegree)
        return VC_ERR_ARG;
    *indegree = g->indeg;
    *outdegree = g->outdeg;
    return VC_SUCCESS;
}

int vc_neighbors(vc_comm_t comm, int maxin, int sources[], int maxout, int destinations[])
{
    VC_API_ENTER();
    const coll_graph_t *g;
    int rc = graph_of(comm, &g);
    if (rc)
        return rc;
    if (maxin < 0 || maxout < 0 || (maxin && !sources) || (maxout && !destinations))
        return VC_ERR_ARG;
    /* as MPI: the first maxin / maxout of them */
    for (int i = 0; i < maxin && i < g->indeg; i++)
        sources[i] = g->src[i];
    for (int i = 0; i < maxout && i < g->outdeg; i++)
        destinations[i] = g->dst[i];
    return VC_SUCCESS;
}
