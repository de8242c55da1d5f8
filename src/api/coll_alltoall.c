/*
 * coll_alltoall.c -- public alltoall(v), reduce_scatter(_block), scan and
 * exscan, blocking, non-blocking and persistent: validate as MPI does, then
 * hand the collective to the collective layer's route (api_coll_run,
 * src/coll/route.c). Each collective is one function of the form.
 *
 * Every rank checks only its own arguments, so an argument that is wrong
 * on one rank alone cannot be agreed on; as in MPI the call is then
 * erroneous. Arguments wrong on every rank (the common case: a bug in the
 * caller's code) fail everywhere with the same code and nothing hangs.
 */
#include <stdint.h>
#include <stdlib.h>
#include "api.h"
#include "coll/coll.h"
#include "coll/registry.h"
#include "dtype/dtype.h"

/* count * n elements of dt must be addressable */
int api_check_total(vc_dtype_t dt, size_t count, size_t n)
{
    size_t bytes;
    if (n && count > SIZE_MAX / n)
        return VC_ERR_COUNT;
    return dtype_bytes(dt, count * n, &bytes);
}

static int check_alltoall(const void **sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                          vc_comm_t comm)
{
    int rc = api_check_comm(comm);
    if (rc || (rc = api_check_total(dt, count, (size_t)comm->size)))
        return rc;
    if (rbuf == VC_IN_PLACE || !*sbuf)
        return count ? VC_ERR_BUFFER : VC_SUCCESS;
    if ((rc = api_check_buf(rbuf, count)))
        return rc;
    if (*sbuf == rbuf)          /* same layout both ways: in place */
        *sbuf = VC_IN_PLACE;
    return VC_SUCCESS;
}

static int alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                    vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_alltoall(&sbuf, rbuf, count, dtype, comm);
    return rc ? rc : api_coll_run(COLL_ALLTOALL, comm, sbuf, rbuf, count, dtype, VC_SUM, 0,
                                  NULL, req, form);
}

int vc_alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                vc_comm_t comm)
{
    VC_API_ENTER();
    return alltoall(sbuf, rbuf, count, dtype, comm, NULL, FORM_BLOCKING);
}

int vc_ialltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoall(sbuf, rbuf, count, dtype, comm, req, FORM_NONBLOCKING);
}

int vc_alltoall_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                     vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoall(sbuf, rbuf, count, dtype, comm, req, FORM_PERSISTENT);
}

/* One side of an alltoallv: every block must fit in memory (VC_ERR_COUNT)
   and have a buffer (VC_ERR_BUFFER); receive blocks must not overlap
   (VC_ERR_ARG: two peers' data would land on the same bytes; blocks.c). */
int api_check_blocks(const void *buf, const size_t *cnt, const size_t *dsp, int p,
                     vc_dtype_t dt, int disjoint)
{
    int rc = VC_SUCCESS;
    for (int j = 0; j < p && !rc; j++) {
        if (dsp[j] > SIZE_MAX - cnt[j])
            rc = VC_ERR_COUNT;
        else
            rc = api_check_total(dt, dsp[j] + cnt[j], 1);
        if (!rc && cnt[j] && !buf)
            rc = VC_ERR_BUFFER;
    }
    return rc || !disjoint ? rc : api_check_disjoint(cnt, dsp, p);
}

static int check_alltoallv(const void **sbuf, const size_t *scounts, const size_t *sdispls,
                           void *rbuf, const size_t *rcounts, const size_t *rdispls,
                           vc_dtype_t dt, vc_comm_t comm)
{
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (!dtype_size(dt))
        return VC_ERR_DTYPE;
    if (!rcounts || !rdispls || (*sbuf != VC_IN_PLACE && (!scounts || !sdispls)))
        return VC_ERR_ARG;
    if (rbuf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    if ((rc = api_check_blocks(rbuf, rcounts, rdispls, comm->size, dt, 1)))
        return rc;
    if (*sbuf == VC_IN_PLACE)
        return VC_SUCCESS;
    return api_check_blocks(*sbuf, scounts, sdispls, comm->size, dt, 0);
}

static int alltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls,
                     void *rbuf, const size_t *rcounts, const size_t *rdispls,
                     vc_dtype_t dt, vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_alltoallv(&sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dt, comm);
    if (rc)
        return rc;
    int inplace = sbuf == VC_IN_PLACE;
    coll_vec_t v = {inplace ? NULL : scounts, inplace ? NULL : sdispls, rcounts, rdispls};
    return api_coll_run(COLL_ALLTOALLV, comm, sbuf, rbuf, 0, dt, VC_SUM, 0, &v, req, form);
}

int vc_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                 void *rbuf, const size_t rcounts[], const size_t rdispls[],
                 vc_dtype_t dtype, vc_comm_t comm)
{
    VC_API_ENTER();
    return alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dtype, comm, NULL,
                     FORM_BLOCKING);
}

int vc_ialltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                  void *rbuf, const size_t rcounts[], const size_t rdispls[],
                  vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dtype, comm, req,
                     FORM_NONBLOCKING);
}

int vc_alltoallv_init(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                      void *rbuf, const size_t rcounts[], const size_t rdispls[],
                      vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dtype, comm, req,
                     FORM_PERSISTENT);
}

/* Reductions whose input is `total` elements and whose result is `mine`
   elements (reduce_scatter: total = sum of rcounts; scan: both = count).
   In place the input and the result share rbuf, which must hold the input. */
static int check_reducing(const void **sbuf, void *rbuf, size_t total, size_t mine,
                          vc_dtype_t dt, vc_op_t op, vc_comm_t comm)
{
    int rc = api_check_comm(comm);
    if (rc || (rc = api_check_op(dt, op)) || (rc = api_check_total(dt, total, 1)))
        return rc;
    if (rbuf == VC_IN_PLACE || !*sbuf)
        return total ? VC_ERR_BUFFER : VC_SUCCESS;
    if (*sbuf == VC_IN_PLACE)
        return api_check_buf(rbuf, total);
    if ((rc = api_check_buf(rbuf, mine)))
        return rc;
    if (*sbuf == rbuf && total)
        *sbuf = VC_IN_PLACE;
    return VC_SUCCESS;
}

/* reduce_scatter_block: count per rank */
static int check_rsb(const void **sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                     vc_op_t op, vc_comm_t comm)
{
    int rc = api_check_comm(comm);
    if (rc || (rc = api_check_total(dt, count, (size_t)comm->size)))
        return rc;
    return check_reducing(sbuf, rbuf, count * (size_t)comm->size, count, dt, op, comm);
}

static int rsb(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
               vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_rsb(&sbuf, rbuf, count, dtype, op, comm);
    return rc ? rc : api_coll_run(COLL_REDUCE_SCATTER_BLOCK, comm, sbuf, rbuf, count, dtype,
                                  op, 0, NULL, req, form);
}

int vc_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                            vc_op_t op, vc_comm_t comm)
{
    VC_API_ENTER();
    return rsb(sbuf, rbuf, count, dtype, op, comm, NULL, FORM_BLOCKING);
}

int vc_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count,
                             vc_dtype_t dtype, vc_op_t op, vc_comm_t comm,
                             vc_request_t *req)
{
    VC_API_ENTER();
    return rsb(sbuf, rbuf, count, dtype, op, comm, req, FORM_NONBLOCKING);
}

int vc_reduce_scatter_block_init(const void *sbuf, void *rbuf, size_t count,
                                 vc_dtype_t dtype, vc_op_t op, vc_comm_t comm,
                                 vc_request_t *req)
{
    VC_API_ENTER();
    return rsb(sbuf, rbuf, count, dtype, op, comm, req, FORM_PERSISTENT);
}

/* reduce_scatter: *total = sum of rcounts (VC_ERR_COUNT if it overflows) */
static int check_rs(const void **sbuf, void *rbuf, const size_t *rcounts, vc_dtype_t dt,
                    vc_op_t op, vc_comm_t comm, size_t *total)
{
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (!rcounts)
        return VC_ERR_ARG;
    *total = 0;
    for (int j = 0; j < comm->size; j++) {
        if (rcounts[j] > SIZE_MAX - *total)
            return VC_ERR_COUNT;
        *total += rcounts[j];
    }
    return check_reducing(sbuf, rbuf, *total, rcounts[comm->rank], dt, op, comm);
}

/* selection must agree on every rank: it sees the average block (the same
   everywhere), never this rank's own count */
static int rs(const void *sbuf, void *rbuf, const size_t *rcounts, vc_dtype_t dt,
              vc_op_t op, vc_comm_t comm, vc_request_t *req, int form)
{
    size_t total;
    int rc = check_rs(&sbuf, rbuf, rcounts, dt, op, comm, &total);
    if (rc)
        return rc;
    coll_vec_t v = {rcounts, NULL, NULL, NULL};
    return api_coll_run(COLL_REDUCE_SCATTER, comm, sbuf, rbuf, total / (size_t)comm->size,
                        dt, op, 0, &v, req, form);
}

int vc_reduce_scatter(const void *sbuf, void *rbuf, const size_t rcounts[],
                      vc_dtype_t dtype, vc_op_t op, vc_comm_t comm)
{
    VC_API_ENTER();
    return rs(sbuf, rbuf, rcounts, dtype, op, comm, NULL, FORM_BLOCKING);
}

int vc_ireduce_scatter(const void *sbuf, void *rbuf, const size_t rcounts[],
                       vc_dtype_t dtype, vc_op_t op, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return rs(sbuf, rbuf, rcounts, dtype, op, comm, req, FORM_NONBLOCKING);
}

int vc_reduce_scatter_init(const void *sbuf, void *rbuf, const size_t rcounts[],
                           vc_dtype_t dtype, vc_op_t op, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return rs(sbuf, rbuf, rcounts, dtype, op, comm, req, FORM_PERSISTENT);
}

static int scan_any(int kind, const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                    vc_op_t op, vc_comm_t comm, vc_request_t *req, int form)
{
    int rc = check_reducing(&sbuf, rbuf, count, count, dt, op, comm);
    return rc ? rc : api_coll_run(kind, comm, sbuf, rbuf, count, dt, op, 0, NULL, req, form);
}

int vc_scan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
            vc_comm_t comm)
{
    VC_API_ENTER();
    return scan_any(COLL_SCAN, sbuf, rbuf, count, dtype, op, comm, NULL, FORM_BLOCKING);
}

int vc_iscan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
             vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return scan_any(COLL_SCAN, sbuf, rbuf, count, dtype, op, comm, req, FORM_NONBLOCKING);
}

int vc_scan_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
                 vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return scan_any(COLL_SCAN, sbuf, rbuf, count, dtype, op, comm, req, FORM_PERSISTENT);
}

int vc_exscan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
              vc_comm_t comm)
{
    VC_API_ENTER();
    return scan_any(COLL_EXSCAN, sbuf, rbuf, count, dtype, op, comm, NULL, FORM_BLOCKING);
}

int vc_iexscan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
               vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return scan_any(COLL_EXSCAN, sbuf, rbuf, count, dtype, op, comm, req, FORM_NONBLOCKING);
}

int vc_exscan_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
                   vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return scan_any(COLL_EXSCAN, sbuf, rbuf, count, dtype, op, comm, req, FORM_PERSISTENT);
}
