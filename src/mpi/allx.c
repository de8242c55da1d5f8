/*
 * allx.c -- everyone with everyone: MPI_Barrier, Allgather(v),
 * Alltoall(v) and their non-blocking forms, as bytes (any contiguous
 * datatype).
 */
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

static int barrier(MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    VCMPI_TRY(req ? FN_Ibarrier : FN_Barrier, VCMPI_HAVE(vc_barrier, vc_ibarrier), vc, why,
              comm, req, NULL, vc_ibarrier(vc, &vr), vc_barrier(vc));
    return req ? PMPI_Ibarrier(comm, req) : PMPI_Barrier(comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    return barrier(comm, NULL);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    return barrier(comm, req);
}

/* bytes per rank: from the send side, or the receive side when in place;
   the receive type is significant everywhere */
static const char *block(const void *sb, int sc, MPI_Datatype st, int rc, MPI_Datatype rt,
                         size_t *bytes)
{
    size_t rb;
    const char *why = vcmpi_bytes(rc, rt, &rb);
    if (!why && sb != MPI_IN_PLACE)
        why = vcmpi_bytes(sc, st, bytes);
    else
        *bytes = rb;
    return why;
}

static int allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                     MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = block(sb, sc, st, rc, rt, &b);
    VCMPI_TRY(req ? FN_Iallgather : FN_Allgather, VCMPI_HAVE(vc_allgather, vc_iallgather), vc,
              why, comm, req, NULL, vc_iallgather(VCMPI_CBUF(sb), rb, b, VC_BYTE, vc, &vr),
              vc_allgather(VCMPI_CBUF(sb), rb, b, VC_BYTE, vc));
    return req ? PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, req)
               : PMPI_Allgather(sb, sc, st, rb, rc, rt, comm);
}

int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  MPI_Comm comm)
{
    return allgather(sb, sc, st, rb, rc, rt, comm, NULL);
}

int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return allgather(sb, sc, st, rb, rc, rt, comm, req);
}

static int alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                    MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = block(sb, sc, st, rc, rt, &b);
    VCMPI_TRY(req ? FN_Ialltoall : FN_Alltoall, VCMPI_HAVE(vc_alltoall, vc_ialltoall), vc, why,
              comm, req, NULL, vc_ialltoall(VCMPI_CBUF(sb), rb, b, VC_BYTE, vc, &vr),
              vc_alltoall(VCMPI_CBUF(sb), rb, b, VC_BYTE, vc));
    return req ? PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, req)
               : PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
}

int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                 MPI_Comm comm)
{
    return alltoall(sb, sc, st, rb, rc, rt, comm, NULL);
}

int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *req)
{
    return alltoall(sb, sc, st, rb, rc, rt, comm, req);
}

/* counts and displacements of one side in bytes (n of each), or why not */
static const char *vside(vc_comm_t vc, const int *cnt, const int *dsp, MPI_Datatype dt,
                         size_t **out, int *n)
{
    size_t unit;
    const char *why = vcmpi_contig(dt, &unit);
    if (why)
        return why;
    if (vc_comm_size(vc, n))
        return "invalid communicator";
    return vcmpi_vec(*n, cnt, dsp, unit, out);
}

static int allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                      const int ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0, *v = NULL;
    int n = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !(why = vside(vc, rcs, ds, rt, &v, &n)) && sb != MPI_IN_PLACE)
        why = vcmpi_bytes(sc, st, &b);
    const size_t *cnt = v, *dsp = v ? v + n : NULL;
    VCMPI_TRY(req ? FN_Iallgatherv : FN_Allgatherv,
              VCMPI_HAVE(vc_allgatherv, vc_iallgatherv), vc, why, comm, req, v,
              vc_iallgatherv(VCMPI_CBUF(sb), b, rb, cnt, dsp, VC_BYTE, vc, &vr),
              vc_allgatherv(VCMPI_CBUF(sb), b, rb, cnt, dsp, VC_BYTE, vc));
    return req ? PMPI_Iallgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req)
               : PMPI_Allgatherv(sb, sc, st, rb, rcs, ds, rt, comm);
}

int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                   const int ds[], MPI_Datatype rt, MPI_Comm comm)
{
    return allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, NULL);
}

int MPI_Iallgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                    const int ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req);
}

/* both sides in one block: send counts, send displs, receive counts, receive
   displs (in place: the send side repeats the receive side) */
static int alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                     void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                     MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t *s = NULL, *r = NULL, *v = NULL;
    int n = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !(why = vside(vc, rcs, rds, rt, &r, &n)))
        why = sb == MPI_IN_PLACE ? vside(vc, rcs, rds, rt, &s, &n)
                                 : vside(vc, scs, sds, st, &s, &n);
    if (!why && vc && !(v = malloc((size_t)4 * n * sizeof *v)))
        why = "out of memory";
    if (v) {
        memcpy(v, s, 2 * (size_t)n * sizeof *v);
        memcpy(v + 2 * n, r, 2 * (size_t)n * sizeof *v);
    }
    free(s);
    free(r);
    const size_t *sc = v, *sd = v ? v + n : NULL, *rc = v ? v + 2 * n : NULL,
                 *rd = v ? v + 3 * n : NULL;
    VCMPI_TRY(req ? FN_Ialltoallv : FN_Alltoallv, VCMPI_HAVE(vc_alltoallv, vc_ialltoallv), vc,
              why, comm, req, v,
              vc_ialltoallv(VCMPI_CBUF(sb), sc, sd, rb, rc, rd, VC_BYTE, vc, &vr),
              vc_alltoallv(VCMPI_CBUF(sb), sc, sd, rb, rc, rd, VC_BYTE, vc));
    return req ? PMPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req)
               : PMPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm);
}

int MPI_Alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
                  const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    return alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, NULL);
}

int MPI_Ialltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                   void *rb, const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request *req)
{
    return alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req);
}
