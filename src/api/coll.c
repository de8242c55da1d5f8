/*
 * coll.c -- public collective calls (barrier, bcast, reduce, allreduce,
 * allgather in their blocking, non-blocking and persistent forms) and the
 * public face of selection: validate every argument as MPI does, take the lock, then hand
 * the call to the collective layer's one route (src/coll/route.c).
 * coll_alltoall.c and coll_gather.c hold the other collectives.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "coll/coll.h"
#include "coll/registry.h"
#include "dtype/dtype.h"
#include "core/ops.h"

/* ---- the public face of selection: listing a collective's algorithms
   and forcing one on a communicator (vcoll_tune measures candidates this
   way: vcoll cannot be re-initialised in one process, so environment
   variables cannot change between measurements) ---- */

int vc_coll_alg_name(const char *collective, int index, const char **name)
{
    const coll_alg_t *const *l;
    int kind = coll_kind_of(collective);
    if (kind < 0 || !name || index < 0)
        return VC_ERR_ARG;
    if (index >= coll_algs(kind, &l))
        return VC_ERR_ARG;
    *name = l[index]->name;
    return VC_SUCCESS;
}

int vc_coll_which(vc_comm_t comm, const char *collective, size_t count, vc_dtype_t dtype,
                  const char **name)
{
    VC_API_ENTER();
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    int kind = coll_kind_of(collective);
    if (kind < 0 || !name)
        return VC_ERR_ARG;
    size_t esize = kind == COLL_BARRIER ? 1 : dtype_size(dtype);
    if (!esize)
        return VC_ERR_DTYPE;
    return coll_which(comm, kind, count, esize, name);
}

int vc_coll_set_alg(vc_comm_t comm, const char *collective, const char *algorithm)
{
    VC_API_ENTER();
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    return coll_set_alg(comm, collective, algorithm ? algorithm : "auto");
}

/* ---- argument checking ---- */

int api_check_op(vc_dtype_t dt, vc_op_t op)
{
    if (!ops_is_user(op))
        return dtype_op_check(dt, op);
    if (!dtype_size(dt))
        return VC_ERR_DTYPE;
    return ops_lookup(&ctx_lib.ops, op, NULL, NULL);
}

static int check_bcast(void *buf, size_t count, vc_dtype_t dt, int root,
                       vc_comm_t comm)
{
    size_t bytes;
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (root < 0 || root >= comm->size)
        return VC_ERR_RANK;
    if ((rc = dtype_bytes(dt, count, &bytes)))
        return rc;
    if (buf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    return api_check_buf(buf, count);
}

/* shared by reduce (root >= 0) and allreduce (root = -1) */
static int check_reduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                        vc_op_t op, int root, vc_comm_t comm)
{
    size_t bytes;
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (root != -1 && (root < 0 || root >= comm->size))
        return VC_ERR_RANK;
    if ((rc = api_check_op(dt, op)))
        return rc;
    if ((rc = dtype_bytes(dt, count, &bytes)))
        return rc;
    int has_rbuf = root == -1 || root == comm->rank;
    if (rbuf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    if (sbuf == VC_IN_PLACE)        /* MPI: in place only where rbuf is valid */
        return has_rbuf ? api_check_buf(rbuf, count) : VC_ERR_BUFFER;
    if ((rc = api_check_buf(sbuf, count)))
        return rc;
    return has_rbuf ? api_check_buf(rbuf, count) : VC_SUCCESS;
}

/* ---- the calls: each collective is one function of the form (registry.h:
   FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT), so the three public
   forms share every check and differ only in the request they ask for ---- */

static int barrier(vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = api_check_comm(comm);
    return rc ? rc : api_coll_run(COLL_BARRIER, comm, NULL, NULL, 0, VC_BYTE, VC_SUM, 0, NULL,
                                  req, form);
}

int vc_barrier(vc_comm_t comm)
{
    VC_API_ENTER();
    return barrier(comm, NULL, FORM_BLOCKING);
}

int vc_ibarrier(vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return barrier(comm, req, FORM_NONBLOCKING);
}

int vc_barrier_init(vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return barrier(comm, req, FORM_PERSISTENT);
}

static int bcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm,
                 vc_request_t *req, int form)
{
    int rc = check_bcast(buf, count, dtype, root, comm);
    return rc ? rc : api_coll_run(COLL_BCAST, comm, NULL, buf, count, dtype, VC_SUM, root,
                                  NULL, req, form);
}

int vc_bcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm)
{
    VC_API_ENTER();
    return bcast(buf, count, dtype, root, comm, NULL, FORM_BLOCKING);
}

int vc_ibcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm,
              vc_request_t *req)
{
    VC_API_ENTER();
    return bcast(buf, count, dtype, root, comm, req, FORM_NONBLOCKING);
}

int vc_bcast_init(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm,
                  vc_request_t *req)
{
    VC_API_ENTER();
    return bcast(buf, count, dtype, root, comm, req, FORM_PERSISTENT);
}

static int reduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
                  int root, vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_reduce(sbuf, rbuf, count, dtype, op, root, comm);
    if (rc)
        return rc;
    if (comm->rank == root && sbuf == rbuf)   /* same buffer: treat as in place */
        sbuf = VC_IN_PLACE;
    return api_coll_run(COLL_REDUCE, comm, sbuf, comm->rank == root ? rbuf : NULL, count,
                        dtype, op, root, NULL, req, form);
}

int vc_reduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
              vc_op_t op, int root, vc_comm_t comm)
{
    VC_API_ENTER();
    return reduce(sbuf, rbuf, count, dtype, op, root, comm, NULL, FORM_BLOCKING);
}

int vc_ireduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
               vc_op_t op, int root, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return reduce(sbuf, rbuf, count, dtype, op, root, comm, req, FORM_NONBLOCKING);
}

int vc_reduce_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                   vc_op_t op, int root, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return reduce(sbuf, rbuf, count, dtype, op, root, comm, req, FORM_PERSISTENT);
}

static int allreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                     vc_op_t op, vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_reduce(sbuf, rbuf, count, dtype, op, -1, comm);
    if (rc)
        return rc;
    if (sbuf == rbuf)
        sbuf = VC_IN_PLACE;
    return api_coll_run(COLL_ALLREDUCE, comm, sbuf, rbuf, count, dtype, op, 0, NULL, req,
                        form);
}

int vc_allreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_op_t op, vc_comm_t comm)
{
    VC_API_ENTER();
    return allreduce(sbuf, rbuf, count, dtype, op, comm, NULL, FORM_BLOCKING);
}

int vc_iallreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                  vc_op_t op, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allreduce(sbuf, rbuf, count, dtype, op, comm, req, FORM_NONBLOCKING);
}

int vc_allreduce_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                      vc_op_t op, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allreduce(sbuf, rbuf, count, dtype, op, comm, req, FORM_PERSISTENT);
}

static int check_allgather(const void **sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                           vc_comm_t comm)
{
    size_t bytes, total;
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if ((rc = dtype_bytes(dtype, count, &bytes)))
        return rc;
    /* the receive buffer holds size blocks */
    if ((rc = dtype_bytes(dtype, count * (size_t)comm->size, &total)) ||
        (count && count * (size_t)comm->size / (size_t)comm->size != count))
        return rc ? rc : VC_ERR_COUNT;
    if (rbuf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    if ((rc = api_check_buf(rbuf, count)))
        return rc;
    if (*sbuf != VC_IN_PLACE && (rc = api_check_buf(*sbuf, count)))
        return rc;
    if (*sbuf == (const char *)rbuf + (size_t)comm->rank * bytes && count)
        *sbuf = VC_IN_PLACE;
    return VC_SUCCESS;
}

static int allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                     vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_allgather(&sbuf, rbuf, count, dtype, comm);
    return rc ? rc : api_coll_run(COLL_ALLGATHER, comm, sbuf, rbuf, count, dtype, VC_SUM, 0,
                                  NULL, req, form);
}

int vc_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_comm_t comm)
{
    VC_API_ENTER();
    return allgather(sbuf, rbuf, count, dtype, comm, NULL, FORM_BLOCKING);
}

int vc_iallgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                  vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allgather(sbuf, rbuf, count, dtype, comm, req, FORM_NONBLOCKING);
}

int vc_allgather_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                      vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return allgather(sbuf, rbuf, count, dtype, comm, req, FORM_PERSISTENT);
}
