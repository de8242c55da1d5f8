/*
 * allx.c -- everyone with everyone: MPI_Barrier, Allgather(v),
 * Alltoall(v) and their non-blocking forms, as bytes staged per rank in
 * whatever layout it has (stage.c); Alltoallw always falls back (per-pair
 * types: nothing for vcoll to gain, and it must not split ranks).
 */
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

static int barrier(MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t st;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&st, comm, req != NULL);
    VCMPI_TRY(req ? FN_Ibarrier : FN_Barrier,
              VCMPI_HAVE3(vc_barrier, vc_ibarrier, vc_barrier_init), vc, why, comm, req, st,
              0, vc_ibarrier(vc, &vr), vc_barrier(vc), vc_barrier_init(vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ibarrier(comm, R_), PMPI_Barrier(comm),
                   VCMPI_PMPI(Barrier, comm));
}

int MPI_Barrier(MPI_Comm comm)
{
    return barrier(comm, NULL);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    return barrier(comm, req);
}

/* Allgather and alltoall: every rank's block b bytes; the receive side n
 * blocks (its own input too when in place: loaded), the send side one
 * block (allgather) or n (alltoall). */
int vcmpi_stage_all(vcmpi_stage_t *s, int n, int sblocks, const void *sb, int sc,
                    MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, const void **vs,
                    void **vr, size_t *b)
{
    vcmpi_tinfo_t ti;
    int err = 0;
    if (vcmpi_tinfo(rt, &ti))
        return MPI_ERR_TYPE;
    if (rc < 0)
        return MPI_ERR_COUNT;
    *b = (size_t)rc * ti.size;
    *vs = VC_IN_PLACE;
    if ((err = vcmpi_stage_dst1(s, rb, n * rc, rt, &ti, sb == MPI_IN_PLACE, vr)))
        return err;
    if (sb == MPI_IN_PLACE)
        return MPI_SUCCESS;
    if (vcmpi_tinfo(st, &ti))
        return MPI_ERR_TYPE;
    if (sc < 0)
        return MPI_ERR_COUNT;
    return vcmpi_stage_src(s, sb, sblocks * sc, st, &ti, vs);
}

static int allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                     MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    const void *vs = NULL;
    void *vrb = NULL;
    size_t b = 0;
    int n = 0, me = -1, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !vcmpi_rank_size(vc, &me, &n)) {
        if (vcmpi_alias_block(sb, sc, st, rb, rc, rt, me))
            why = VCMPI_ALIASED;
        else
            err = vcmpi_stage_all(&s, n, 1, sb, sc, st, rb, rc, rt, &vs, &vrb, &b);
    }
    VCMPI_TRY(req ? FN_Iallgather : FN_Allgather,
              VCMPI_HAVE3(vc_allgather, vc_iallgather, vc_allgather_init), vc, why, comm,
              req, s, err, vc_iallgather(vs, vrb, b, VC_BYTE, vc, &vr),
              vc_allgather(vs, vrb, b, VC_BYTE, vc),
              vc_allgather_init(vs, vrb, b, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, R_),
                   PMPI_Allgather(sb, sc, st, rb, rc, rt, comm),
                   VCMPI_PMPI(Allgather, sb, sc, st, rb, rc, rt, comm));
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
    vcmpi_stage_t s;
    const void *vs = NULL;
    void *vrb = NULL;
    size_t b = 0;
    int n = 0, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !why && st == rt && sc == rc && sc != 0 && vcmpi_aliased(sb, rb))
        why = VCMPI_ALIASED;
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !vcmpi_rank_size(vc, NULL, &n))
        err = vcmpi_stage_all(&s, n, n, sb, sc, st, rb, rc, rt, &vs, &vrb, &b);
    VCMPI_TRY(req ? FN_Ialltoall : FN_Alltoall,
              VCMPI_HAVE3(vc_alltoall, vc_ialltoall, vc_alltoall_init), vc, why, comm, req,
              s, err, vc_ialltoall(vs, vrb, b, VC_BYTE, vc, &vr),
              vc_alltoall(vs, vrb, b, VC_BYTE, vc),
              vc_alltoall_init(vs, vrb, b, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, R_),
                   PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm),
                   VCMPI_PMPI(Alltoall, sb, sc, st, rb, rc, rt, comm));
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

static int allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                      const int ds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    const void *vs = VC_IN_PLACE;
    void *vrb = NULL;
    size_t b = 0, *v = NULL;
    int n = 0, me = -1, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&s, comm, req != NULL);
    int go = vc && !why && !vcmpi_rank_size(vc, &me, &n);
    if (go && vcmpi_alias_vblock(sb, sc, st, rb, rcs, ds, rt, me))
        why = VCMPI_ALIASED, go = 0;
    if (go) {
        if (!(v = vcmpi_stage_alloc(&s, 2 * (size_t)(n ? n : 1) * sizeof *v)))
            err = MPI_ERR_NO_MEM;
        else
            err = vcmpi_stage_vec(&s, n, rb, rcs, ds, rt, sb == MPI_IN_PLACE, 1, &vrb, v);
        if (!err && sb != MPI_IN_PLACE) {
            if (vcmpi_tinfo(st, &ti))
                err = MPI_ERR_TYPE;
            else if (sc < 0)
                err = MPI_ERR_COUNT;
            else {
                b = (size_t)sc * ti.size;
                err = vcmpi_stage_src(&s, sb, sc, st, &ti, &vs);
            }
        }
    }
    const size_t *cnt = v, *dsp = v ? v + n : NULL;
    VCMPI_TRY(req ? FN_Iallgatherv : FN_Allgatherv,
              VCMPI_HAVE3(vc_allgatherv, vc_iallgatherv, vc_allgatherv_init), vc, why, comm,
              req, s, err, vc_iallgatherv(vs, b, vrb, cnt, dsp, VC_BYTE, vc, &vr),
              vc_allgatherv(vs, b, vrb, cnt, dsp, VC_BYTE, vc),
              vc_allgatherv_init(vs, b, vrb, cnt, dsp, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Iallgatherv(sb, sc, st, rb, rcs, ds, rt, comm, R_),
                   PMPI_Allgatherv(sb, sc, st, rb, rcs, ds, rt, comm),
                   VCMPI_PMPI(Allgatherv, sb, sc, st, rb, rcs, ds, rt, comm));
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
   displs (in place: the receive side is the input too, and vcoll is told
   so) */
static int alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                     void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                     MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    void *vsb = VC_IN_PLACE, *vrb = NULL;
    size_t *v = NULL;
    int n = 0, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !why && st == rt && scs == rcs && vcmpi_aliased(sb, rb))
        why = VCMPI_ALIASED;
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !vcmpi_rank_size(vc, NULL, &n)) {
        int inplace = sb == MPI_IN_PLACE;
        if (!(v = vcmpi_stage_alloc(&s, 4 * (size_t)(n ? n : 1) * sizeof *v)))
            err = MPI_ERR_NO_MEM;
        else
            err = vcmpi_stage_vec(&s, n, rb, rcs, rds, rt, inplace, 1, &vrb, v + 2 * n);
        if (!err && !inplace)
            err = vcmpi_stage_vec(&s, n, sb, scs, sds, st, 1, 0, &vsb, v);
        else if (!err)
            memcpy(v, v + 2 * n, 2 * (size_t)n * sizeof *v);
    }
    const size_t *sc = v, *sd = v ? v + n : NULL, *rc = v ? v + 2 * n : NULL,
                 *rd = v ? v + 3 * n : NULL;
    VCMPI_TRY(req ? FN_Ialltoallv : FN_Alltoallv,
              VCMPI_HAVE3(vc_alltoallv, vc_ialltoallv, vc_alltoallv_init), vc, why, comm,
              req, s, err, vc_ialltoallv(vsb, sc, sd, vrb, rc, rd, VC_BYTE, vc, &vr),
              vc_alltoallv(vsb, sc, sd, vrb, rc, rd, VC_BYTE, vc),
              vc_alltoallv_init(vsb, sc, sd, vrb, rc, rd, VC_BYTE, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, R_),
                   PMPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm),
                   VCMPI_PMPI(Alltoallv, sb, scs, sds, st, rb, rcs, rds, rt, comm));
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

/* the fallback alone, but one that keeps vcoll's requests moving */
int MPI_Alltoallw(const void *sb, const int scs[], const int sds[], const MPI_Datatype sts[],
                  void *rb, const int rcs[], const int rds[], const MPI_Datatype rts[],
                  MPI_Comm comm)
{
    vcmpi_fallback(FN_Alltoallw, "alltoallw: per-pair datatypes stay with MPI");
    VCMPI_FALLBACK(NULL, PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, R_),
                   PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm),
                   VCMPI_PMPI(Alltoallw, sb, scs, sds, sts, rb, rcs, rds, rts, comm));
}
