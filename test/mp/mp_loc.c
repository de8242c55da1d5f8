/*
 * mp_loc.c -- VC_MINLOC / VC_MAXLOC on the four pair types through
 * vc_allreduce (also in place), vc_iallreduce, vc_reduce at every root,
 * vc_scan and vc_reduce_scatter_block,
 * with many ties on the value (and on value and index), checked against an
 * argmin / argmax computed here over all ranks' inputs.
 * Self-checking; exits non-zero on any mismatch. Run with any np >= 1.
 */
#include "mp_util.h"

typedef struct { float v; int32_t i; } float_int;
typedef struct { double v; int32_t i; } double_int;
typedef struct { int32_t v; int32_t i; } int32_int;
typedef struct { int64_t v; int32_t i; } int64_int;

static const vc_dtype_t pair_types[4] = {VC_FLOAT_INT, VC_DOUBLE_INT, VC_INT32_INT,
                                         VC_INT64_INT};
static const char *const pair_names[4] = {"FLOAT_INT", "DOUBLE_INT", "INT32_INT",
                                          "INT64_INT"};
static const size_t pair_sizes[4] = {sizeof(float_int), sizeof(double_int),
                                     sizeof(int32_int), sizeof(int64_int)};

/* Rank r's element e: a value from -3..3 (so ranks tie often) and an index
   that is usually the rank but every third element a small number shared
   by several ranks (ties on both). */
static int64_t val_of(int r, size_t e) { return (int64_t)((r * 3 + e * 5 + (e >> 3)) % 7) - 3; }
static int32_t idx_of(int r, size_t e) { return e % 3 == 2 ? (int32_t)((r + e) % 3) : r; }

/* the value as stored: scaled so that each type's range is exercised;
   positive scales keep the order */
static void put(int t, void *buf, size_t e, int64_t v, int32_t i)
{
    switch (t) {
    case 0: ((float_int *)buf)[e] = (float_int){(float)v * 0.375f, i}; break;
    case 1: ((double_int *)buf)[e] = (double_int){(double)v * 1e200, i}; break;
    case 2: ((int32_int *)buf)[e] = (int32_int){(int32_t)v * 100000000, i}; break;
    default: ((int64_int *)buf)[e] = (int64_int){v * ((int64_t)1 << 60) / 4, i}; break;
    }
}

/* does element e of buf hold (value v, index i)? */
static int holds(int t, const void *buf, size_t e, int64_t v, int32_t i)
{
    _Alignas(16) char want[16];
    put(t, want, 0, v, i);
    switch (t) {
    case 0: return ((const float_int *)buf)[e].v == ((float_int *)want)->v &&
                   ((const float_int *)buf)[e].i == i;
    case 1: return ((const double_int *)buf)[e].v == ((double_int *)want)->v &&
                   ((const double_int *)buf)[e].i == i;
    case 2: return ((const int32_int *)buf)[e].v == ((int32_int *)want)->v &&
                   ((const int32_int *)buf)[e].i == i;
    default: return ((const int64_int *)buf)[e].v == ((int64_int *)want)->v &&
                    ((const int64_int *)buf)[e].i == i;
    }
}

/* reference: scan the logical inputs of ranks 0..upto-1 */
static void expected(vc_op_t op, size_t e, int upto, int64_t *v, int32_t *i)
{
    *v = val_of(0, e);
    for (int r = 1; r < upto; r++) {
        int64_t x = val_of(r, e);
        if (op == VC_MINLOC ? x < *v : x > *v)
            *v = x;
    }
    *i = INT32_MAX;
    for (int r = 0; r < upto; r++)
        if (val_of(r, e) == *v && idx_of(r, e) < *i)
            *i = idx_of(r, e);
}

/* elements first..first+count-1 of the reduction over ranks 0..upto-1 */
static void check_part(const char *what, int t, vc_op_t op, const void *buf, size_t first,
                       size_t count, int upto)
{
    for (size_t e = first; e < first + count; e++) {
        int64_t v;
        int32_t i;
        expected(op, e, upto, &v, &i);
        if (!holds(t, buf, e - first, v, i)) {
            FAIL("%s %s %s count %zu: element %zu is not (%lld, %d)", what, pair_names[t],
                 op == VC_MINLOC ? "MINLOC" : "MAXLOC", count, e, (long long)v, i);
            return;
        }
    }
}

static void check(const char *what, int t, vc_op_t op, const void *buf, size_t count)
{
    check_part(what, t, op, buf, 0, count, mp_size);
}

static void run(int t, vc_op_t op, size_t count)
{
    size_t es = pair_sizes[t], n = count * es;
    char *s = malloc(n + 1), *r = malloc(n + 1);
    memset(s, 0, n + 1);
    for (size_t e = 0; e < count; e++)
        put(t, s, e, val_of(mp_rank, e), idx_of(mp_rank, e));

    OK(vc_allreduce(s, r, count, pair_types[t], op, VC_COMM_WORLD));
    check("allreduce", t, op, r, count);

    memcpy(r, s, n);
    OK(vc_allreduce(VC_IN_PLACE, r, count, pair_types[t], op, VC_COMM_WORLD));
    check("allreduce in place", t, op, r, count);

    vc_request_t q;
    memset(r, 0xa5, n);
    OK(vc_iallreduce(s, r, count, pair_types[t], op, VC_COMM_WORLD, &q));
    OK(vc_wait(&q, NULL));
    check("iallreduce", t, op, r, count);

    /* prefix: rank r gets ranks 0..r */
    memset(r, 0xa5, n);
    OK(vc_scan(s, r, count, pair_types[t], op, VC_COMM_WORLD));
    check_part("scan", t, op, r, 0, count, mp_rank + 1);

    int step = mp_size > 4 ? 3 : 1;
    for (int root = 0; root < mp_size; root += step) {
        memset(r, 0xa5, n);
        OK(vc_reduce(s, mp_rank == root ? r : NULL, count, pair_types[t], op, root,
                     VC_COMM_WORLD));
        if (mp_rank == root)
            check("reduce", t, op, r, count);
    }
    free(s);
    free(r);
}

/* reduce_scatter_block: rank r gets block r of the full reduction */
static void run_scatter(int t, vc_op_t op, size_t per)
{
    size_t es = pair_sizes[t], total = per * (size_t)mp_size;
    char *s = calloc(total + 1, es), *r = malloc(per * es + 1);
    for (size_t e = 0; e < total; e++)
        put(t, s, e, val_of(mp_rank, e), idx_of(mp_rank, e));
    memset(r, 0xa5, per * es);
    OK(vc_reduce_scatter_block(s, r, per, pair_types[t], op, VC_COMM_WORLD));
    check_part("reduce_scatter_block", t, op, r, per * (size_t)mp_rank, per, mp_size);
    free(s);
    free(r);
}

static void bad_combinations(void)
{
    double_int a = {1.0, 0}, b;
    int32_t x = 1, y;
    uint8_t c = 1, d;
    EXPECT_RC(vc_allreduce(&a, &b, 1, VC_DOUBLE_INT, VC_SUM, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_allreduce(&a, &b, 1, VC_DOUBLE_INT, VC_MAX, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_reduce(&a, &b, 1, VC_DOUBLE_INT, VC_BAND, 0, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_allreduce(&x, &y, 1, VC_INT32, VC_MINLOC, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_allreduce(&x, &y, 1, VC_FLOAT, VC_MAXLOC, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_allreduce(&c, &d, 1, VC_BYTE, VC_SUM, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_allreduce(&c, &d, 1, VC_BYTE, VC_MAX, VC_COMM_WORLD), VC_ERR_OP);
    EXPECT_RC(vc_allreduce(&c, &d, 1, VC_BYTE, VC_LOR, VC_COMM_WORLD), VC_ERR_OP);
    /* bit ops on raw bytes are fine (as in MPI) */
    c = (uint8_t)(1u << (mp_rank % 8));
    OK(vc_allreduce(&c, &d, 1, VC_BYTE, VC_BOR, VC_COMM_WORLD));
    uint8_t want = 0;
    for (int r = 0; r < mp_size; r++)
        want |= (uint8_t)(1u << (r % 8));
    if (d != want)
        FAIL("BYTE BOR gave %#x, expected %#x", d, want);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    static const size_t counts[] = {1, 2, 7, 100, 3001};
    for (int t = 0; t < 4; t++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            run(t, VC_MINLOC, counts[c]);
            run(t, VC_MAXLOC, counts[c]);
        }
    for (int t = 0; t < 4; t++) {
        run_scatter(t, VC_MINLOC, 5);
        run_scatter(t, VC_MAXLOC, 301);
    }
    bad_combinations();
    return mp_finish("mp_loc");
}
