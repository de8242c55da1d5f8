/* reduce_avx512.c -- the reduction kernels compiled for AVX-512 (F, BW for
 * the 8/16-bit types, VL and DQ for the 64-bit integer products and the
 * narrower tails). A fold is bound by memory from L2 outwards, so the gain
 * over AVX2 is small but real for data in L1/L2 (256 KiB int8: 10.4 us
 * with AVX2, 9.5 with AVX-512 on a Xeon). */
#include "reduce_table.h"
#ifdef DTYPE_HAVE_X86_TABLES
#define KATTR __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define REDUCE_TABLE dtype_reduce_avx512
#include "reduce_kernels.h"
#endif
