/*
 * coll_neighbor.c -- public neighborhood collectives (allgather(v),
 * alltoall(v) over a communicator's neighbour graph), blocking,
 * non-blocking and persistent: validate, then hand them to the collective
 * layer's route like any collective.
 *
 * MPI's rules: the communicator must carry a graph (vc_comm_create_graph
 * or _cart; VC_ERR_COMM otherwise); there is no in-place form
 * (VC_ERR_BUFFER); receive blocks must not overlap. Counts are per edge,
 * so the v forms' arrays have the in- and out-degree's lengths.
 */
#include <stddef.h>
#include "api.h"
#include "coll/coll.h"
#include "coll/graph.h"
#include "coll/registry.h"

/* the graph of comm, or the error of a call on it */
static int check_graph(vc_comm_t comm, const void *sbuf, const void *rbuf,
                       const coll_graph_t **g)
{
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (!(*g = coll_comm_graph(comm)))
        return VC_ERR_COMM;
    return sbuf == VC_IN_PLACE || rbuf == VC_IN_PLACE ? VC_ERR_BUFFER : VC_SUCCESS;
}

/* count elements per block, n blocks in buf */
static int check_uniform(const void *buf, size_t count, int n, vc_dtype_t dt)
{
    int rc = api_check_total(dt, count, (size_t)(n > 1 ? n : 1));
    return rc ? rc : api_check_buf(buf, n ? count : 0);
}

/* one side of a v form: n blocks (none: the arrays may be NULL) */
static int check_side(const void *buf, const size_t *cnt, const size_t *dsp, int n,
                      vc_dtype_t dt, int disjoint)
{
    if (!n)
        return VC_SUCCESS;
    if (!cnt || !dsp)
        return VC_ERR_ARG;
    return api_check_blocks(buf, cnt, dsp, n, dt, disjoint);
}

static int allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                     vc_comm_t comm, vc_request_t *req, int form)
{
    const coll_graph_t *g;
    int rc = check_graph(comm, sbuf, rbuf, &g);
    if (rc || (rc = check_uniform(rbuf, count, g->indeg, dt)) ||
        (rc = check_uniform(sbuf, count, g->outdeg ? 1 : 0, dt)))
        return rc;
    return api_coll_run(COLL_NEIGHBOR_ALLGATHER, comm, sbuf, rbuf, count, dt, VC_SUM, 0,
                        NULL, req, form);
}

int vc_neighbor_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                          vc_comm_t comm)
{
    VC_API_ENTER();
    return allgather(sbuf, rbuf, count, dtype, comm, NULL, FORM_BLOCKING);
}

int vc_ineighbor_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                           vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allgather(sbuf, rbuf, count, dtype, comm, req, FORM_NONBLOCKING);
}

int vc_neighbor_allgather_init(const void *sbuf, void *rbuf, size_t count,
                               vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allgather(sbuf, rbuf, count, dtype, comm, req, FORM_PERSISTENT);
}

static int allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                      const size_t *displs, vc_dtype_t dt, vc_comm_t comm,
                      vc_request_t *req, int form)
{
    const coll_graph_t *g;
    int rc = check_graph(comm, sbuf, rbuf, &g);
    if (rc || (rc = check_uniform(sbuf, scount, g->outdeg ? 1 : 0, dt)) ||
        (rc = check_side(rbuf, rcounts, displs, g->indeg, dt, 1)))
        return rc;
    coll_vec_t v = {NULL, NULL, rcounts, displs};
    return api_coll_run(COLL_NEIGHBOR_ALLGATHERV, comm, sbuf, rbuf, scount, dt, VC_SUM, 0,
                        &v, req, form);
}

int vc_neighbor_allgatherv(const void *sbuf, size_t scount, void *rbuf,
                           const size_t rcounts[], const size_t displs[], vc_dtype_t dtype,
                           vc_comm_t comm)
{
    VC_API_ENTER();
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, NULL, FORM_BLOCKING);
}

int vc_ineighbor_allgatherv(const void *sbuf, size_t scount, void *rbuf,
                            const size_t rcounts[], const size_t displs[], vc_dtype_t dtype,
                            vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, req,
                      FORM_NONBLOCKING);
}

int vc_neighbor_allgatherv_init(const void *sbuf, size_t scount, void *rbuf,
                                const size_t rcounts[], const size_t displs[],
                                vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, req,
                      FORM_PERSISTENT);
}

static int alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                    vc_comm_t comm, vc_request_t *req, int form)
{
    const coll_graph_t *g;
    int rc = check_graph(comm, sbuf, rbuf, &g);
    if (rc || (rc = check_uniform(rbuf, count, g->indeg, dt)) ||
        (rc = check_uniform(sbuf, count, g->outdeg, dt)))
        return rc;
    return api_coll_run(COLL_NEIGHBOR_ALLTOALL, comm, sbuf, rbuf, count, dt, VC_SUM, 0,
                        NULL, req, form);
}

int vc_neighbor_alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                         vc_comm_t comm)
{
    VC_API_ENTER();
    return alltoall(sbuf, rbuf, count, dtype, comm, NULL, FORM_BLOCKING);
}

int vc_ineighbor_alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                          vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoall(sbuf, rbuf, count, dtype, comm, req, FORM_NONBLOCKING);
}

int vc_neighbor_alltoall_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                              vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoall(sbuf, rbuf, count, dtype, comm, req, FORM_PERSISTENT);
}

static int alltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls,
                     void *rbuf, const size_t *rcounts, const size_t *rdispls,
                     vc_dtype_t dt, vc_comm_t comm, vc_request_t *req, int form)
{
    const coll_graph_t *g;
    int rc = check_graph(comm, sbuf, rbuf, &g);
    if (rc || (rc = api_check_total(dt, 1, 1)) ||
        (rc = check_side(rbuf, rcounts, rdispls, g->indeg, dt, 1)) ||
        (rc = check_side(sbuf, scounts, sdispls, g->outdeg, dt, 0)))
        return rc;
    coll_vec_t v = {scounts, sdispls, rcounts, rdispls};
    return api_coll_run(COLL_NEIGHBOR_ALLTOALLV, comm, sbuf, rbuf, 0, dt, VC_SUM, 0, &v, req,
                        form);
}

int vc_neighbor_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                          void *rbuf, const size_t rcounts[], const size_t rdispls[],
                          vc_dtype_t dtype, vc_comm_t comm)
{
    VC_API_ENTER();
    return alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dtype, comm, NULL,
                     FORM_BLOCKING);
}

int vc_ineighbor_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                           void *rbuf, const size_t rcounts[], const size_t rdispls[],
                           vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dtype, comm, req,
                     FORM_NONBLOCKING);
}

int vc_neighbor_alltoallv_init(const void *sbuf, const size_t scounts[],
                               const size_t sdispls[], void *rbuf, const size_t rcounts[],
                               const size_t rdispls[], vc_dtype_t dtype, vc_comm_t comm,
                               vc_request_t *req)
{
    VC_API_ENTER();
    return alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dtype, comm, req,
                     FORM_PERSISTENT);
}
