/*
 * reduce_kernels.h -- the elementwise reduction kernels, one plain loop per
 * (dtype, op) pair, and the table that indexes them. Included once per
 * instruction set (reduce.c, reduce_avx2.c, reduce_avx512.c): the includer
 * defines KATTR (a target attribute, or nothing) and REDUCE_TABLE (the
 * table's name), so all tables come from this one source.
 *
 * Every kernel is elementwise: element i of the result depends on element i
 * of the inputs alone, with one operation and no reassociation (a+b, a*b,
 * a<b?a:b). A wider vector computes the same bits, so ranks whose CPUs pick
 * different tables still agree on every result.
 *
 * The loops are kept trivially simple (no branches the compiler cannot turn
 * into blends, restrict-free because out may alias a or b) so the compiler
 * vectorizes them; gcc gets O3 because gcc 12's -O2 uses the "very cheap"
 * vectorizer cost model, which refuses loops that need an alias check or an
 * epilogue -- i.e. all of these.
 *
 * Semantics that are easy to get wrong:
 *  - Signed SUM/PROD wrap modulo 2^bits: the arithmetic is done in an
 *    unsigned type at least as wide as int, so nothing overflows in signed
 *    arithmetic (no UB, UBSan stays quiet) and 16-bit products do not get
 *    promoted to a signed int that can overflow.
 *  - MIN/MAX on floats are plain comparisons: a < b ? a : b. NaN handling
 *    follows from that (deterministic, same on every rank).
 *  - Logical ops give 0 or 1 in the element type.
 *  - MINLOC/MAXLOC: b wins when its value is strictly better, or when
 *    neither value is strictly better and b's index is smaller; otherwise a
 *    wins. The winner is copied whole (padding included), so the result
 *    holds bytes of one input and nothing else. Without NaN this is the
 *    usual argmin/argmax with ties to the smaller index, whatever the
 *    order of combination. A NaN value compares as a tie with everything,
 *    so it is kept or dropped by index alone; the outcome then depends on
 *    the combination order, which the schedules fix independently of the
 *    rank, so every rank still gets the same bits.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include <stdint.h>
#include <string.h>
#include "reduce_table.h"

#ifndef KATTR
#error "define KATTR (the kernels' target attribute) before including reduce_kernels.h"
#endif
#ifndef REDUCE_TABLE
#error "define REDUCE_TABLE (the table's name) before including reduce_kernels.h"
#endif

/* W is the unsigned type arithmetic happens in for wrapping ops. */
#define DEF_ARITH(NAME, T, W)                                                  \
    KATTR static void NAME##_sum(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((W)a[i] + (W)b[i]);                                     \
    }                                                                          \
    KATTR static void NAME##_prod(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((W)a[i] * (W)b[i]);                                     \
    }

#define DEF_FARITH(NAME, T)                                                    \
    KATTR static void NAME##_sum(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] + b[i];                                                \
    }                                                                          \
    KATTR static void NAME##_prod(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] * b[i];                                                \
    }

#define DEF_CMP_LOGIC(NAME, T)                                                 \
    KATTR static void NAME##_min(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] < b[i] ? a[i] : b[i];                                  \
    }                                                                          \
    KATTR static void NAME##_max(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] > b[i] ? a[i] : b[i];                                  \
    }                                                                          \
    KATTR static void NAME##_land(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((a[i] != 0) & (b[i] != 0));                             \
    }                                                                          \
    KATTR static void NAME##_lor(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((a[i] != 0) | (b[i] != 0));                             \
    }                                                                          \
    KATTR static void NAME##_lxor(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((a[i] != 0) ^ (b[i] != 0));                             \
    }

#define DEF_BITS(NAME, T)                                                      \
    KATTR static void NAME##_band(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] & b[i];                                                \
    }                                                                          \
    KATTR static void NAME##_bor(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] | b[i];                                                \
    }                                                                          \
    KATTR static void NAME##_bxor(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] ^ b[i];                                                \
    }

#define DEF_INT(NAME, T, W) DEF_ARITH(NAME, T, W) DEF_CMP_LOGIC(NAME, T) DEF_BITS(NAME, T)
#define DEF_FLT(NAME, T) DEF_FARITH(NAME, T) DEF_CMP_LOGIC(NAME, T)

DEF_INT(i8, int8_t, unsigned)
DEF_INT(u8, uint8_t, unsigned)
DEF_INT(i16, int16_t, unsigned)
DEF_INT(u16, uint16_t, unsigned)
DEF_INT(i32, int32_t, uint32_t)
DEF_INT(u32, uint32_t, uint32_t)
DEF_INT(i64, int64_t, uint64_t)
DEF_INT(u64, uint64_t, uint64_t)
DEF_FLT(f32, float)
DEF_FLT(f64, double)

/* BETTER(x, y) is 1 when value x strictly beats value y. memmove: out may
   be a or b itself. */
#define DEF_LOC(NAME, T, OPNAME, BETTER)                                       \
    KATTR static void NAME##_##OPNAME(void *o_, const void *a_, const void *b_,      \
                                size_t n)                                      \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++) {                                       \
            int take_b = BETTER(b[i].v, a[i].v) ||                             \
                         (!BETTER(a[i].v, b[i].v) && b[i].i < a[i].i);         \
            memmove(&o[i], take_b ? &b[i] : &a[i], sizeof(T));                 \
        }                                                                      \
    }
#define LESS(x, y) ((x) < (y))
#define GREATER(x, y) ((x) > (y))
#define DEF_PAIR(NAME, T) DEF_LOC(NAME, T, minloc, LESS) DEF_LOC(NAME, T, maxloc, GREATER)

DEF_PAIR(f32i, dtype_float_int_t)
DEF_PAIR(f64i, dtype_double_int_t)
DEF_PAIR(i32i, dtype_int32_int_t)
DEF_PAIR(i64i, dtype_int64_int_t)

/* Row order follows vc_op_t: SUM PROD MIN MAX BAND BOR BXOR LAND LOR LXOR
   MINLOC MAXLOC. Unset entries are combinations dtype_op_check refuses. */
#define ROW_INT(N) { N##_sum, N##_prod, N##_min, N##_max, N##_band, N##_bor, \
                     N##_bxor, N##_land, N##_lor, N##_lxor, NULL, NULL }
#define ROW_FLT(N) { N##_sum, N##_prod, N##_min, N##_max, NULL, NULL, NULL, \
                     N##_land, N##_lor, N##_lxor, NULL, NULL }
#define ROW_BITS(N) { NULL, NULL, NULL, NULL, N##_band, N##_bor, N##_bxor, \
                      NULL, NULL, NULL, NULL, NULL }
#define ROW_PAIR(N) { [VC_MINLOC] = N##_minloc, [VC_MAXLOC] = N##_maxloc }

/* Indexed by vc_dtype_t (VC_BYTE: bit operations only, as in MPI). */
const reduce3_fn REDUCE_TABLE[NDT][NOP] = {
    ROW_BITS(u8), ROW_INT(i8), ROW_INT(u8), ROW_INT(i16), ROW_INT(u16),
    ROW_INT(i32), ROW_INT(u32), ROW_INT(i64), ROW_INT(u64),
    ROW_FLT(f32), ROW_FLT(f64),
    ROW_PAIR(f32i), ROW_PAIR(f64i), ROW_PAIR(i32i), ROW_PAIR(i64i),
};

