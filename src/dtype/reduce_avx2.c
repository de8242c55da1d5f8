/* reduce_avx2.c -- the reduction kernels compiled for AVX2 (x86-64 CPUs
 * from 2013 on: 32-byte vectors, twice the baseline's SSE2). */
#include "reduce_table.h"
#ifdef DTYPE_HAVE_X86_TABLES
#define KATTR __attribute__((target("avx2")))
#define REDUCE_TABLE dtype_reduce_avx2
#include "reduce_kernels.h"
#endif
