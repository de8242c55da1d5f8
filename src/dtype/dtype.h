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

/* element size, or 0 for an unknown dtype */
size_t dtype_size(vc_dtype_t dt);
/* the opaque type of size bytes (1..VC_DTYPE_OPAQUE_MAX: the caller checks) */
vc_dtype_t dtype_opaque(size_t size);
/* VC_SUCCESS, VC_ERR_DTYPE or VC_ERR_OP (built-in ops only; user ops are
 * checked by the collective layer) */
int dtype_op_check(vc_dtype_t dt, vc_op_t op);
/* count*size in bytes: VC_SUCCESS, VC_ERR_DTYPE or VC_ERR_COUNT on overflow */
int dtype_bytes(vc_dtype_t dt, size_t count, size_t *bytes);
/* inout[i] = inout[i] op in[i] for i < count. dt/op already validated.
 * The combination order is the caller's: schedules keep it rank-independent. */
void dtype_reduce(void *inout, const void *in, size_t count, vc_dtype_t dt, vc_op_t op);
/* out[i] = a[i] op b[i] (out may alias a or b) */
void dtype_reduce3(void *out, const void *a, const void *b, size_t count,
                   vc_dtype_t dt, vc_op_t op);

#endif
