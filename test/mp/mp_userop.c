/*
 * mp_userop.c -- user ops with a context on opaque elements
 * (vc_op_create_ctx, vc_dtype_opaque): the algorithms must hand the op whole
 * elements only, keep rank order for a non-commutative op, and pass the
 * context through. Checked against products and sums computed here.
 *
 * Elements: a 2x2 integer matrix mod a prime (16 bytes, non-commutative
 * product; the prime comes through the context), 3 ints (12 bytes, an odd
 * size; commutative sum), and a 2500-double vector (20000 bytes: larger than
 * the shared-memory reduction window and the kernel's stack bounce).
 */
#include "mp_util.h"

typedef struct { int64_t m[4]; } mat_t;   /* 32 bytes: int64 for the products */
typedef struct { int v[3]; } tri_t;
#define BIGN 2500
typedef struct { double v[BIGN]; } big_t;

typedef struct { int64_t p; unsigned long calls; } mat_ctx_t;

static void mat_mul(const mat_t *a, const mat_t *b, mat_t *out, int64_t p)
{
    mat_t r;
    r.m[0] = (a->m[0] * b->m[0] + a->m[1] * b->m[2]) % p;
    r.m[1] = (a->m[0] * b->m[1] + a->m[1] * b->m[3]) % p;
    r.m[2] = (a->m[2] * b->m[0] + a->m[3] * b->m[2]) % p;
    r.m[3] = (a->m[2] * b->m[1] + a->m[3] * b->m[3]) % p;
    *out = r;
}

/* inout = in * inout (in holds the lower ranks) */
static void mat_op(const void *in, void *inout, size_t count, vc_dtype_t dt, void *ctx)
{
    mat_ctx_t *c = ctx;
    size_t sz;
    if (vc_dtype_size(dt, &sz) || sz != sizeof(mat_t))
        FAIL("mat_op got an element of the wrong size");
    c->calls++;
    for (size_t i = 0; i < count; i++)
        mat_mul((const mat_t *)in + i, (mat_t *)inout + i, (mat_t *)inout + i, c->p);
}

static void tri_op(const void *in, void *inout, size_t count, vc_dtype_t dt, void *ctx)
{
    (void)dt;
    ++*(unsigned long *)ctx;
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++)
            ((tri_t *)inout)[i].v[k] += ((const tri_t *)in)[i].v[k];
}

static void big_op(const void *in, void *inout, size_t count, vc_dtype_t dt, void *ctx)
{
    (void)dt, (void)ctx;
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < BIGN; k++)
            ((big_t *)inout)[i].v[k] += ((const big_t *)in)[i].v[k];
}

static mat_t mat_of(int rank, size_t i)
{
    mat_t m = {{(rank * 7 + (int64_t)i) % 13 + 1, rank + 2, (int64_t)i % 5, rank % 3 + 1}};
    return m;
}

/* product of ranks lo..hi-1 of element i, in rank order */
static mat_t mat_ref(int lo, int hi, size_t i, int64_t p)
{
    mat_t r = mat_of(lo, i);
    for (int k = lo + 1; k < hi; k++) {
        mat_t b = mat_of(k, i);
        mat_mul(&r, &b, &r, p);
    }
    return r;
}

static int mat_eq(const mat_t *a, const mat_t *b)
{
    return !memcmp(a, b, sizeof *a);
}

static void test_mat(size_t n, vc_op_t op, vc_dtype_t dt, int64_t p)
{
    mat_t *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        s[i] = mat_of(mp_rank, i);
    /* allreduce */
    OK(vc_allreduce(s, r, n, dt, op, VC_COMM_WORLD));
    for (size_t i = 0; i < n; i++) {
        mat_t want = mat_ref(0, mp_size, i, p);
        if (!mat_eq(&r[i], &want)) {
            FAIL("allreduce n=%zu: element %zu is not the rank-ordered product", n, i);
            break;
        }
    }
    /* reduce to the last rank, in place there */
    int root = mp_size - 1;
    if (mp_rank == root)
        memcpy(r, s, n * sizeof *r);
    OK(vc_reduce(mp_rank == root ? VC_IN_PLACE : s, r, n, dt, op, root, VC_COMM_WORLD));
    if (mp_rank == root)
        for (size_t i = 0; i < n; i++) {
            mat_t want = mat_ref(0, mp_size, i, p);
            if (!mat_eq(&r[i], &want)) {
                FAIL("reduce n=%zu: element %zu wrong", n, i);
                break;
            }
        }
    /* scan: the product of ranks 0..me */
    OK(vc_scan(s, r, n, dt, op, VC_COMM_WORLD));
    for (size_t i = 0; i < n; i++) {
        mat_t want = mat_ref(0, mp_rank + 1, i, p);
        if (!mat_eq(&r[i], &want)) {
            FAIL("scan n=%zu: element %zu wrong", n, i);
            break;
        }
    }
    /* non-blocking allreduce */
    vc_request_t q;
    OK(vc_iallreduce(s, r, n, dt, op, VC_COMM_WORLD, &q));
    OK(vc_wait(&q, VC_STATUS_IGNORE));
    for (size_t i = 0; i < n; i++) {
        mat_t want = mat_ref(0, mp_size, i, p);
        if (!mat_eq(&r[i], &want)) {
            FAIL("iallreduce n=%zu: element %zu wrong", n, i);
            break;
        }
    }
    free(s);
    free(r);
}

static void test_tri(size_t n, vc_op_t op, vc_dtype_t dt)
{
    tri_t *s = malloc(n * mp_size * sizeof *s), *r = malloc(n * mp_size * sizeof *r);
    for (size_t i = 0; i < n * mp_size; i++)
        for (int k = 0; k < 3; k++)
            s[i].v[k] = mp_rank * 3 + k + (int)i;
    OK(vc_allreduce(s, r, n, dt, op, VC_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            int want = 3 * (mp_size * (mp_size - 1) / 2) + mp_size * (k + (int)i);
            if (r[i].v[k] != want) {
                FAIL("tri allreduce n=%zu: [%zu].%d = %d, want %d", n, i, k, r[i].v[k], want);
                i = n;
                break;
            }
        }
    /* reduce_scatter_block: my block is elements me*n .. me*n+n-1 */
    OK(vc_reduce_scatter_block(s, r, n, dt, op, VC_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            size_t g = (size_t)mp_rank * n + i;
            int want = 3 * (mp_size * (mp_size - 1) / 2) + mp_size * (k + (int)g);
            if (r[i].v[k] != want) {
                FAIL("tri reduce_scatter_block n=%zu: [%zu].%d wrong", n, i, k);
                i = n;
                break;
            }
        }
    free(s);
    free(r);
}

static void test_big(vc_op_t op, vc_dtype_t dt)
{
    size_t n = 3;
    big_t *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < BIGN; k++)
            s[i].v[k] = mp_rank + k * 0.5 + (double)i;
    OK(vc_allreduce(s, r, n, dt, op, VC_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < BIGN; k++) {
            double want = mp_size * (mp_size - 1) / 2.0 + mp_size * (k * 0.5 + (double)i);
            if (r[i].v[k] != want) {
                FAIL("big allreduce: [%zu].%d = %g, want %g", i, k, r[i].v[k], want);
                i = n;
                break;
            }
        }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    vc_dtype_t dmat, dtri, dbig, bad;
    EXPECT_RC(vc_dtype_opaque(0, &bad), VC_ERR_COUNT);
    EXPECT_RC(vc_dtype_opaque((size_t)VC_DTYPE_OPAQUE_MAX + 1, &bad), VC_ERR_COUNT);
    EXPECT_RC(vc_dtype_opaque(8, NULL), VC_ERR_ARG);
    OK(vc_dtype_opaque(sizeof(mat_t), &dmat));
    OK(vc_dtype_opaque(sizeof(tri_t), &dtri));
    OK(vc_dtype_opaque(sizeof(big_t), &dbig));
    size_t sz = 0;
    OK(vc_dtype_size(dtri, &sz));
    if (sz != sizeof(tri_t))
        FAIL("vc_dtype_size of a 12-byte opaque element: %zu", sz);

    /* built-in ops do not know what is inside */
    tri_t one = {{1, 2, 3}}, out;
    EXPECT_RC(vc_allreduce(&one, &out, 1, dtri, VC_SUM, VC_COMM_WORLD), VC_ERR_OP);

    mat_ctx_t mc = {1000003, 0};
    unsigned long tcalls = 0;
    vc_op_t mop, top, bop;
    EXPECT_RC(vc_op_create_ctx(NULL, &mc, 0, &mop), VC_ERR_ARG);
    OK(vc_op_create_ctx(mat_op, &mc, 0, &mop));
    OK(vc_op_create_ctx(tri_op, &tcalls, 1, &top));
    OK(vc_op_create_ctx(big_op, NULL, 1, &bop));

    size_t counts[] = {1, 7, 1000};
    for (unsigned c = 0; c < sizeof counts / sizeof *counts; c++) {
        test_mat(counts[c], mop, dmat, mc.p);
        test_tri(counts[c], top, dtri);
    }
    test_big(bop, dbig);
    /* opaque elements move as a whole in data movement too */
    tri_t b[5];
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 3; k++)
            b[i].v[k] = mp_rank == 0 ? i * 10 + k : -1;
    OK(vc_bcast(b, 5, dtri, 0, VC_COMM_WORLD));
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 3; k++)
            if (b[i].v[k] != i * 10 + k)
                FAIL("bcast of opaque elements: [%d].%d = %d", i, k, b[i].v[k]);
    /* some rank combined (not every one does: a non-power-of-two prologue
       leaves ranks that only send and receive) */
    int mine[2] = {mc.calls > 0, tcalls > 0}, any[2];
    OK(vc_allreduce(mine, any, 2, VC_INT32, VC_MAX, VC_COMM_WORLD));
    if (mp_size > 1 && (!any[0] || !any[1]))
        FAIL("the context did not reach the op (mat %d, tri %d)", any[0], any[1]);

    OK(vc_op_free(&mop));
    OK(vc_op_free(&top));
    OK(vc_op_free(&bop));
    OK(vc_finalize());
    if (mp_fails)
        return 1;
    if (mp_rank == 0)
        printf("mp_userop: %d ranks, all checks passed\n", mp_size);
    return 0;
}
