/* dtype.c -- the public datatype queries: lock-free, a fixed table and
 * arithmetic (src/dtype). */
#include "vcoll.h"
#include "dtype/dtype.h"

int vc_dtype_opaque(size_t size, vc_dtype_t *dtype)
{
    if (!dtype)
        return VC_ERR_ARG;
    if (size == 0 || size > VC_DTYPE_OPAQUE_MAX)
        return VC_ERR_COUNT;
    *dtype = dtype_opaque(size);
    return VC_SUCCESS;
}

int vc_dtype_size(vc_dtype_t dtype, size_t *size)
{
    size_t s = dtype_size(dtype);
    if (!size)
        return VC_ERR_ARG;
    if (!s)
        return VC_ERR_DTYPE;
    *size = s;
    return VC_SUCCESS;
}
