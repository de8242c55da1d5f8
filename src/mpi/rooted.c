/*
 * rooted.c -- data movement to or from a root: MPI_Bcast, Gather(v),
 * Scatter(v) and their non-blocking forms. vcoll moves bytes; each rank
 * stages its own side in whatever layout it has (stage.c), with sizes from
 * the arguments MPI says are significant on this rank (the root's receive
 * side, the others' send side, and the reverse for scatter). Every datatype
 * goes to vcoll, so the ranks never split between vcoll and MPI.
 */
#include <stdlib.h>
#include "vcmpi.h"

/* the type facts, or an error already in *err */
static int tinfo(MPI_Datatype dt, int count, vcmpi_tinfo_t *ti, int *err)
{
    if (*err)
        return *err;
    if (vcmpi_tinfo(dt, ti))
        *err = MPI_ERR_TYPE;
    else if (count < 0)
        *err = MPI_ERR_COUNT;
    return *err;
}

static int bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t st;
    vcmpi_tinfo_t ti;
    void *b = buf;
    int err = 0, me = -1;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&st, comm, req != NULL);
    if (vc && !why && !tinfo(dt, count, &ti, &err) && !vcmpi_rank_size(vc, &me, NULL))
        err = vcmpi_stage_dst1(&st, buf, count, dt, &ti, me == root, &b);
    size_t n = err ? 0 : (size_t)count * ti.size;
    VCMPI_TRY(req ? FN_Ibcast : FN_Bcast, VCMPI_HAVE3(vc_bcast, vc_ibcast, vc_bcast_init),
              vc, why, comm, req, st, err, vc_ibcast(b, n, VC_BYTE, root, vc, &vr),
              vc_bcast(b, n, VC_BYTE, root, vc),
              vc_bcast_init(b, n, VC_BYTE, root, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ibcast(buf, count, dt, root, comm, R_),
                   PMPI_Bcast(buf, count, dt, root, comm),
                   VCMPI_PMPI(Bcast, buf, count, dt, root, comm));
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

/* Gather and scatter: gather = 1 moves the many side (the root's rb/rc/rt)
 * in, scatter = 0 out. one/oc/ot is every rank's own block (sb of gather,
 * rb of scatter; MPI_IN_PLACE at the root), many/mc/mt the root's. Writes
 * where vcoll reads and writes and the bytes per rank. */
static int stage_rooted(vcmpi_stage_t *st, int gather, int at_root, int n,
                        const void *one, int oc, MPI_Datatype ot, const void *many, int mc,
                        MPI_Datatype mt, const void **vone, void **vmany, size_t *b)
{
    vcmpi_tinfo_t ti, tm;
    int err = 0;
    *vone = VC_IN_PLACE;
    *vmany = NULL;
    if (at_root && !tinfo(mt, mc, &tm, &err)) {
        *b = (size_t)mc * tm.size;
        void *out;
        /* in place: the root's own block is already in the many buffer */
        int load = gather && one == MPI_IN_PLACE;
        if (gather)
            err = vcmpi_stage_dst1(st, (void *)many, n * mc, mt, &tm, load, &out);
        else
            err = vcmpi_stage_src(st, many, n * mc, mt, &tm, (const void **)&out);
        *vmany = out;
    }
    if (!err && one != MPI_IN_PLACE && !tinfo(ot, oc, &ti, &err)) {
        if (!at_root)
            *b = (size_t)oc * ti.size;
        if (gather) {
            err = vcmpi_stage_src(st, one, oc, ot, &ti, vone);
        } else {
            void *o;
            err = vcmpi_stage_dst1(st, (void *)one, oc, ot, &ti, 0, &o);
            *vone = o;
        }
    }
    return err;
}

static int gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    const void *vs = NULL;
    void *vr_ = NULL;
    size_t b = 0;
    int me = -1, n = 0, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !vcmpi_rank_size(vc, &me, &n)) {
        if (me == root && vcmpi_alias_block(sb, sc, st, rb, rc, rt, me))
            why = VCMPI_ALIASED;
        else
            err = stage_rooted(&s, 1, me == root, n, sb, sc, st, rb, rc, rt, &vs, &vr_, &b);
    }
    VCMPI_TRY(req ? FN_Igather : FN_Gather,
              VCMPI_HAVE3(vc_gather, vc_igather, vc_gather_init), vc, why, comm, req, s,
              err, vc_igather(vs, vr_, b, VC_BYTE, root, vc, &vr),
              vc_gather(vs, vr_, b, VC_BYTE, root, vc),
              vc_gather_init(vs, vr_, b, VC_BYTE, root, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, R_),
                   PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm),
                   VCMPI_PMPI(Gather, sb, sc, st, rb, rc, rt, root, comm));
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
    vcmpi_stage_t s;
    const void *vone = NULL;
    void *vmany = NULL;
    size_t b = 0;
    int me = -1, n = 0, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !vcmpi_rank_size(vc, &me, &n)) {
        if (me == root && vcmpi_alias_block(rb, rc, rt, sb, sc, st, me))
            why = VCMPI_ALIASED;
        else
            err = stage_rooted(&s, 0, me == root, n, rb, rc, rt, sb, sc, st, &vone, &vmany,
                               &b);
    }
    void *vrb = (void *)vone;
    VCMPI_TRY(req ? FN_Iscatter : FN_Scatter,
              VCMPI_HAVE3(vc_scatter, vc_iscatter, vc_scatter_init), vc, why, comm, req, s,
              err, vc_iscatter(vmany, vrb, b, VC_BYTE, root, vc, &vr),
              vc_scatter(vmany, vrb, b, VC_BYTE, root, vc),
              vc_scatter_init(vmany, vrb, b, VC_BYTE, root, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, R_),
                   PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm),
                   VCMPI_PMPI(Scatter, sb, sc, st, rb, rc, rt, root, comm));
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

/* the root's vector side, counts and displacements in one block the stage
   owns */
static int stage_vec(vcmpi_stage_t *s, int n, const void *buf, const int *cnt, const int *dsp,
                     MPI_Datatype dt, int in, int out, void **vbuf, size_t **vcnt,
                     size_t **vdsp)
{
    size_t *v = vcmpi_stage_alloc(s, 2 * (size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM;
    *vcnt = v;
    *vdsp = v + n;
    return vcmpi_stage_vec(s, n, buf, cnt, dsp, dt, in, out, vbuf, v);
}

static int gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                   const int ds[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    const void *vs = VC_IN_PLACE;
    void *vrb = NULL;
    size_t b = 0, *vc_cnt = NULL, *vc_dsp = NULL;
    int me = -1, n = 0, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&s, comm, req != NULL);
    int go = vc && !why && !vcmpi_rank_size(vc, &me, &n);
    if (go && me == root && vcmpi_alias_vblock(sb, sc, st, rb, rcs, ds, rt, me))
        why = VCMPI_ALIASED, go = 0;
    if (go) {
        if (sb != MPI_IN_PLACE && !tinfo(st, sc, &ti, &err)) {
            b = (size_t)sc * ti.size;
            err = vcmpi_stage_src(&s, sb, sc, st, &ti, &vs);
        }
        if (!err && me == root)
            err = stage_vec(&s, n, rb, rcs, ds, rt, sb == MPI_IN_PLACE, 1, &vrb, &vc_cnt,
                            &vc_dsp);
    }
    VCMPI_TRY(req ? FN_Igatherv : FN_Gatherv,
              VCMPI_HAVE3(vc_gatherv, vc_igatherv, vc_gatherv_init), vc, why, comm, req, s,
              err, vc_igatherv(vs, b, vrb, vc_cnt, vc_dsp, VC_BYTE, root, vc, &vr),
              vc_gatherv(vs, b, vrb, vc_cnt, vc_dsp, VC_BYTE, root, vc),
              vc_gatherv_init(vs, b, vrb, vc_cnt, vc_dsp, VC_BYTE, root, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Igatherv(sb, sc, st, rb, rcs, ds, rt, root, comm, R_),
                   PMPI_Gatherv(sb, sc, st, rb, rcs, ds, rt, root, comm),
                   VCMPI_PMPI(Gatherv, sb, sc, st, rb, rcs, ds, rt, root, comm));
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
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    void *vrb = VC_IN_PLACE, *vsb = NULL;
    size_t b = 0, *vc_cnt = NULL, *vc_dsp = NULL;
    int me = -1, n = 0, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    vcmpi_stage_init(&s, comm, req != NULL);
    int go = vc && !why && !vcmpi_rank_size(vc, &me, &n);
    if (go && me == root && vcmpi_alias_vblock(rb, rc, rt, sb, scs, ds, st, me))
        why = VCMPI_ALIASED, go = 0;
    if (go) {
        if (rb != MPI_IN_PLACE && !tinfo(rt, rc, &ti, &err)) {
            b = (size_t)rc * ti.size;
            err = vcmpi_stage_dst1(&s, rb, rc, rt, &ti, 0, &vrb);
        }
        if (!err && me == root)
            err = stage_vec(&s, n, sb, scs, ds, st, 1, 0, &vsb, &vc_cnt, &vc_dsp);
    }
    VCMPI_TRY(req ? FN_Iscatterv : FN_Scatterv,
              VCMPI_HAVE3(vc_scatterv, vc_iscatterv, vc_scatterv_init), vc, why, comm, req,
              s, err, vc_iscatterv(vsb, vc_cnt, vc_dsp, vrb, b, VC_BYTE, root, vc, &vr),
              vc_scatterv(vsb, vc_cnt, vc_dsp, vrb, b, VC_BYTE, root, vc),
              vc_scatterv_init(vsb, vc_cnt, vc_dsp, vrb, b, VC_BYTE, root, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Iscatterv(sb, scs, ds, st, rb, rc, rt, root, comm, R_),
                   PMPI_Scatterv(sb, scs, ds, st, rb, rc, rt, root, comm),
                   VCMPI_PMPI(Scatterv, sb, scs, ds, st, rb, rc, rt, root, comm));
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
