/* reduce_table.h -- the reduction kernel tables, one per instruction set,
 * and the choice between them (dtype layer internal). */
#ifndef VC_REDUCE_TABLE_H
#define VC_REDUCE_TABLE_H

#include "dtype.h"

typedef void (*reduce3_fn)(void *out, const void *a, const void *b, size_t n);

#define NDT (VC_INT64_INT + 1)
#define NOP (VC_MAXLOC + 1)

/* Instruction sets with a table, widest last. Only x86-64 has more than
 * the baseline; elsewhere the compiler's own target is the only one. */
enum dtype_isa { DTYPE_ISA_BASE, DTYPE_ISA_AVX2, DTYPE_ISA_AVX512, DTYPE_ISA_N };

extern const reduce3_fn dtype_reduce_base[NDT][NOP];

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DTYPE_HAVE_X86_TABLES 1
extern const reduce3_fn dtype_reduce_avx2[NDT][NOP];
extern const reduce3_fn dtype_reduce_avx512[NDT][NOP];
#endif

/* The kernel for (dt, op) from the table of isa, or NULL when this CPU
 * cannot run that table or the combination has no kernel. Tests compare
 * the tables through it. */
reduce3_fn dtype_reduce_kernel(vc_dtype_t dt, vc_op_t op, enum dtype_isa isa);
/* the widest table this CPU runs (what dtype_reduce3 uses) */
enum dtype_isa dtype_reduce_isa(void);
const char *dtype_isa_name(enum dtype_isa isa);

#endif
