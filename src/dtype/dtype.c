/* dtype.c -- sizes and validation of the built-in datatypes. */
#include <stdint.h>
#include "dtype.h"

static int is_pair(vc_dtype_t dt)
{
    return dt == VC_FLOAT_INT || dt == VC_DOUBLE_INT || dt == VC_INT32_INT ||
           dt == VC_INT64_INT;
}

int dtype_op_check(vc_dtype_t dt, vc_op_t op)
{
    if (!dtype_size(dt))
        return VC_ERR_DTYPE;
    if (dtype_is_opaque(dt))
        return VC_ERR_OP;     /* no built-in op knows what is inside */
    /* the same matrix as MPI's: a pair has a meaning only for the ops
       that return a location, VC_BYTE is raw bits (no numeric value), and
       bit operations have no meaning on IEEE values */
    switch (op) {
    case VC_MINLOC: case VC_MAXLOC:
        return is_pair(dt) ? VC_SUCCESS : VC_ERR_OP;
    case VC_SUM: case VC_PROD: case VC_MIN: case VC_MAX:
    case VC_LAND: case VC_LOR: case VC_LXOR:
        return is_pair(dt) || dt == VC_BYTE ? VC_ERR_OP : VC_SUCCESS;
    case VC_BAND: case VC_BOR: case VC_BXOR:
        return is_pair(dt) || dt == VC_FLOAT || dt == VC_DOUBLE ? VC_ERR_OP : VC_SUCCESS;
    }
    return VC_ERR_OP;
}

vc_dtype_t dtype_opaque(size_t size)
{
    return (vc_dtype_t)(DTYPE_OPAQUE_BASE + size);
}
