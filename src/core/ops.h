/*
 * ops.h -- user reduction ops (vc_op_create). A user op is a vc_op_t value
 * at or past OP_USER_BASE that indexes a slot of vc_ctx.user_ops; the slot
 * keeps a generation so a freed op's value stays invalid if the slot is
 * reused (the value encodes both).
 */
#ifndef VC_OPS_H
#define VC_OPS_H

#include "vcoll.h"

#define OP_USER_BASE  64      /* built-in ops are below */
#define OP_USER_SLOTS 256

typedef struct ops_slot {
    vc_user_fn *fn;           /* NULL = free */
    int commutative;
    unsigned gen;
} ops_slot_t;

static inline int ops_is_user(vc_op_t op) { return (int)op >= OP_USER_BASE; }

/* fn and commutativity of a live user op; VC_ERR_OP if op is not one */
int ops_lookup(vc_op_t op, vc_user_fn **fn, int *commutative);

#endif
