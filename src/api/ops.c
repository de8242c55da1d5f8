/* ops.c -- vc_op_create, vc_op_create_ctx, vc_op_free: the context's op
 * table (core/ops.c) behind the lock. */
#include "api.h"

int vc_op_create(vc_user_fn *fn, int commutative, vc_op_t *op)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!fn || !op)
        return VC_ERR_ARG;
    return ops_create(&ctx_lib.ops, fn, NULL, NULL, commutative, op);
}

int vc_op_create_ctx(vc_user_ctx_fn *fn, void *ctx, int commutative, vc_op_t *op)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!fn || !op)
        return VC_ERR_ARG;
    return ops_create(&ctx_lib.ops, NULL, fn, ctx, commutative, op);
}

int vc_op_free(vc_op_t *op)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!op)
        return VC_ERR_ARG;
    return ops_free(&ctx_lib.ops, op);
}
