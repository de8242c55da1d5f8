/*
 * reduce.c -- the reductions: MPI_Reduce, Allreduce, Reduce_scatter(_block),
 * Scan, Exscan and their non-blocking forms. MPI requires the same datatype
 * and op on every rank here, so the take-or-fall-back choice, which looks
 * at those alone, agrees. Predefined types reduce where they lie; a derived
 * type built from one of them is packed, reduced as that type, unpacked.
 *
 * Any other op (MPI_Op_create's, from C or Fortran) or type vcoll cannot
 * reduce itself (MPI_LONG_DOUBLE, MPI_2DOUBLE_PRECISION, MPI_SHORT_INT, a
 * strided vector, ...) still runs on vcoll: each element is an opaque vcoll
 * element of the type's data bytes (never split by the algorithms) and
 * vcoll's op calls the MPI's own PMPI_Reduce_local on whole elements, which
 * calls the user's function the right way for its language. A type with
 * holes travels packed like any other; its op unpacks the operands into the
 * type's layout in bounded chunks first. Non-commutative ops keep rank
 * order.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

/* the context of a vcoll op that runs an MPI op (freed with the call) */
typedef struct mpi_op_ctx {
    MPI_Op op;
    MPI_Datatype dt;
    MPI_Aint lb;             /* where MPI's element starts before its data */
    size_t size;             /* bytes vcoll moves per element */
    /* A type with holes travels packed (vcoll only moves the data bytes),
       but the MPI op wants its operands in the type's own layout: a chunk
       of per elements of each operand is unpacked into a and b, the op
       runs there, and the result is packed back. */
    vcmpi_tinfo_t ti;        /* the layout; ti.flat points at the copy
                                behind this struct (or is NULL: MPI_Pack) */
    size_t per;
    char *a, *b;             /* NULL: no holes, the op runs in place */
} mpi_op_ctx_t;

/* scratch bytes per operand for the chunks of a type with holes */
#define HOLES_SCRATCH ((MPI_Aint)64 << 10)

static void run_mpi_op(const void *in, void *inout, size_t count, vc_dtype_t vt, void *ctx)
{
    const mpi_op_ctx_t *c = ctx;
    (void)vt;
    if (c->a) {
        char *ua = c->a - c->lb, *ub = c->b - c->lb;
        for (size_t done = 0; done < count;) {
            size_t k = count - done < c->per ? count - done : c->per;
            const char *pin = (const char *)in + done * c->size;
            char *pio = (char *)inout + done * c->size;
            vcmpi_unpack(ua, (int)k, c->dt, &c->ti, pin);
            vcmpi_unpack(ub, (int)k, c->dt, &c->ti, pio);
            PMPI_Reduce_local(ua, ub, (int)k, c->dt, c->op);
            vcmpi_pack(ub, (int)k, c->dt, &c->ti, pio);
            done += k;
        }
        return;
    }
    const char *a = (const char *)in - c->lb;
    char *b = (char *)inout - c->lb;
    while (count) {
        int k = count > INT_MAX ? INT_MAX : (int)count;
        PMPI_Reduce_local(a, b, k, c->dt, c->op);
        a += (size_t)k * c->size;
        b += (size_t)k * c->size;
        count -= (size_t)k;
    }
}

/* the context, and for a type with holes its layout and scratch in the
   same block (one of the stage's frees); NULL when out of memory */
static mpi_op_ctx_t *op_ctx(vcmpi_stage_t *s, const vcmpi_tinfo_t *ti, MPI_Aint textent)
{
    size_t nseg = ti->contig || !ti->flat ? 0 : ti->flat->n;
    size_t head = sizeof(mpi_op_ctx_t), per = 0, span = 0;
    if (!ti->contig) {
        head += sizeof(vcmpi_flat_t) + nseg * sizeof(vcmpi_seg_t);
        head = (head + 63) & ~(size_t)63;
        /* whole elements, as many as fit the scratch, at least one */
        per = textent >= HOLES_SCRATCH ? 1 : (size_t)((HOLES_SCRATCH - textent) / ti->extent) + 1;
        span = (size_t)((MPI_Aint)(per - 1) * ti->extent + textent);
        span = (span + 63) & ~(size_t)63;
    }
    char *blk = vcmpi_stage_alloc(s, head + 2 * span);
    if (!blk)
        return NULL;
    mpi_op_ctx_t *c = (mpi_op_ctx_t *)blk;
    memset(c, 0, sizeof *c);
    if (!ti->contig) {
        c->ti = *ti;
        if (ti->flat) {
            /* a private copy: the program may free the type (and its cached
               layout) while a non-blocking call still runs the op */
            vcmpi_flat_t *f = (vcmpi_flat_t *)(blk + sizeof *c);
            f->refs = 1;
            f->n = nseg;
            memcpy(f->seg, ti->flat->seg, nseg * sizeof f->seg[0]);
            c->ti.flat = f;
        }
        c->per = per;
        c->a = blk + head;
        c->b = blk + head + span;
        /* the op may look at holes it does not use: give it defined bytes */
        memset(c->a, 0, 2 * span);
    }
    return c;
}

/* Every rank decides alike (op and type only); the vcoll op itself is
   made per call, so running out of vcoll's op slots is this rank's error
   (MPI_ERR_NO_MEM), not a fallback others would not take. */
static const char *map_mpi_op(MPI_Datatype dt, MPI_Op op, vcmpi_tinfo_t *ti, vc_op_t *vop,
                              vcmpi_stage_t *s, int *err)
{
    int commute = 1;
    MPI_Aint tlb, textent = 0;
    if (!vc_op_create_ctx || !vc_dtype_opaque)
        return "user ops not in this libvcoll";
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return "an RMA-only op";
    if (ti->size == 0 || ti->size > VC_DTYPE_OPAQUE_MAX)
        return "an MPI op on an empty or huge element";
    /* a type with holes: elements laid out backwards or on top of each
       other are rare enough for MPI to keep */
    if (!ti->contig) {
        if (PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS) {
            *err = MPI_ERR_TYPE;
            return NULL;
        }
        if (ti->extent <= 0 || textent <= 0)
            return "an MPI op on a type whose extent is not positive";
    }
    if (PMPI_Op_commutative(op, &commute) != MPI_SUCCESS) {
        *err = MPI_ERR_OP;
        return NULL;
    }
    mpi_op_ctx_t *c = op_ctx(s, ti, textent);
    if (!c || vc_dtype_opaque(ti->size, &ti->vtype) != VC_SUCCESS) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    c->op = op;
    c->lb = ti->true_lb;
    c->size = ti->size;
    if ((*err = vcmpi_stage_keep_type(s, dt, &c->dt)))
        return NULL;
    /* MPI lets the program free the op right after starting a
       non-blocking call: the op must outlive the call */
    if (s->nonblocking) {
        if ((*err = vcmpi_op_hold(op)))
            return NULL;
        s->held_op = op;
        s->held = 1;
    }
    if (vc_op_create_ctx(run_mpi_op, c, commute, vop) != VC_SUCCESS) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->vop = *vop;
    s->has_vop = 1;
    ti->nv = 1;
    ti->direct = 0;
    return NULL;
}

/* vcoll's type (in ti->vtype), op and element count for count elements of
   dt, or why not (a refusal every rank makes alike); *err for an invalid
   argument or this rank's own failure */
static const char *map(int count, MPI_Datatype dt, MPI_Op op, vcmpi_tinfo_t *ti, vc_op_t *vop,
                       size_t *n, vcmpi_stage_t *s, int *err)
{
    if (vcmpi_tinfo(dt, ti)) {
        *err = MPI_ERR_TYPE;
        return NULL;
    }
    if (count < 0) {
        *err = MPI_ERR_COUNT;
        return NULL;
    }
    const char *why = ti->red ? vcmpi_op(op, ti, vop) : "not a vcoll reduction type";
    if (why && (why = map_mpi_op(dt, op, ti, vop, s, err)))
        return why;
    *n = (size_t)count * ti->nv;
    return NULL;
}

/* in: count elements vcoll reads (MPI_IN_PLACE passes through); out: where
   it writes count elements (load: out is the input too) */
static int stage_in(vcmpi_stage_t *s, const void *in, int count, MPI_Datatype dt,
                    const vcmpi_tinfo_t *ti, const void **vin)
{
    if (in == MPI_IN_PLACE || ti->direct) {
        *vin = VCMPI_CBUF(in);
        return MPI_SUCCESS;
    }
    return vcmpi_stage_src(s, in, count, dt, ti, vin);
}

static int stage_out(vcmpi_stage_t *s, void *out, int count, MPI_Datatype dt,
                     const vcmpi_tinfo_t *ti, int load, void **vout)
{
    if (ti->direct) {
        *vout = out;
        return MPI_SUCCESS;
    }
    return vcmpi_stage_dst1(s, out, count, dt, ti, load, vout);
}

static int reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    vc_op_t vop = VC_SUM;
    const void *vs = NULL;
    void *vrb = rb;
    size_t n = 0;
    int me = -1, err = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !why && count > 0 && vcmpi_aliased(sb, rb) && !vcmpi_rank_size(vc, &me, NULL) &&
        me == root)
        why = VCMPI_ALIASED;
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !(why = map(count, dt, op, &ti, &vop, &n, &s, &err)) && !err &&
        !vcmpi_rank_size(vc, &me, NULL)) {
        err = stage_in(&s, sb, count, dt, &ti, &vs);
        /* the result exists at the root only */
        if (!err && me == root)
            err = stage_out(&s, rb, count, dt, &ti, sb == MPI_IN_PLACE, &vrb);
    }
    VCMPI_TRY(req ? FN_Ireduce : FN_Reduce,
              VCMPI_HAVE3(vc_reduce, vc_ireduce, vc_reduce_init), vc, why, comm, req, s,
              err, vc_ireduce(vs, vrb, n, ti.vtype, vop, root, vc, &vr),
              vc_reduce(vs, vrb, n, ti.vtype, vop, root, vc),
              vc_reduce_init(vs, vrb, n, ti.vtype, vop, root, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ireduce(sb, rb, count, dt, op, root, comm, R_),
                   PMPI_Reduce(sb, rb, count, dt, op, root, comm),
                   VCMPI_PMPI(Reduce, sb, rb, count, dt, op, root, comm));
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

/* allreduce (kind 0), scan (1) and exscan (2): count in, count out on
   every rank */
static int allred(int kind, const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm, MPI_Request *req)
{
    static const int fns[3][2] = {{FN_Allreduce, FN_Iallreduce}, {FN_Scan, FN_Iscan},
                                  {FN_Exscan, FN_Iexscan}};
    const char *why = NULL;
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    vc_op_t vop = VC_SUM;
    const void *vs = NULL;
    void *vrb = rb;
    size_t n = 0;
    int err = 0, fn = fns[kind][req != NULL];
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !why && count != 0 && vcmpi_aliased(sb, rb))
        why = VCMPI_ALIASED;
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !(why = map(count, dt, op, &ti, &vop, &n, &s, &err)) && !err &&
        !(err = stage_in(&s, sb, count, dt, &ti, &vs)))
        err = stage_out(&s, rb, count, dt, &ti, sb == MPI_IN_PLACE, &vrb);
    switch (kind) {
    case 0:
        VCMPI_TRY(fn, VCMPI_HAVE3(vc_allreduce, vc_iallreduce, vc_allreduce_init), vc, why,
                  comm, req, s, err, vc_iallreduce(vs, vrb, n, ti.vtype, vop, vc, &vr),
                  vc_allreduce(vs, vrb, n, ti.vtype, vop, vc),
                  vc_allreduce_init(vs, vrb, n, ti.vtype, vop, vc, &vr));
        VCMPI_FALLBACK(req, PMPI_Iallreduce(sb, rb, count, dt, op, comm, R_),
                       PMPI_Allreduce(sb, rb, count, dt, op, comm),
                   VCMPI_PMPI(Allreduce, sb, rb, count, dt, op, comm));
    case 1:
        VCMPI_TRY(fn, VCMPI_HAVE3(vc_scan, vc_iscan, vc_scan_init), vc, why, comm, req, s, err,
                  vc_iscan(vs, vrb, n, ti.vtype, vop, vc, &vr),
                  vc_scan(vs, vrb, n, ti.vtype, vop, vc),
              vc_scan_init(vs, vrb, n, ti.vtype, vop, vc, &vr));
        VCMPI_FALLBACK(req, PMPI_Iscan(sb, rb, count, dt, op, comm, R_),
                       PMPI_Scan(sb, rb, count, dt, op, comm),
                   VCMPI_PMPI(Scan, sb, rb, count, dt, op, comm));
    default:
        VCMPI_TRY(fn, VCMPI_HAVE3(vc_exscan, vc_iexscan, vc_exscan_init), vc, why, comm,
                  req, s, err, vc_iexscan(vs, vrb, n, ti.vtype, vop, vc, &vr),
                  vc_exscan(vs, vrb, n, ti.vtype, vop, vc),
                  vc_exscan_init(vs, vrb, n, ti.vtype, vop, vc, &vr));
        VCMPI_FALLBACK(req, PMPI_Iexscan(sb, rb, count, dt, op, comm, R_),
                       PMPI_Exscan(sb, rb, count, dt, op, comm),
                   VCMPI_PMPI(Exscan, sb, rb, count, dt, op, comm));
    }
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    return allred(0, sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    return allred(0, sb, rb, count, dt, op, comm, req);
}

int MPI_Scan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return allred(1, sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
              MPI_Request *req)
{
    return allred(1, sb, rb, count, dt, op, comm, req);
}

int MPI_Exscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return allred(2, sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iexscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    return allred(2, sb, rb, count, dt, op, comm, req);
}

/* Reduce_scatter(_block): the input is n blocks (in place: in rb), the
 * output this rank's block at the start of rb. cnt: element counts per
 * rank, or NULL for block (every rank count). */
static int stage_rs(vcmpi_stage_t *s, int n, int me, const void *sb, void *rb, int count,
                    const int *cnt, MPI_Datatype dt, const vcmpi_tinfo_t *ti,
                    const void **vs, void **vrb, size_t **vcnt)
{
    long long total = 0;
    int mine = cnt ? 0 : count, err;
    if (cnt) {
        size_t *v = vcmpi_stage_alloc(s, (size_t)(n ? n : 1) * sizeof *v);
        if (!v)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < n; i++) {
            if (cnt[i] < 0)
                return MPI_ERR_COUNT;
            v[i] = (size_t)cnt[i] * ti->nv;
            total += cnt[i];
        }
        mine = cnt[me];
        *vcnt = v;
    } else {
        total = (long long)n * count;
    }
    if (total > 0x7fffffff)
        return MPI_ERR_COUNT;
    if (ti->direct) {
        *vs = VCMPI_CBUF(sb);
        *vrb = rb;
        return MPI_SUCCESS;
    }
    if (sb == MPI_IN_PLACE) {
        /* rb holds all n blocks in; vcoll leaves this rank's at its start */
        char *p = vcmpi_stage_alloc(s, (size_t)total * ti->size);
        if (!p)
            return MPI_ERR_NO_MEM;
        if ((err = vcmpi_pack(rb, (int)total, dt, ti, p)))
            return err;
        *vs = VC_IN_PLACE;
        *vrb = p;
        return vcmpi_stage_dst(s, rb, mine, dt, ti, 0, p);
    }
    if ((err = vcmpi_stage_src(s, sb, (int)total, dt, ti, vs)))
        return err;
    return vcmpi_stage_dst1(s, rb, mine, dt, ti, 0, vrb);
}

static int reduce_scatter_any(const void *sb, void *rb, int count, const int rcounts[],
                              MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    const char *why = NULL;
    vcmpi_stage_t s;
    vcmpi_tinfo_t ti;
    vc_op_t vop = VC_SUM;
    const void *vs = NULL;
    void *vrb = rb;
    size_t n = 0, *cnt = NULL;
    int err = 0, me = -1, np = 0;
    vc_comm_t vc = vcmpi_comm(comm, &why);
    if (vc && !why && vcmpi_aliased(sb, rb) && !vcmpi_rank_size(vc, NULL, &np)) {
        int any = rcounts ? 0 : count != 0;
        for (int i = 0; rcounts && i < np; i++)
            any |= rcounts[i] != 0;
        if (any)
            why = VCMPI_ALIASED;
    }
    vcmpi_stage_init(&s, comm, req != NULL);
    if (vc && !why && !(why = map(rcounts ? 0 : count, dt, op, &ti, &vop, &n, &s, &err)) &&
        !err && !vcmpi_rank_size(vc, &me, &np))
        err = stage_rs(&s, np, me, sb, rb, count, rcounts, dt, &ti, &vs, &vrb, &cnt);
    if (rcounts) {
        VCMPI_TRY(
            req ? FN_Ireduce_scatter : FN_Reduce_scatter,
            VCMPI_HAVE3(vc_reduce_scatter, vc_ireduce_scatter, vc_reduce_scatter_init), vc,
            why, comm, req, s, err,
            vc_ireduce_scatter(vs, vrb, cnt, ti.vtype, vop, vc, &vr),
            vc_reduce_scatter(vs, vrb, cnt, ti.vtype, vop, vc),
            vc_reduce_scatter_init(vs, vrb, cnt, ti.vtype, vop, vc, &vr));
        VCMPI_FALLBACK(req, PMPI_Ireduce_scatter(sb, rb, rcounts, dt, op, comm, R_),
                       PMPI_Reduce_scatter(sb, rb, rcounts, dt, op, comm),
                   VCMPI_PMPI(Reduce_scatter, sb, rb, rcounts, dt, op, comm));
    }
    VCMPI_TRY(req ? FN_Ireduce_scatter_block : FN_Reduce_scatter_block,
              VCMPI_HAVE3(vc_reduce_scatter_block, vc_ireduce_scatter_block,
                          vc_reduce_scatter_block_init),
              vc, why, comm, req, s, err,
              vc_ireduce_scatter_block(vs, vrb, n, ti.vtype, vop, vc, &vr),
              vc_reduce_scatter_block(vs, vrb, n, ti.vtype, vop, vc),
              vc_reduce_scatter_block_init(vs, vrb, n, ti.vtype, vop, vc, &vr));
    VCMPI_FALLBACK(req, PMPI_Ireduce_scatter_block(sb, rb, count, dt, op, comm, R_),
                   PMPI_Reduce_scatter_block(sb, rb, count, dt, op, comm),
                   VCMPI_PMPI(Reduce_scatter_block, sb, rb, count, dt, op, comm));
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
    /* a blocking call of count 0 moves nothing on any rank (the count is
       every rank's alike): the MPI's own checks and early return, before
       any of the wrapper's work, here where no frame for it is set up yet
       (Open MPI, np 2, per call: 4.1 ns plain; through vcoll 37, 14 with
       the stage set up first, 8.8 from the start of the shared body, 5.0
       from here with the fallback's log line behind its flag, 5.7 with
       VCOLL_MPI_STATS=1; OSU's reduce_scatter_block of 8 B of MPI_INT at
       np 4 and 8). With vcoll requests outstanding vcoll takes it, and
       returns at once too */
    if (count == 0 && !vcmpi_pending()) {
        vcmpi_fallback(FN_Reduce_scatter_block, "count 0: nothing to move");
        return PMPI_Reduce_scatter_block(sb, rb, count, dt, op, comm);
    }
    return reduce_scatter_any(sb, rb, count, NULL, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter_any(sb, rb, count, NULL, dt, op, comm, req);
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_any(sb, rb, 0, rcounts, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter_any(sb, rb, 0, rcounts, dt, op, comm, req);
}
