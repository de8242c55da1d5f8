/*
 * types.c -- what vcoll knows of an MPI datatype.
 *
 * Data movement only needs bytes: every datatype goes, packed where its
 * layout has holes (stage.c). Reductions need vcoll's element type and op:
 * the predefined MPI types map by size and signedness, the MINLOC/MAXLOC
 * pair types where their layout is vcoll's, complex types as pairs of reals
 * for SUM, logical types for the logical ops; a derived type built from one
 * such type reduces as that type after packing. Everything here depends on
 * the type alone, so every rank of a reduction (same datatype, same op, by
 * MPI's rules) decides alike.
 *
 * The facts about a type are computed once: predefined types in a small
 * table, derived ones in an attribute whose delete callback drops them when
 * the type is freed (from C or Fortran).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

static vc_dtype_t int_type(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? VC_INT8 : VC_UINT8;
    case 2: return is_signed ? VC_INT16 : VC_UINT16;
    case 4: return is_signed ? VC_INT32 : VC_UINT32;
    default: return is_signed ? VC_INT64 : VC_UINT64;
    }
}

static int drop_info(MPI_Datatype dt, int keyval, void *val, void *extra)
{
    (void)dt, (void)keyval, (void)extra;
    vcmpi_flat_drop(((vcmpi_tinfo_t *)val)->flat);
    free(val);
    return MPI_SUCCESS;
}

/* mpi is mult elements of vc, for the ops kind allows; only where that is
   exactly MPI's extent (pairs: C padding) */
static void add_kind(MPI_Datatype mpi, vc_dtype_t vc, int mult, int kind)
{
    MPI_Aint lb, extent;
    size_t vsize;
    if (vcmpi.ntypes == VCMPI_NTYPES || mpi == MPI_DATATYPE_NULL || vc_dtype_size(vc, &vsize) ||
        PMPI_Type_get_extent(mpi, &lb, &extent) != MPI_SUCCESS || lb != 0 ||
        (size_t)extent != (size_t)mult * vsize)
        return;
    vcmpi.types[vcmpi.ntypes].mpi = mpi;
    vcmpi.types[vcmpi.ntypes].vc = vc;
    vcmpi.types[vcmpi.ntypes].mult = mult;
    vcmpi.types[vcmpi.ntypes].kind = kind;
    vcmpi.ntypes++;
}

static void add(MPI_Datatype mpi, vc_dtype_t vc)
{
    add_kind(mpi, vc, 1, VCMPI_OPS_ALL);
}

/* an integer type of the size MPI gives it (Fortran's INTEGER is whatever
   the compiler made it) */
static void add_int_sized(MPI_Datatype mpi, int is_signed, int kind)
{
    int sz;
    if (mpi != MPI_DATATYPE_NULL && PMPI_Type_size(mpi, &sz) == MPI_SUCCESS &&
        (sz == 1 || sz == 2 || sz == 4 || sz == 8))
        add_kind(mpi, int_type((size_t)sz, is_signed), 1, kind);
}

#define ADD_INT(mpi, ctype, is_signed) add(mpi, int_type(sizeof(ctype), is_signed))

void vcmpi_types_setup(void)
{
    vcmpi.ntypes = 0;
    /* the most frequent first: the lookup is a linear scan */
    add(MPI_DOUBLE, VC_DOUBLE);
    ADD_INT(MPI_INT, int, 1);
    add(MPI_FLOAT, VC_FLOAT);
    ADD_INT(MPI_LONG, long, 1);
    ADD_INT(MPI_UNSIGNED, unsigned, 0);
    ADD_INT(MPI_LONG_LONG, long long, 1);
    ADD_INT(MPI_UNSIGNED_LONG, unsigned long, 0);
    ADD_INT(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    ADD_INT(MPI_SHORT, short, 1);
    ADD_INT(MPI_UNSIGNED_SHORT, unsigned short, 0);
    ADD_INT(MPI_SIGNED_CHAR, signed char, 1);
    /* not a reduction type by the letter of MPI, but both MPIs reduce it
       (and OSU's benchmarks do by default): as the platform's char */
    ADD_INT(MPI_CHAR, char, CHAR_MIN < 0);
    ADD_INT(MPI_UNSIGNED_CHAR, unsigned char, 0);
    add(MPI_BYTE, VC_BYTE);
    ADD_INT(MPI_INT8_T, int8_t, 1);
    ADD_INT(MPI_INT16_T, int16_t, 1);
    ADD_INT(MPI_INT32_T, int32_t, 1);
    ADD_INT(MPI_INT64_T, int64_t, 1);
    ADD_INT(MPI_UINT8_T, uint8_t, 0);
    ADD_INT(MPI_UINT16_T, uint16_t, 0);
    ADD_INT(MPI_UINT32_T, uint32_t, 0);
    ADD_INT(MPI_UINT64_T, uint64_t, 0);
    ADD_INT(MPI_AINT, MPI_Aint, 1);
    ADD_INT(MPI_OFFSET, MPI_Offset, 1);
    ADD_INT(MPI_COUNT, MPI_Count, 1);
    add(MPI_DOUBLE_INT, VC_DOUBLE_INT);
    add(MPI_FLOAT_INT, VC_FLOAT_INT);
    add(MPI_2INT, VC_INT32_INT);
    if (sizeof(long) == 8)
        add(MPI_LONG_INT, VC_INT64_INT);
    /* Fortran's types, for Fortran programs through the drop-in */
    add(MPI_DOUBLE_PRECISION, VC_DOUBLE);
    add(MPI_REAL, VC_FLOAT);
    add(MPI_REAL4, VC_FLOAT);
    add(MPI_REAL8, VC_DOUBLE);
    add_int_sized(MPI_INTEGER, 1, VCMPI_OPS_ALL);
    add_int_sized(MPI_INTEGER1, 1, VCMPI_OPS_ALL);
    add_int_sized(MPI_INTEGER2, 1, VCMPI_OPS_ALL);
    add_int_sized(MPI_INTEGER4, 1, VCMPI_OPS_ALL);
    add_int_sized(MPI_INTEGER8, 1, VCMPI_OPS_ALL);
    /* LOGICAL and C's bool: only the logical ops, whose results vcoll
       writes as 1 and 0 -- gfortran's .true. and .false., and the MPIs'
       (both take the compiler's value) */
    add_int_sized(MPI_LOGICAL, 0, VCMPI_OPS_LOGICAL);
    add_int_sized(MPI_C_BOOL, 0, VCMPI_OPS_LOGICAL);
    /* complex numbers: SUM is elementwise on (re, im); PROD is not, and
       MAX/MIN are not defined on them */
    add_kind(MPI_COMPLEX, VC_FLOAT, 2, VCMPI_OPS_SUM);
    add_kind(MPI_DOUBLE_COMPLEX, VC_DOUBLE, 2, VCMPI_OPS_SUM);
    add_kind(MPI_C_FLOAT_COMPLEX, VC_FLOAT, 2, VCMPI_OPS_SUM);
    add_kind(MPI_C_DOUBLE_COMPLEX, VC_DOUBLE, 2, VCMPI_OPS_SUM);
    /* the Fortran pairs: the same type twice; vcoll's pairs are (value,
       int), so 2INTEGER only */
    if (MPI_2INTEGER != MPI_DATATYPE_NULL) {
        int sz;
        if (PMPI_Type_size(MPI_2INTEGER, &sz) == MPI_SUCCESS && sz == 8)
            add(MPI_2INTEGER, VC_INT32_INT);
    }
    PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, drop_info, &vcmpi.type_keyval, NULL);
}

/* the table's entry for a predefined type, or -1 */
static int find(MPI_Datatype dt)
{
    for (int i = 0; i < vcmpi.ntypes; i++)
        if (vcmpi.types[i].mpi == dt)
            return i;
    return -1;
}

const char *vcmpi_op(MPI_Op op, const vcmpi_tinfo_t *ti, vc_op_t *out)
{
    if (op == MPI_SUM) *out = VC_SUM;
    else if (op == MPI_MAX) *out = VC_MAX;
    else if (op == MPI_MIN) *out = VC_MIN;
    else if (op == MPI_PROD) *out = VC_PROD;
    else if (op == MPI_BAND) *out = VC_BAND;
    else if (op == MPI_BOR) *out = VC_BOR;
    else if (op == MPI_BXOR) *out = VC_BXOR;
    else if (op == MPI_LAND) *out = VC_LAND;
    else if (op == MPI_LOR) *out = VC_LOR;
    else if (op == MPI_LXOR) *out = VC_LXOR;
    else if (op == MPI_MINLOC) *out = VC_MINLOC;
    else if (op == MPI_MAXLOC) *out = VC_MAXLOC;
    else return "not a predefined vcoll op";
    if (ti->kind == VCMPI_OPS_LOGICAL && *out != VC_LAND && *out != VC_LOR && *out != VC_LXOR)
        return "not a logical op on a logical type";
    if (ti->kind == VCMPI_OPS_SUM && *out != VC_SUM)
        return "complex numbers: only MPI_SUM is elementwise";
    return NULL;
}

/* The one predefined type dt is built from (MPI_DATATYPE_NULL when it
   mixes types or uses one this walk does not follow). Every handle
   MPI_Type_get_contents returns for a derived type is a new one: freed. */
static MPI_Datatype basic_of(MPI_Datatype dt, int depth)
{
    int ni, na, nd, comb;
    if (depth > 64 || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    if (comb == MPI_COMBINER_NAMED)
        return dt;
    /* Fortran's parameterized types are predefined in all but name */
    if (comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX ||
        comb == MPI_COMBINER_F90_INTEGER || nd <= 0)
        return MPI_DATATYPE_NULL;
    int *ints = malloc((size_t)(ni ? ni : 1) * sizeof *ints);
    MPI_Aint *aints = malloc((size_t)(na ? na : 1) * sizeof *aints);
    MPI_Datatype *types = malloc((size_t)nd * sizeof *types);
    MPI_Datatype b = MPI_DATATYPE_NULL;
    if (ints && aints && types &&
        PMPI_Type_get_contents(dt, ni, na, nd, ints, aints, types) == MPI_SUCCESS) {
        for (int i = 0; i < nd; i++) {
            MPI_Datatype bi = basic_of(types[i], depth + 1);
            if (i == 0)
                b = bi;
            else if (bi != b)
                b = MPI_DATATYPE_NULL;
            int n2, a2, d2, c2;
            if (PMPI_Type_get_envelope(types[i], &n2, &a2, &d2, &c2) == MPI_SUCCESS &&
                c2 != MPI_COMBINER_NAMED)
                PMPI_Type_free(&types[i]);
            if (b == MPI_DATATYPE_NULL)
                break;
        }
    }
    free(ints);
    free(aints);
    free(types);
    return b;
}

static int compute(MPI_Datatype dt, int named, vcmpi_tinfo_t *ti)
{
    int sz;
    MPI_Aint lb, tlb, textent;
    memset(ti, 0, sizeof *ti);
    if (PMPI_Type_size(dt, &sz) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &lb, &ti->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
        return -1;
    ti->size = (size_t)sz;
    ti->true_lb = tlb;
    /* a type whose data spans exactly its size has no holes; elements sit
       back to back when the extent is that size too */
    ti->contig = textent == sz && ti->extent == sz;
    if (!named && !ti->contig && !(ti->flat = vcmpi_flatten(dt, ti->size)))
        vcmpi_log("a datatype the walk does not follow: MPI_Pack packs it");
    int i = find(named ? dt : basic_of(dt, 0));
    if (i < 0)
        return 0;
    size_t vsize;
    int bsz;
    vc_dtype_size(vcmpi.types[i].vc, &vsize);
    ti->vtype = vcmpi.types[i].vc;
    ti->kind = vcmpi.types[i].kind;
    if (named) {
        /* as MPI lays it out, which is vcoll's (add_kind checked) */
        ti->red = 1;
        ti->direct = 1;
        ti->nv = (size_t)vcmpi.types[i].mult;
    } else if (PMPI_Type_size(vcmpi.types[i].mpi, &bsz) == MPI_SUCCESS &&
               (size_t)bsz == vsize * (size_t)vcmpi.types[i].mult && bsz > 0) {
        /* packed, its elements are vcoll's (not so for the padded pairs) */
        ti->red = 1;
        ti->nv = ti->size / vsize;
    }
    return 0;
}

/* predefined types seen so far: appended under the lock, read without it
   (count published after the entry) */
#define NAMED_MAX 64
static struct {
    MPI_Datatype dt;
    vcmpi_tinfo_t ti;
} named_cache[NAMED_MAX];
static int named_n;

/* dt's size: a predefined type seen before from the table above (no call
   into the library: a hot path's check, alias.c), else MPI's answer; -1
   when MPI has none */
static const vcmpi_tinfo_t *named(MPI_Datatype dt)
{
    int n = __atomic_load_n(&named_n, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (named_cache[i].dt == dt)
            return &named_cache[i].ti;
    return NULL;
}

MPI_Aint vcmpi_type_size(MPI_Datatype dt)
{
    const vcmpi_tinfo_t *t = named(dt);
    if (t)
        return (MPI_Aint)t->size;
    MPI_Count size = MPI_UNDEFINED;
    if (PMPI_Type_size_x(dt, &size) != MPI_SUCCESS || size == MPI_UNDEFINED)
        return -1;
    return (MPI_Aint)size;
}

const char *vcmpi_tinfo(MPI_Datatype dt, vcmpi_tinfo_t *ti)
{
    const vcmpi_tinfo_t *t = named(dt);
    if (t) {
        *ti = *t;
        return NULL;
    }
    int ni, na, nd, comb, flag = 0;
    vcmpi_tinfo_t *cached;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return "invalid datatype";
    if (comb != MPI_COMBINER_NAMED) {
        if (vcmpi.type_keyval != MPI_KEYVAL_INVALID &&
            PMPI_Type_get_attr(dt, vcmpi.type_keyval, &cached, &flag) == MPI_SUCCESS && flag) {
            *ti = *cached;
            return NULL;
        }
        if (compute(dt, 0, ti))
            return "invalid datatype";
        if (vcmpi.type_keyval != MPI_KEYVAL_INVALID && (cached = malloc(sizeof *cached))) {
            *cached = *ti;
            if (PMPI_Type_set_attr(dt, vcmpi.type_keyval, cached) == MPI_SUCCESS)
                return NULL;
            free(cached);
        }
        /* not cached: this call's copy is the only one, and it cannot be
           released; packing without the list is slower, not wrong */
        vcmpi_flat_drop(ti->flat);
        ti->flat = NULL;
        return NULL;
    }
    if (compute(dt, 1, ti))
        return "invalid datatype";
    pthread_mutex_lock(&vcmpi.lock);
    if (named_n < NAMED_MAX) {
        named_cache[named_n].dt = dt;
        named_cache[named_n].ti = *ti;
        __atomic_store_n(&named_n, named_n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&vcmpi.lock);
    return NULL;
}
