/*
 * test_reduce_isa.c -- the reduction kernel tables compiled per instruction
 * set (baseline, AVX2, AVX-512) give the same bits on every (dtype, op), at
 * every length and alignment that exercises the vector bodies and tails, in
 * place and not, and write nothing past the end; the table dtype_reduce3
 * uses is one this CPU runs; and a few results against loops written here.
 * Tables the CPU cannot run are skipped and named.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CUnit/Basic.h>
#include "vcoll.h"
#include "dtype/dtype.h"
#include "dtype/reduce_table.h"

#define MAXN 4200
#define GUARD 64

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned char rbyte(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (unsigned char)(rng >> 24);
}

/* random bytes; for float types every 7th element is made a NaN, an
   infinity or a signed zero so MIN/MAX and the compares see them */
static void fill(unsigned char *p, size_t n, vc_dtype_t dt)
{
    size_t sz = dtype_size(dt);
    for (size_t i = 0; i < n * sz; i++)
        p[i] = rbyte();
    for (size_t i = 0; i < n; i += 7) {
        unsigned k = rbyte() % 4;
        if (dt == VC_FLOAT) {
            float v[4] = { NAN, INFINITY, -0.0f, 0.0f };
            memcpy(p + i * sz, &v[k], sizeof(float));
        } else if (dt == VC_DOUBLE) {
            double v[4] = { NAN, -INFINITY, -0.0, 0.0 };
            memcpy(p + i * sz, &v[k], sizeof(double));
        }
    }
}

enum { OUT_OF_PLACE, INTO_A, INTO_B };

static void run(reduce3_fn f, unsigned char *o, const unsigned char *a,
                const unsigned char *b, size_t n, size_t sz, int mode)
{
    if (mode == INTO_A) { memcpy(o, a, n * sz); f(o, o, b, n); }
    else if (mode == INTO_B) { memcpy(o, b, n * sz); f(o, a, o, n); }
    else f(o, a, b, n);
}

static void test_tables_agree(void)
{
    static const size_t lens[] = { 0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                   127, 128, 129, 255, 256, 1000, 4099 };
    /* 64-byte aligned, plus room to start 1 or 3 elements in */
    unsigned char *a = aligned_alloc(64, (MAXN + 4) * 16 + GUARD);
    unsigned char *b = aligned_alloc(64, (MAXN + 4) * 16 + GUARD);
    unsigned char *o0 = aligned_alloc(64, (MAXN + 4) * 16 + GUARD);
    unsigned char *o1 = aligned_alloc(64, (MAXN + 4) * 16 + GUARD);
    CU_ASSERT_FATAL(a && b && o0 && o1);
    int compared[DTYPE_ISA_N] = { 0 };
    for (int isa = DTYPE_ISA_BASE + 1; isa < DTYPE_ISA_N; isa++) {
        for (int dt = 0; dt < NDT; dt++) {
            size_t sz = dtype_size((vc_dtype_t)dt);
            for (int op = 0; op < NOP; op++) {
                reduce3_fn ref = dtype_reduce_kernel(dt, op, DTYPE_ISA_BASE);
                reduce3_fn f = dtype_reduce_kernel(dt, op, isa);
                if (!ref) {
                    CU_ASSERT_PTR_NULL(f);
                    continue;
                }
                if (!f)
                    continue;   /* this CPU does not run the table */
                compared[isa]++;
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                    for (size_t skew = 0; skew <= 3; skew += 3)
                        for (int mode = 0; mode < 3; mode++) {
                            size_t n = lens[li], off = skew * sz;
                            fill(a + off, n, dt);
                            fill(b + off, n, dt);
                            memset(o0, 0xa5, off + n * sz + GUARD);
                            memset(o1, 0xa5, off + n * sz + GUARD);
                            run(ref, o0 + off, a + off, b + off, n, sz, mode);
                            run(f, o1 + off, a + off, b + off, n, sz, mode);
                            if (memcmp(o0, o1, off + n * sz + GUARD)) {
                                size_t k = 0;
                                while (o0[k] == o1[k])
                                    k++;
                                fprintf(stderr, "%s table, dtype %d op %d, n %zu skew %zu "
                                        "mode %d: byte %zu differs from the baseline "
                                        "(0x%02x against 0x%02x)\n", dtype_isa_name(isa),
                                        dt, op, n, skew, mode, k, o1[k], o0[k]);
                                CU_FAIL("a table differs from the baseline");
                                goto next_op;
                            }
                        }
            next_op:;
            }
        }
    }
    for (int isa = DTYPE_ISA_BASE + 1; isa < DTYPE_ISA_N; isa++)
        if (compared[isa])
            printf("\n  %s table: %d kernels agree with the baseline", dtype_isa_name(isa),
                   compared[isa]);
        else
            printf("\n  %s table: this CPU does not run it, not compared", dtype_isa_name(isa));
    free(a); free(b); free(o0); free(o1);
}

static void test_choice(void)
{
    enum dtype_isa isa = dtype_reduce_isa();
    CU_ASSERT((unsigned)isa < DTYPE_ISA_N);
    CU_ASSERT_PTR_NOT_NULL(dtype_reduce_kernel(VC_INT8, VC_SUM, isa));
    /* the widest the CPU runs: nothing wider is runnable */
    for (int w = isa + 1; w < DTYPE_ISA_N; w++)
        CU_ASSERT_PTR_NULL(dtype_reduce_kernel(VC_INT8, VC_SUM, w));
    CU_ASSERT_PTR_NULL(dtype_reduce_kernel(VC_INT8, VC_SUM, DTYPE_ISA_N));
    CU_ASSERT_PTR_NULL(dtype_reduce_kernel(VC_FLOAT, VC_BAND, DTYPE_ISA_BASE));
    printf("\n  dtype_reduce3 uses the %s table", dtype_isa_name(isa));
}

/* the dispatched path against loops written here */
static void test_reference(void)
{
    enum { N = 1031 };
    int8_t a8[N], b8[N], o8[N];
    uint16_t a16[N], b16[N], o16[N];
    float af[N], bf[N], of[N];
    double ad[N], bd[N], od[N];
    fill((unsigned char *)a8, N, VC_INT8); fill((unsigned char *)b8, N, VC_INT8);
    fill((unsigned char *)a16, N, VC_UINT16); fill((unsigned char *)b16, N, VC_UINT16);
    fill((unsigned char *)af, N, VC_FLOAT); fill((unsigned char *)bf, N, VC_FLOAT);
    fill((unsigned char *)ad, N, VC_DOUBLE); fill((unsigned char *)bd, N, VC_DOUBLE);
    dtype_reduce3(o8, a8, b8, N, VC_INT8, VC_SUM);
    dtype_reduce3(o16, a16, b16, N, VC_UINT16, VC_PROD);
    dtype_reduce3(of, af, bf, N, VC_FLOAT, VC_MIN);
    dtype_reduce3(od, ad, bd, N, VC_DOUBLE, VC_SUM);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int8_t s8 = (int8_t)(uint8_t)((unsigned)(uint8_t)a8[i] + (uint8_t)b8[i]);
        uint16_t p16 = (uint16_t)((uint32_t)a16[i] * b16[i]);
        float mf = af[i] < bf[i] ? af[i] : bf[i];
        double sd = ad[i] + bd[i];
        bad += o8[i] != s8;
        bad += o16[i] != p16;
        bad += memcmp(&of[i], &mf, sizeof mf) != 0;
        bad += memcmp(&od[i], &sd, sizeof sd) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("reduce kernels per instruction set", NULL, NULL);
    CU_add_test(s, "every table gives the baseline's bits", test_tables_agree);
    CU_add_test(s, "the table in use is one this CPU runs", test_choice);
    CU_add_test(s, "results against loops written here", test_reference);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
