/*
 * ops.c -- the user reduction op table: create, free, and the lookup the
 * collectives use (the public vc_op_* calls are the API's: src/api/ops.c).
 *
 * The value handed out is OP_USER_BASE + slot + OP_USER_SLOTS * gen, so a
 * stale handle (freed, slot reused) no longer matches its slot's generation
 * and is refused with VC_ERR_OP instead of calling someone else's function.
 */
#include <limits.h>
#include "ops.h"

int ops_lookup(const ops_table_t *t, vc_op_t op, const ops_user_t **u, int *commutative)
{
    if (!ops_is_user(op))
        return VC_ERR_OP;
    unsigned v = (unsigned)op - OP_USER_BASE;
    unsigned slot = v % OP_USER_SLOTS, gen = v / OP_USER_SLOTS;
    const ops_slot_t *s = &t->slot[slot];
    if ((!s->u.fn && !s->u.cfn) || s->gen != gen)
        return VC_ERR_OP;
    if (u)
        *u = &s->u;
    if (commutative)
        *commutative = s->commutative;
    return VC_SUCCESS;
}

int ops_create(ops_table_t *t, vc_user_fn *fn, vc_user_ctx_fn *cfn, void *ctx,
               int commutative, vc_op_t *op)
{
    for (unsigned i = 0; i < OP_USER_SLOTS; i++) {
        ops_slot_t *s = &t->slot[i];
        if (s->u.fn || s->u.cfn)
            continue;
        /* keep the encoded value inside an int */
        if ((unsigned long)s->gen * OP_USER_SLOTS + i >= (unsigned long)INT_MAX - OP_USER_BASE)
            s->gen = 0;
        s->u.fn = fn;
        s->u.cfn = cfn;
        s->u.ctx = ctx;
        s->commutative = commutative != 0;
        *op = (vc_op_t)(OP_USER_BASE + i + OP_USER_SLOTS * s->gen);
        return VC_SUCCESS;
    }
    return VC_ERR_NOMEM;    /* OP_USER_SLOTS live user ops */
}

int ops_free(ops_table_t *t, vc_op_t *op)
{
    if (ops_lookup(t, *op, NULL, NULL))
        return VC_ERR_OP;
    unsigned v = (unsigned)*op - OP_USER_BASE;
    ops_slot_t *s = &t->slot[v % OP_USER_SLOTS];
    s->u.fn = NULL;
    s->u.cfn = NULL;
    s->u.ctx = NULL;
    s->gen++;
    *op = (vc_op_t)-1;
    return VC_SUCCESS;
}
