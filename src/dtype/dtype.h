/* dtype.h -- datatype sizes, op validity and reduction kernels. */
#ifndef VC_DTYPE_H
#define VC_DTYPE_H

#include <stddef.h>
#include "vcoll.h"

/* element size, or 0 for an unknown dtype */
size_t dtype_size(vc_dtype_t dt);
/* VC_SUCCESS, VC_ERR_DTYPE or VC_ERR_OP */
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
