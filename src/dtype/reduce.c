/*
 * reduce.c -- the baseline reduction kernels and the choice of table.
 *
 * The kernels live in reduce_kernels.h and are compiled once per instruction
 * set. The baseline (x86-64: SSE2) is what the compiler targets; AVX2 and
 * AVX-512 tables are compiled beside it and taken when the CPU runs them.
 * Why bother: on one node a reduce's root copies a peer's vector and folds
 * it, one after the other on its core, and the fold of 256 KiB of int8 in L2
 * took 13.8 us with SSE2 against 10.4 (AVX2) and 9.5 (AVX-512) -- a third of
 * what the root lost to Open MPI, whose op component dispatches the same
 * way. The kernels are elementwise, so every table gives the same bits.
 */
#include "reduce_table.h"

#define KATTR
#define REDUCE_TABLE dtype_reduce_base
#include "reduce_kernels.h"

static int cpu_runs(enum dtype_isa isa)
{
#ifdef DTYPE_HAVE_X86_TABLES
    switch (isa) {
    case DTYPE_ISA_BASE: return 1;
    case DTYPE_ISA_AVX2: return __builtin_cpu_supports("avx2");
    case DTYPE_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    default: return 0;
    }
#else
    return isa == DTYPE_ISA_BASE;
#endif
}

static const reduce3_fn (*table_of(enum dtype_isa isa))[NOP]
{
#ifdef DTYPE_HAVE_X86_TABLES
    if (isa == DTYPE_ISA_AVX2) return dtype_reduce_avx2;
    if (isa == DTYPE_ISA_AVX512) return dtype_reduce_avx512;
#endif
    return dtype_reduce_base;
}

const char *dtype_isa_name(enum dtype_isa isa)
{
    static const char *const names[DTYPE_ISA_N] = { "baseline", "avx2", "avx512" };
    return (unsigned)isa < DTYPE_ISA_N ? names[isa] : "?";
}

enum dtype_isa dtype_reduce_isa(void)
{
    for (int i = DTYPE_ISA_N - 1; i > DTYPE_ISA_BASE; i--)
        if (cpu_runs((enum dtype_isa)i))
            return (enum dtype_isa)i;
    return DTYPE_ISA_BASE;
}

/* the table dtype_reduce3 uses, chosen on first use; threads racing there
   store the same pointer, so relaxed atomics suffice */
static const reduce3_fn (*active_table(void))[NOP]
{
    static const reduce3_fn (*active)[NOP];
    const reduce3_fn (*t)[NOP] = __atomic_load_n(&active, __ATOMIC_RELAXED);
    if (!t) {
        t = table_of(dtype_reduce_isa());
        __atomic_store_n(&active, t, __ATOMIC_RELAXED);
    }
    return t;
}

reduce3_fn dtype_reduce_kernel(vc_dtype_t dt, vc_op_t op, enum dtype_isa isa)
{
    if ((unsigned)dt >= NDT || (unsigned)op >= NOP || (unsigned)isa >= DTYPE_ISA_N ||
        !cpu_runs(isa))
        return NULL;
    return table_of(isa)[dt][op];
}

void dtype_reduce3(void *out, const void *a, const void *b, size_t count,
                   vc_dtype_t dt, vc_op_t op)
{
    /* dt/op are validated by the caller; the guard only keeps a bug from
       becoming a wild call */
    if ((unsigned)dt >= NDT || (unsigned)op >= NOP)
        return;
    reduce3_fn f = active_table()[dt][op];
    if (f)
        f(out, a, b, count);
}

void dtype_reduce(void *inout, const void *in, size_t count, vc_dtype_t dt,
                  vc_op_t op)
{
    dtype_reduce3(inout, inout, in, count, dt, op);
}
