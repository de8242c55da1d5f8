/* dtype.h -- datatype sizes, op validity and reduction kernels. */
#ifndef VC_DTYPE_H
#define VC_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include "vcoll.h"

/* The pair types' memory layout (MPI's: the value, then an int32 index,
 * with the C compiler's padding): sizes 8, 16, 8, 16 on every ABI vcoll
 * builds for. */
typedef struct { float v; int32_t i; } dtype_float_int_t;
typedef struct { double v; int32_t i; } dtype_double_int_t;
typedef struct { int32_t v; int32_t i; } dtype_int32_int_t;
typedef struct { int64_t v; int32_t i; } dtype_int64_int_t;

/* opaque elements (vc_dtype_opaque): the value past this base is the size */
#define DTYPE_OPAQUE_BASE 0x1000000u

static inline int dtype_is_opaque(vc_dtype_t dt)
{
    return (unsigned)dt > DTYPE_OPAQUE_BASE &&
           (unsigned)dt <= DTYPE_OPAQUE_BASE + VC_DTYPE_OPAQUE_MAX;
}

/* element size, or 0 for an unknown dtype (inline: every call asks) */
static inline size_t dtype_size(vc_dtype_t dt)
{
    if (dtype_is_opaque(dt))
        return (unsigned)dt - DTYPE_OPAQUE_BASE;
    switch (dt) {
    case VC_BYTE: case VC_INT8: case VC_UINT8: return 1;
    case VC_INT16: case VC_UINT16: return 2;
    case VC_INT32: case VC_UINT32: case VC_FLOAT: return 4;
    case VC_INT64: case VC_UINT64: case VC_DOUBLE: return 8;
    case VC_FLOAT_INT: return sizeof(dtype_float_int_t);
    case VC_DOUBLE_INT: return sizeof(dtype_double_int_t);
    case VC_INT32_INT: return sizeof(dtype_int32_int_t);
    case VC_INT64_INT: return sizeof(dtype_int64_int_t);
    }
    return 0;
}
/* the opaque type of size bytes (1..VC_DTYPE_OPAQUE_MAX: the caller checks) */
vc_dtype_t dtype_opaque(size_t size);
/* VC_SUCCESS, VC_ERR_DTYPE or VC_ERR_OP (built-in ops only; user ops are
 * checked by the collective layer) */
int dtype_op_check(vc_dtype_t dt, vc_op_t op);
/* count*size in bytes: VC_SUCCESS, VC_ERR_DTYPE or VC_ERR_COUNT on overflow
   (inline: every call checks its counts) */
static inline int dtype_bytes(vc_dtype_t dt, size_t count, size_t *bytes)
{
    size_t s = dtype_size(dt);
    if (!s)
        return VC_ERR_DTYPE;
    /* a multiply with overflow flag, not the 64-bit divide SIZE_MAX / s
       (tens of cycles per collective call) */
    size_t b;
    if (__builtin_mul_overflow(count, s, &b) || b > (size_t)INT64_MAX)
        return VC_ERR_COUNT;
    *bytes = b;
    return VC_SUCCESS;
}
/* inout[i] = inout[i] op in[i] for i < count. dt/op already validated.
 * The combination order is the caller's: schedules keep it rank-independent. */
void dtype_reduce(void *inout, const void *in, size_t count, vc_dtype_t dt, vc_op_t op);
/* out[i] = a[i] op b[i] (out may alias a or b) */
void dtype_reduce3(void *out, const void *a, const void *b, size_t count,
                   vc_dtype_t dt, vc_op_t op);

#endif
