/*
 * ops.h -- user reduction ops (vc_op_create). A user op is a vc_op_t value
 * at or past OP_USER_BASE that indexes a slot of an ops_table_t; the slot
 * keeps a generation so a freed op's value stays invalid if the slot is
 * reused (the value encodes both).
 */
#ifndef VC_OPS_H
#define VC_OPS_H

#include "vcoll.h"

#define OP_USER_BASE  64      /* built-in ops are below */
#define OP_USER_SLOTS 256

/* a user op's function: plain (vc_op_create) or with its context
   (vc_op_create_ctx) */
typedef struct ops_user {
    vc_user_fn *fn;
    vc_user_ctx_fn *cfn;
    void *ctx;
} ops_user_t;

typedef struct ops_slot {
    ops_user_t u;             /* fn and cfn NULL = free */
    int commutative;
    unsigned gen;
} ops_slot_t;

/* the table (the context holds it) */
typedef struct ops_table {
    ops_slot_t slot[OP_USER_SLOTS];
} ops_table_t;

static inline int ops_is_user(vc_op_t op) { return (int)op >= OP_USER_BASE; }

/* inout = in op inout over count elements */
static inline void ops_call(const ops_user_t *u, const void *in, void *inout, size_t count,
                            vc_dtype_t dt)
{
    if (u->cfn)
        u->cfn(in, inout, count, dt, u->ctx);
    else
        u->fn(in, inout, count, dt);
}

/* the function and commutativity of a live user op; VC_ERR_OP if op is
   not one. *u stays valid while the op lives. */
int ops_lookup(const ops_table_t *t, vc_op_t op, const ops_user_t **u, int *commutative);
/* a free slot for fn (or cfn with its ctx): VC_ERR_NOMEM when all
   OP_USER_SLOTS are taken */
int ops_create(ops_table_t *t, vc_user_fn *fn, vc_user_ctx_fn *cfn, void *ctx,
               int commutative, vc_op_t *op);
/* release a live op (*op then invalid); VC_ERR_OP if it is not one */
int ops_free(ops_table_t *t, vc_op_t *op);

#endif
