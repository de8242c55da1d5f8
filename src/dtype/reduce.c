/*
 * reduce.c -- reduction kernels, one plain loop per (dtype, op) pair.
 *
 * The loops are kept trivially simple (no branches the compiler cannot turn
 * into blends, restrict-free only where aliasing is allowed) so gcc
 * vectorizes them; O3 is requested for this file because gcc 12's -O2 uses
 * the "very cheap" vectorizer cost model, which refuses loops that need an
 * alias check or an epilogue -- i.e. all of these.
 *
 * Semantics that are easy to get wrong:
 *  - Signed SUM/PROD wrap modulo 2^bits: the arithmetic is done in an
 *    unsigned type at least as wide as int, so nothing overflows in signed
 *    arithmetic (no UB, UBSan stays quiet) and 16-bit products do not get
 *    promoted to a signed int that can overflow.
 *  - MIN/MAX on floats are plain comparisons: a < b ? a : b. NaN handling
 *    follows from that (deterministic, same on every rank).
 *  - Logical ops give 0 or 1 in the element type.
 */
#pragma GCC optimize("O3")
#include <stdint.h>
#include "dtype.h"

typedef void (*reduce3_fn)(void *out, const void *a, const void *b, size_t n);

/* W is the unsigned type arithmetic happens in for wrapping ops. */
#define DEF_ARITH(NAME, T, W)                                                  \
    static void NAME##_sum(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((W)a[i] + (W)b[i]);                                     \
    }                                                                          \
    static void NAME##_prod(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((W)a[i] * (W)b[i]);                                     \
    }

#define DEF_FARITH(NAME, T)                                                    \
    static void NAME##_sum(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] + b[i];                                                \
    }                                                                          \
    static void NAME##_prod(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] * b[i];                                                \
    }

#define DEF_CMP_LOGIC(NAME, T)                                                 \
    static void NAME##_min(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] < b[i] ? a[i] : b[i];                                  \
    }                                                                          \
    static void NAME##_max(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] > b[i] ? a[i] : b[i];                                  \
    }                                                                          \
    static void NAME##_land(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((a[i] != 0) & (b[i] != 0));                             \
    }                                                                          \
    static void NAME##_lor(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((a[i] != 0) | (b[i] != 0));                             \
    }                                                                          \
    static void NAME##_lxor(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = (T)((a[i] != 0) ^ (b[i] != 0));                             \
    }

#define DEF_BITS(NAME, T)                                                      \
    static void NAME##_band(void *o_, const void *a_, const void *b_, size_t n)\
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] & b[i];                                                \
    }                                                                          \
    static void NAME##_bor(void *o_, const void *a_, const void *b_, size_t n) \
    {                                                                          \
        T *o = o_; const T *a = a_, *b = b_;                                   \
        for (size_t i = 0; i < n; i++)                                         \
            o[i] = a[i] | b[i];                                                \
    }                                                                          \
    static void NAME##_bxor(void *o_, const void *a_, const void *b_, size_t n)\
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

/* Row order follows vc_op_t: SUM PROD MIN MAX BAND BOR BXOR LAND LOR LXOR */
#define ROW_INT(N) { N##_sum, N##_prod, N##_min, N##_max, N##_band, N##_bor, \
                     N##_bxor, N##_land, N##_lor, N##_lxor }
#define ROW_FLT(N) { N##_sum, N##_prod, N##_min, N##_max, NULL, NULL, NULL, \
                     N##_land, N##_lor, N##_lxor }

/* Indexed by vc_dtype_t (VC_BYTE behaves as uint8). */
static const reduce3_fn reduce_table[11][10] = {
    ROW_INT(u8), ROW_INT(i8), ROW_INT(u8), ROW_INT(i16), ROW_INT(u16),
    ROW_INT(i32), ROW_INT(u32), ROW_INT(i64), ROW_INT(u64),
    ROW_FLT(f32), ROW_FLT(f64),
};

void dtype_reduce3(void *out, const void *a, const void *b, size_t count,
                   vc_dtype_t dt, vc_op_t op)
{
    /* dt/op are validated by the caller; the guard only keeps a bug from
       becoming a wild call */
    if ((unsigned)dt >= 11 || (unsigned)op >= 10 || !reduce_table[dt][op])
        return;
    reduce_table[dt][op](out, a, b, count);
}

void dtype_reduce(void *inout, const void *in, size_t count, vc_dtype_t dt,
                  vc_op_t op)
{
    dtype_reduce3(inout, inout, in, count, dt, op);
}
