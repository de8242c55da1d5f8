/*
 * types.c -- which MPI data vcoll can carry.
 *
 * Data movement (bcast, gather, alltoall, ...) only needs contiguous bytes,
 * so any datatype laid out without holes goes as VC_BYTE. Reductions need
 * vcoll's own element type and op: the predefined MPI types map by size and
 * signedness, the MINLOC/MAXLOC pair types where their layout is vcoll's.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
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

/* only where vcoll's element is exactly MPI's extent (pairs: C padding) */
static void add(MPI_Datatype mpi, vc_dtype_t vc)
{
    MPI_Aint lb, extent;
    size_t vsize;
    if (vcmpi.ntypes == VCMPI_NTYPES || mpi == MPI_DATATYPE_NULL || vc_dtype_size(vc, &vsize) ||
        PMPI_Type_get_extent(mpi, &lb, &extent) != MPI_SUCCESS || lb != 0 ||
        (size_t)extent != vsize)
        return;
    vcmpi.types[vcmpi.ntypes].mpi = mpi;
    vcmpi.types[vcmpi.ntypes].vc = vc;
    vcmpi.ntypes++;
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
}

const char *vcmpi_rdtype(MPI_Datatype dt, vc_dtype_t *out)
{
    for (int i = 0; i < vcmpi.ntypes; i++)
        if (vcmpi.types[i].mpi == dt) {
            *out = vcmpi.types[i].vc;
            return NULL;
        }
    return "datatype not a vcoll reduction type";
}

const char *vcmpi_op(MPI_Op op, vc_op_t *out)
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
    return NULL;
}

const char *vcmpi_contig(MPI_Datatype dt, size_t *size)
{
    int sz;
    MPI_Aint lb, extent, tlb, textent;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &sz) != MPI_SUCCESS ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
        return "invalid datatype";
    if (lb != 0 || tlb != 0 || extent != sz || textent != sz)
        return "non-contiguous datatype";
    *size = (size_t)sz;
    return NULL;
}

const char *vcmpi_bytes(int count, MPI_Datatype dt, size_t *bytes)
{
    size_t size;
    const char *why;
    if (count < 0)
        return "negative count";
    if ((why = vcmpi_contig(dt, &size)))
        return why;
    *bytes = (size_t)count * size;
    return NULL;
}

const char *vcmpi_vec(int n, const int *cnt, const int *dsp, size_t unit, size_t **out)
{
    size_t *v = malloc((size_t)n * (dsp ? 2 : 1) * sizeof *v);
    if (!v)
        return "out of memory";
    for (int i = 0; i < n; i++) {
        if (cnt[i] < 0 || (dsp && dsp[i] < 0)) {
            free(v);
            return "negative count or displacement";
        }
        v[i] = (size_t)cnt[i] * unit;
        if (dsp)
            v[n + i] = (size_t)dsp[i] * unit;
    }
    *out = v;
    return NULL;
}
