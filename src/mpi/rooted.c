/*
 * rooted.c -- data movement to or from a root: MPI_Bcast, Gather(v),
 * Scatter(v) and their non-blocking forms. vcoll moves the data as bytes,
 * so any contiguous datatype goes; sizes come from the arguments MPI says
 * are significant on this rank (the root's receive side, the others' send
 * side, and the reverse for scatter).
 */
#include <stdlib.h>
#include "vcmpi.h"

static int bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc)
        why = vcmpi_bytes(count, dt, &b);
    VCMPI_TRY(req ? FN_Ibcast : FN_Bcast, VCMPI_HAVE(vc_bcast, vc_ibcast), vc, why, comm, req,
              NULL, vc_ibcast(buf, b, VC_BYTE, root, vc, &vr),
              vc_bcast(buf, b, VC_BYTE, root, vc));
    return req ? PMPI_Ibcast(buf, count, dt, root, comm, req)
               : PMPI_Bcast(buf, count, dt, root, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return bcast(buf, count, dt, root, comm, NULL);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
               MPI_Request *req)
{
    return bcast(buf, count, dt, root, comm, req);
}

/* bytes per rank of a gather (scatter: swap the sides); at the root the
   receive type must be contiguous too */
static const char *block(int at_root, const void *mybuf, int mycount, MPI_Datatype mytype,
                         int rootcount, MPI_Datatype roottype, size_t *bytes)
{
    size_t b2;
    if (!at_root)
        return vcmpi_bytes(mycount, mytype, bytes);
    const char *why = vcmpi_bytes(rootcount, roottype, bytes);
    if (!why && mybuf != MPI_IN_PLACE)
        why = vcmpi_bytes(mycount, mytype, &b2);
    return why;
}

static int gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0;
    int me = -1;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !vc_comm_rank(vc, &me))
        why = block(me == root, sb, sc, st, rc, rt, &b);
    VCMPI_TRY(req ? FN_Igather : FN_Gather, VCMPI_HAVE(vc_gather, vc_igather), vc, why, comm,
              req, NULL, vc_igather(VCMPI_CBUF(sb), rb, b, VC_BYTE, root, vc, &vr),
              vc_gather(VCMPI_CBUF(sb), rb, b, VC_BYTE, root, vc));
    return req ? PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, req)
               : PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm);
}

int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
               int root, MPI_Comm comm)
{
    return gather(sb, sc, st, rb, rc, rt, root, comm, NULL);
}

int MPI_Igather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                int root, MPI_Comm comm, MPI_Request *req)
{
    return gather(sb, sc, st, rb, rc, rt, root, comm, req);
}

static int scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                   int root, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0;
    int me = -1;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !vc_comm_rank(vc, &me))
        why = block(me == root, rb, rc, rt, sc, st, &b);
    VCMPI_TRY(req ? FN_Iscatter : FN_Scatter, VCMPI_HAVE(vc_scatter, vc_iscatter), vc, why,
              comm, req, NULL, vc_iscatter(sb, VCMPI_BUF(rb), b, VC_BYTE, root, vc, &vr),
              vc_scatter(sb, VCMPI_BUF(rb), b, VC_BYTE, root, vc));
    return req ? PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, req)
               : PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm);
}

int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                int root, MPI_Comm comm)
{
    return scatter(sb, sc, st, rb, rc, rt, root, comm, NULL);
}

int MPI_Iscatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm, MPI_Request *req)
{
    return scatter(sb, sc, st, rb, rc, rt, root, comm, req);
}

/* the vector side at the root: counts and displacements in bytes */
static const char *vside(vc_comm_t vc, const int *cnt, const int *dsp, MPI_Datatype dt,
                         size_t **out)
{
    size_t unit;
    int n;
    const char *why = vcmpi_contig(dt, &unit);
    if (why)
        return why;
    if (vc_comm_size(vc, &n))
        return "invalid communicator";
    return vcmpi_vec(n, cnt, dsp, unit, out);
}

static int gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                   const int ds[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0, *v = NULL;
    int me = -1, n = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !vc_comm_rank(vc, &me) && !vc_comm_size(vc, &n)) {
        if (sb != MPI_IN_PLACE || me != root)
            why = vcmpi_bytes(sc, st, &b);
        if (!why && me == root)
            why = vside(vc, rcs, ds, rt, &v);
    }
    const size_t *vc_cnt = v, *vc_dsp = v ? v + n : NULL;
    VCMPI_TRY(req ? FN_Igatherv : FN_Gatherv, VCMPI_HAVE(vc_gatherv, vc_igatherv), vc, why,
              comm, req, v,
              vc_igatherv(VCMPI_CBUF(sb), b, rb, vc_cnt, vc_dsp, VC_BYTE, root, vc, &vr),
              vc_gatherv(VCMPI_CBUF(sb), b, rb, vc_cnt, vc_dsp, VC_BYTE, root, vc));
    return req ? PMPI_Igatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, req)
               : PMPI_Gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm);
}

int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                const int ds[], MPI_Datatype rt, int root, MPI_Comm comm)
{
    return gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, NULL);
}

int MPI_Igatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                 const int ds[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    return gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, req);
}

static int scatterv(const void *sb, const int scs[], const int ds[], MPI_Datatype st, void *rb,
                    int rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    size_t b = 0, *v = NULL;
    int me = -1, n = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !vc_comm_rank(vc, &me) && !vc_comm_size(vc, &n)) {
        if (rb != MPI_IN_PLACE || me != root)
            why = vcmpi_bytes(rc, rt, &b);
        if (!why && me == root)
            why = vside(vc, scs, ds, st, &v);
    }
    const size_t *vc_cnt = v, *vc_dsp = v ? v + n : NULL;
    VCMPI_TRY(req ? FN_Iscatterv : FN_Scatterv, VCMPI_HAVE(vc_scatterv, vc_iscatterv), vc, why,
              comm, req, v,
              vc_iscatterv(sb, vc_cnt, vc_dsp, VCMPI_BUF(rb), b, VC_BYTE, root, vc, &vr),
              vc_scatterv(sb, vc_cnt, vc_dsp, VCMPI_BUF(rb), b, VC_BYTE, root, vc));
    return req ? PMPI_Iscatterv(sb, scs, ds, st, rb, rc, rt, root, comm, req)
               : PMPI_Scatterv(sb, scs, ds, st, rb, rc, rt, root, comm);
}

int MPI_Scatterv(const void *sb, const int scs[], const int ds[], MPI_Datatype st, void *rb,
                 int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    return scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, NULL);
}

int MPI_Iscatterv(const void *sb, const int scs[], const int ds[], MPI_Datatype st, void *rb,
                  int rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    return scatterv(sb, scs, ds, st, rb, rc, rt, root, comm, req);
}
