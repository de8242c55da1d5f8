/*
 * reduce.c -- the reductions: MPI_Reduce, Allreduce, Reduce_scatter(_block),
 * Scan, Exscan and their non-blocking forms. MPI requires the same datatype
 * and op on every rank here, so the take-or-fall-back choice agrees.
 */
#include <stdlib.h>
#include "vcmpi.h"

/* vcoll's type and op for this call, or why not */
static const char *map(int count, MPI_Datatype dt, MPI_Op op, vc_dtype_t *vdt, vc_op_t *vop)
{
    if (count < 0)
        return "negative count";
    const char *why = vcmpi_rdtype(dt, vdt);
    return why ? why : vcmpi_op(op, vop);
}

static int reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vc_dtype_t vdt;
    vc_op_t vop;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = map(count, dt, op, &vdt, &vop);
    VCMPI_TRY(req ? FN_Ireduce : FN_Reduce, VCMPI_HAVE(vc_reduce, vc_ireduce), vc, why, comm,
              req, NULL,
              vc_ireduce(VCMPI_CBUF(sb), rb, (size_t)count, vdt, vop, root, vc, &vr),
              vc_reduce(VCMPI_CBUF(sb), rb, (size_t)count, vdt, vop, root, vc));
    return req ? PMPI_Ireduce(sb, rb, count, dt, op, root, comm, req)
               : PMPI_Reduce(sb, rb, count, dt, op, root, comm);
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    return reduce(sb, rb, count, dt, op, root, comm, NULL);
}

int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    return reduce(sb, rb, count, dt, op, root, comm, req);
}

static int allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vc_dtype_t vdt;
    vc_op_t vop;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = map(count, dt, op, &vdt, &vop);
    VCMPI_TRY(req ? FN_Iallreduce : FN_Allreduce, VCMPI_HAVE(vc_allreduce, vc_iallreduce), vc,
              why, comm, req, NULL,
              vc_iallreduce(VCMPI_CBUF(sb), rb, (size_t)count, vdt, vop, vc, &vr),
              vc_allreduce(VCMPI_CBUF(sb), rb, (size_t)count, vdt, vop, vc));
    return req ? PMPI_Iallreduce(sb, rb, count, dt, op, comm, req)
               : PMPI_Allreduce(sb, rb, count, dt, op, comm);
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    return allreduce(sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    return allreduce(sb, rb, count, dt, op, comm, req);
}

static int reduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype dt,
                                MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vc_dtype_t vdt;
    vc_op_t vop;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = map(count, dt, op, &vdt, &vop);
    VCMPI_TRY(req ? FN_Ireduce_scatter_block : FN_Reduce_scatter_block,
              VCMPI_HAVE(vc_reduce_scatter_block, vc_ireduce_scatter_block), vc, why, comm,
              req, NULL,
              vc_ireduce_scatter_block(VCMPI_CBUF(sb), rb, (size_t)count, vdt, vop, vc, &vr),
              vc_reduce_scatter_block(VCMPI_CBUF(sb), rb, (size_t)count, vdt, vop, vc));
    return req ? PMPI_Ireduce_scatter_block(sb, rb, count, dt, op, comm, req)
               : PMPI_Reduce_scatter_block(sb, rb, count, dt, op, comm);
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_block(sb, rb, count, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter_block(sb, rb, count, dt, op, comm, req);
}

static int reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vc_dtype_t vdt;
    vc_op_t vop;
    size_t *cnt = NULL;
    int n = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !(why = map(0, dt, op, &vdt, &vop)) && !vc_comm_size(vc, &n))
        why = vcmpi_vec(n, rcounts, NULL, 1, &cnt);
    VCMPI_TRY(req ? FN_Ireduce_scatter : FN_Reduce_scatter,
              VCMPI_HAVE(vc_reduce_scatter, vc_ireduce_scatter), vc, why, comm, req, cnt,
              vc_ireduce_scatter(VCMPI_CBUF(sb), rb, cnt, vdt, vop, vc, &vr),
              vc_reduce_scatter(VCMPI_CBUF(sb), rb, cnt, vdt, vop, vc));
    return req ? PMPI_Ireduce_scatter(sb, rb, rcounts, dt, op, comm, req)
               : PMPI_Reduce_scatter(sb, rb, rcounts, dt, op, comm);
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sb, rb, rcounts, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter(sb, rb, rcounts, dt, op, comm, req);
}

/* scan and exscan differ only in the vcoll call */
static int scan(int ex, const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vc_dtype_t vdt;
    vc_op_t vop;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = map(count, dt, op, &vdt, &vop);
    const void *s = VCMPI_CBUF(sb);
    size_t c = (size_t)count;
    if (ex)
        VCMPI_TRY(req ? FN_Iexscan : FN_Exscan, VCMPI_HAVE(vc_exscan, vc_iexscan), vc, why,
                  comm, req, NULL, vc_iexscan(s, rb, c, vdt, vop, vc, &vr),
                  vc_exscan(s, rb, c, vdt, vop, vc));
    else
        VCMPI_TRY(req ? FN_Iscan : FN_Scan, VCMPI_HAVE(vc_scan, vc_iscan), vc, why, comm,
                  req, NULL, vc_iscan(s, rb, c, vdt, vop, vc, &vr),
                  vc_scan(s, rb, c, vdt, vop, vc));
    if (ex)
        return req ? PMPI_Iexscan(sb, rb, count, dt, op, comm, req)
                   : PMPI_Exscan(sb, rb, count, dt, op, comm);
    return req ? PMPI_Iscan(sb, rb, count, dt, op, comm, req)
               : PMPI_Scan(sb, rb, count, dt, op, comm);
}

int MPI_Scan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return scan(0, sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
              MPI_Request *req)
{
    return scan(0, sb, rb, count, dt, op, comm, req);
}

int MPI_Exscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return scan(1, sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iexscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    return scan(1, sb, rb, count, dt, op, comm, req);
}
