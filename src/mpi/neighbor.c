/*
 * neighbor.c -- MPI's neighborhood collectives (allgather(v), alltoall(v);
 * blocking, non-blocking, persistent) on vcoll, over the neighbour graph
 * the communicator's twin carries (comm.c gives a Cartesian, graph or
 * distributed-graph communicator's twin the same graph). A communicator
 * whose twin has no graph falls back on every member alike, as does
 * alltoallw (per-edge datatypes stay with MPI; its blocking form is
 * intercepted only to keep vcoll's requests moving while it waits).
 *
 * Data is staged per rank as for the other collectives (stage.c): bytes
 * in each rank's own layout, so ranks whose types differ but whose
 * signatures match still meet.
 */
#include <stdlib.h>
#include "vcmpi.h"

/* the twin, its degrees, or why this call falls back */
static vc_comm_t twin(MPI_Comm comm, const char **why, int *in, int *out)
{
    vc_comm_t vc = vcmpi_comm(comm, why);
    *in = *out = 0;
    if (vc != VC_COMM_NULL && !*why &&
        (!vc_neighbors_count || vc_neighbors_count(vc, in, out) != VC_SUCCESS))
        *why = "no neighbour graph on vcoll's side";
    return vc;
}

static int allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                     MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    const void *vs = NULL;
    void *vrb = NULL;
    size_t b = 0;
    int in, out, err = 0;
    vc_comm_t vc = twin(comm, &why, &in, &out);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why)
        err = vcmpi_stage_all(&s, in, 1, sb, sc, st, rb, rc, rt, &vs, &vrb, &b);
    VCMPI_TRY(req ? FN_Ineighbor_allgather : FN_Neighbor_allgather,
              VCMPI_HAVE3(vc_neighbor_allgather, vc_ineighbor_allgather,
                          vc_neighbor_allgather_init),
              vc, why, comm, req, s, err,
              vc_ineighbor_allgather(vs, vrb, b, VC_BYTE, vc, &vr),
              vc_neighbor_allgather(vs, vrb, b, VC_BYTE, vc),
              vc_neighbor_allgather_init(vs, vrb, b, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ineighbor_allgather(sb, sc, st, rb, rc, rt, comm, R_),
                   PMPI_Neighbor_allgather(sb, sc, st, rb, rc, rt, comm),
                   VCMPI_PMPI(Neighbor_allgather, sb, sc, st, rb, rc, rt, comm));
}

static int alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                    MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    const void *vs = NULL;
    void *vrb = NULL;
    size_t b = 0;
    int in, out, err = 0;
    vc_comm_t vc = twin(comm, &why, &in, &out);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why)
        err = vcmpi_stage_all(&s, in, out, sb, sc, st, rb, rc, rt, &vs, &vrb, &b);
    VCMPI_TRY(req ? FN_Ineighbor_alltoall : FN_Neighbor_alltoall,
              VCMPI_HAVE3(vc_neighbor_alltoall, vc_ineighbor_alltoall,
                          vc_neighbor_alltoall_init),
              vc, why, comm, req, s, err,
              vc_ineighbor_alltoall(vs, vrb, b, VC_BYTE, vc, &vr),
              vc_neighbor_alltoall(vs, vrb, b, VC_BYTE, vc),
              vc_neighbor_alltoall_init(vs, vrb, b, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ineighbor_alltoall(sb, sc, st, rb, rc, rt, comm, R_),
                   PMPI_Neighbor_alltoall(sb, sc, st, rb, rc, rt, comm),
                   VCMPI_PMPI(Neighbor_alltoall, sb, sc, st, rb, rc, rt, comm));
}

/* byte counts and displacements: receive side (in blocks) then send side
   (out blocks) in one allocation, each side counts then displacements */
static size_t *vec_alloc(vcmpi_stage_t *s, int in, int out, int *err)
{
    size_t *v = vcmpi_stage_alloc(s, 2 * (size_t)(in + out + 1) * sizeof *v);
    if (!v)
        *err = MPI_ERR_NO_MEM;
    return v;
}

static int allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                      const int ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    const void *vs = NULL;
    void *vrb = NULL;
    size_t b = 0, *v = NULL;
    int in, out, err = 0;
    vc_comm_t vc = twin(comm, &why, &in, &out);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && (v = vec_alloc(&s, in, 0, &err))) {
        err = vcmpi_stage_vec(&s, in, rb, rcs, ds, rt, 0, 1, &vrb, v);
        if (!err && vcmpi_tinfo(st, &ti))
            err = MPI_ERR_TYPE;
        else if (!err && sc < 0)
            err = MPI_ERR_COUNT;
        else if (!err) {
            b = (size_t)sc * ti.size;
            err = vcmpi_stage_src(&s, sb, sc, st, &ti, &vs);
        }
    }
    const size_t *cnt = v, *dsp = v ? v + in : NULL;
    VCMPI_TRY(req ? FN_Ineighbor_allgatherv : FN_Neighbor_allgatherv,
              VCMPI_HAVE3(vc_neighbor_allgatherv, vc_ineighbor_allgatherv,
                          vc_neighbor_allgatherv_init),
              vc, why, comm, req, s, err,
              vc_ineighbor_allgatherv(vs, b, vrb, cnt, dsp, VC_BYTE, vc, &vr),
              vc_neighbor_allgatherv(vs, b, vrb, cnt, dsp, VC_BYTE, vc),
              vc_neighbor_allgatherv_init(vs, b, vrb, cnt, dsp, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ineighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, R_),
                   PMPI_Neighbor_allgatherv(sb, sc, st, rb, rcs, ds, rt, comm),
                   VCMPI_PMPI(Neighbor_allgatherv, sb, sc, st, rb, rcs, ds, rt, comm));
}

static int alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                     void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                     MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    void *vsb = NULL, *vrb = NULL;
    size_t *v = NULL;
    int in, out, err = 0;
    vc_comm_t vc = twin(comm, &why, &in, &out);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && (v = vec_alloc(&s, in, out, &err))) {
        err = vcmpi_stage_vec(&s, in, rb, rcs, rds, rt, 0, 1, &vrb, v);
        if (!err)
            err = vcmpi_stage_vec(&s, out, sb, scs, sds, st, 1, 0, &vsb, v + 2 * in);
    }
    const size_t *rc = v, *rd = v ? v + in : NULL, *sc = v ? v + 2 * in : NULL,
                 *sd = v ? v + 2 * in + out : NULL;
    VCMPI_TRY(req ? FN_Ineighbor_alltoallv : FN_Neighbor_alltoallv,
              VCMPI_HAVE3(vc_neighbor_alltoallv, vc_ineighbor_alltoallv,
                          vc_neighbor_alltoallv_init),
              vc, why, comm, req, s, err,
              vc_ineighbor_alltoallv(vsb, sc, sd, vrb, rc, rd, VC_BYTE, vc, &vr),
              vc_neighbor_alltoallv(vsb, sc, sd, vrb, rc, rd, VC_BYTE, vc),
              vc_neighbor_alltoallv_init(vsb, sc, sd, vrb, rc, rd, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req,
                   PMPI_Ineighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, R_),
                   PMPI_Neighbor_alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm),
                   VCMPI_PMPI(Neighbor_alltoallv, sb, scs, sds, st, rb, rcs, rds, rt, comm));
}

int MPI_Neighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                           MPI_Datatype rt, MPI_Comm comm)
{
    return allgather(sb, sc, st, rb, rc, rt, comm, NULL);
}

int MPI_Ineighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                            MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return allgather(sb, sc, st, rb, rc, rt, comm, req);
}

int MPI_Neighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb,
                            const int rcs[], const int ds[], MPI_Datatype rt, MPI_Comm comm)
{
    return allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, NULL);
}

int MPI_Ineighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb,
                             const int rcs[], const int ds[], MPI_Datatype rt, MPI_Comm comm,
                             MPI_Request *req)
{
    return allgatherv(sb, sc, st, rb, rcs, ds, rt, comm, req);
}

int MPI_Neighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                          MPI_Datatype rt, MPI_Comm comm)
{
    return alltoall(sb, sc, st, rb, rc, rt, comm, NULL);
}

int MPI_Ineighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                           MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return alltoall(sb, sc, st, rb, rc, rt, comm, req);
}

int MPI_Neighbor_alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                           void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                           MPI_Comm comm)
{
    return alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, NULL);
}

int MPI_Ineighbor_alltoallv(const void *sb, const int scs[], const int sds[],
                            MPI_Datatype st, void *rb, const int rcs[], const int rds[],
                            MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    return alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req);
}

/* the fallback alone, but one that keeps vcoll's requests moving */
int MPI_Neighbor_alltoallw(const void *sb, const int scs[], const MPI_Aint sds[],
                           const MPI_Datatype sts[], void *rb, const int rcs[],
                           const MPI_Aint rds[], const MPI_Datatype rts[], MPI_Comm comm)
{
    vcmpi_fallback(FN_Neighbor_alltoallw, "alltoallw: per-edge datatypes stay with MPI");
    VCMPI_FALLBACK(NULL,
                   PMPI_Ineighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, R_),
                   PMPI_Neighbor_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm),
                   MPI_ERR_INTERN);
}
