/*
 * test_coll_a2a.c -- alltoall(v), reduce_scatter(_block), scan and exscan
 * schedules, and rank order for non-commutative ops, without a network.
 *
 * Every rank's schedule runs in the in-process simulator (sim.c: strict
 * rendezvous matching, bounds, overlap, deadlock and SBUF-untouched
 * checks). Each rank's whole receive buffer is compared with what the
 * test expects from plain loops over the inputs: moved blocks where data
 * lands, the untouched fill pattern everywhere else (gaps between
 * alltoallv blocks, rank 0's exscan buffer). Reductions are folded here in
 * rank order, x0 op x1 op ... , so the non-commutative user op (composition
 * of affine maps) fails any algorithm that reorders it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CUnit/Basic.h>

#include "vcoll.h"
#include "coll/sched.h"
#include "dtype/dtype.h"
#include "core/ops.h"
#include "sim.h"
#include "coll_talg.h"

#define FILL 0xA5

static int ncases, nfail;

/* ------------------------------------------------------------------ */
/* ops and inputs                                                       */

enum { OP_I32_SUM, OP_DBL_SUM, OP_U8_MAX, OP_USER_COMM, OP_USER_AFFINE, NOPS };
static const char *const op_name[NOPS] = {"int32 sum", "double sum", "uint8 max",
                                          "user add (commutative)", "user affine"};

/* x -> a*x + b (mod 2^16), a in the high half: "f then g" is g(f(x)) */
static uint32_t affine_then(uint32_t f, uint32_t g)
{
    uint32_t a1 = f >> 16, b1 = f & 0xffff, a2 = g >> 16, b2 = g & 0xffff;
    return ((a1 * a2) & 0xffff) << 16 | ((a2 * b1 + b2) & 0xffff);
}

/* the vc_user_fn contract: inout[i] = in[i] op inout[i] */
static void affine_fn(const void *in, void *inout, size_t n, vc_dtype_t dt)
{
    const uint32_t *x = in;
    uint32_t *y = inout;
    (void)dt;
    for (size_t i = 0; i < n; i++)
        y[i] = affine_then(x[i], y[i]);
}

static void add_fn(const void *in, void *inout, size_t n, vc_dtype_t dt)
{
    const uint32_t *x = in;
    uint32_t *y = inout;
    (void)dt;
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}

static vc_dtype_t op_dt(int op)
{
    return op == OP_DBL_SUM ? VC_DOUBLE : op == OP_U8_MAX ? VC_UINT8
           : op == OP_I32_SUM ? VC_INT32 : VC_UINT32;
}

static size_t op_es(int op) { return dtype_size(op_dt(op)); }

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* element e of rank r's input */
static void val(int op, int r, size_t e, void *out)
{
    uint64_t h = mix((uint64_t)r * 7919u + e * 104729u + (uint64_t)op * 31u + 5);
    switch (op) {
    case OP_I32_SUM: *(int32_t *)out = (int32_t)(h % 2001) - 1000; break;
    case OP_DBL_SUM: *(double *)out = (double)((int)(h % 17) - 8); break;
    case OP_U8_MAX: *(uint8_t *)out = (uint8_t)h; break;
    case OP_USER_COMM: *(uint32_t *)out = (uint32_t)h; break;
    default:    /* odd multipliers keep every composition informative */
        *(uint32_t *)out = (uint32_t)(((h >> 16) | 1) & 0xffff) << 16 | (uint32_t)(h & 0xffff);
    }
}

/* acc = acc op x, plain arithmetic */
static void fold(int op, void *acc, const void *x)
{
    switch (op) {
    case OP_I32_SUM:
        *(int32_t *)acc = (int32_t)((uint32_t)*(int32_t *)acc + (uint32_t)*(const int32_t *)x);
        break;
    case OP_DBL_SUM: *(double *)acc += *(const double *)x; break;
    case OP_U8_MAX:
        if (*(const uint8_t *)x > *(uint8_t *)acc)
            *(uint8_t *)acc = *(const uint8_t *)x;
        break;
    case OP_USER_COMM: *(uint32_t *)acc += *(const uint32_t *)x; break;
    default: *(uint32_t *)acc = affine_then(*(uint32_t *)acc, *(const uint32_t *)x);
    }
}

/* x_lo op ... op x_hi-1 of element e into out (hi > lo) */
static void fold_ranks(int op, int lo, int hi, size_t e, void *out)
{
    unsigned char x[8];
    val(op, lo, e, out);
    for (int q = lo + 1; q < hi; q++) {
        val(op, q, e, x);
        fold(op, out, x);
    }
}

/* alltoall payload: element i of the block from rank src to rank dst */
static uint32_t a2a_val(int src, int dst, size_t i)
{
    return (uint32_t)mix(((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ i);
}

/* alltoallv counts: symmetric ones (in place needs scount == rcount) or
   not; about one block in five is empty */
static size_t vcount(int shape, int src, int dst)
{
    int a = src, b = dst;
    if (shape == 1 && a > b) {
        a = dst;
        b = src;
    }
    uint64_t h = mix((uint64_t)a * 131u + (uint64_t)b * 7u + 3);
    return h % 5 == 0 ? 0 : (size_t)(h % 9);
}

/* ------------------------------------------------------------------ */
/* one case                                                             */

typedef struct {
    int kind, alg, p, inplace;
    size_t count;   /* per pair / block / rank; reduce_scatter: scale */
    int shape;      /* alltoallv: 0 any, 1 symmetric; reduce_scatter: counts */
    int op;
    int root;       /* reduce */
} tcase_t;

typedef struct {
    size_t *sc, *sd, *rc, *rd;   /* this rank's alltoallv arrays */
} vec_t;

static void report(const tcase_t *t, const char *what)
{
    fprintf(stderr, "\n  FAIL %s p=%d count=%zu shape=%d inplace=%d op=%s root=%d: %s\n",
            talg(t->kind, t->alg)->name, t->p, t->count, t->shape, t->inplace,
            op_name[t->op], t->root, what);
}

static int is_reducing(int kind)
{
    return kind != COLL_ALLTOALL && kind != COLL_ALLTOALLV;
}

/* reduce_scatter block sizes (shape 0: uniform, i.e. the block kind) */
static size_t rs_count(const tcase_t *t, int j)
{
    if (t->kind == COLL_REDUCE_SCATTER_BLOCK || t->shape == 0)
        return t->count;
    return (size_t)(mix((uint64_t)j * 17u + (uint64_t)t->shape) % (3 * t->count + 2)) *
           ((j + t->shape) % 4 != 0);
}

/* alltoallv layout of rank r: sends packed in reverse peer order with a
   one-element gap, receives in peer order with two-element gaps (in place:
   the receive layout is the input layout) */
static size_t vlayout(const tcase_t *t, int r, vec_t *v)
{
    size_t pos = 1, rpos = 2;
    for (int j = t->p - 1; j >= 0; j--) {
        v->sc[j] = vcount(t->shape, r, j) * t->count;
        v->sd[j] = pos;
        pos += v->sc[j] + 1;
    }
    for (int j = 0; j < t->p; j++) {
        v->rc[j] = vcount(t->shape, j, r) * t->count;
        v->rd[j] = rpos;
        rpos += v->rc[j] + 2;
    }
    return pos > rpos ? pos : rpos;
}

/* returns 0 if the case passed */
static int run_case(const tcase_t *t)
{
    static sim_t S;
    static vec_t V[MAXP];
    static size_t store[MAXP][4][MAXP];
    int p = t->p, kind = t->kind;
    int op = is_reducing(kind) ? t->op : OP_USER_COMM;   /* alltoall: uint32 data */
    size_t es = op_es(op);
    unsigned char *want[MAXP] = {0};
    size_t cmp_len[MAXP];
    size_t rsoff[MAXP + 1], rscounts[MAXP];
    int bad = 0;

    memset(&S, 0, sizeof S);
    S.p = p;
    rsoff[0] = 0;
    for (int j = 0; j < p; j++) {
        rscounts[j] = rs_count(t, j);
        rsoff[j + 1] = rsoff[j] + rscounts[j];
    }

    for (int r = 0; r < p; r++) {
        sim_rank_t *R = &S.r[r];
        int ip = t->inplace && (kind != COLL_REDUCE || r == t->root);
        coll_args_t a;
        size_t sl = 0, rl = 0, cnt = t->count, n = t->count * es;
        V[r] = (vec_t){store[r][0], store[r][1], store[r][2], store[r][3]};
        switch (kind) {
        case COLL_ALLTOALL: sl = rl = n * (size_t)p; break;
        case COLL_ALLTOALLV: sl = rl = vlayout(t, r, &V[r]) * es; break;
        case COLL_REDUCE_SCATTER_BLOCK:
        case COLL_REDUCE_SCATTER:
            sl = rsoff[p] * es;
            rl = ip ? sl : rs_count(t, r) * es;
            if (kind == COLL_REDUCE_SCATTER)
                cnt = rsoff[p] / (size_t)p;
            break;
        case COLL_REDUCE: sl = n; rl = r == t->root ? n : 0; break;
        default: sl = rl = n; break;
        }
        coll_args_set(&a, kind, r, p, t->root, cnt, op_dt(op), VC_SUM, ip);
        if (op >= OP_USER_COMM) {
            a.op = (vc_op_t)64;
            static const ops_user_t affine_u = {.fn = affine_fn}, add_u = {.fn = add_fn};
            a.ufn = op == OP_USER_AFFINE ? &affine_u : &add_u;
            a.noncomm = op == OP_USER_AFFINE;
        } else if (op == OP_U8_MAX) {
            a.op = VC_MAX;
        }
        if (kind == COLL_ALLTOALLV)
            coll_args_vec(&a, kind, ip ? NULL : V[r].sc, ip ? NULL : V[r].sd, V[r].rc, V[r].rd);
        else if (kind == COLL_REDUCE_SCATTER)
            coll_args_vec(&a, kind, rscounts, NULL, NULL, NULL);
        sched_init(&R->s, &a);
        if (talg(kind, t->alg)->build(&a, &R->s) != VC_SUCCESS) {
            report(t, "builder failed");
            bad = 1;
            goto out;
        }
        R->know = 1ULL << r;
        R->len[COLL_SBUF] = ip ? 0 : sl;
        R->len[COLL_RBUF] = rl;
        R->len[COLL_TMP] = R->s.tmp_bytes;
        for (int b = 0; b < COLL_NBUF; b++) {
            R->buf[b] = sim_buf(R->len[b] + 1);
            memset(R->buf[b], FILL, R->len[b] + 1);
        }
        unsigned char *in = R->buf[ip ? COLL_RBUF : COLL_SBUF];
        want[r] = malloc(rl + 1);
        memset(want[r], FILL, rl + 1);
        cmp_len[r] = rl;
        /* input, and what the receive buffer must hold afterwards */
        switch (kind) {
        case COLL_ALLTOALL:
            for (int j = 0; j < p; j++)
                for (size_t i = 0; i < cnt; i++) {
                    ((uint32_t *)in)[(size_t)j * cnt + i] = a2a_val(r, j, i);
                    ((uint32_t *)want[r])[(size_t)j * cnt + i] = a2a_val(j, r, i);
                }
            break;
        case COLL_ALLTOALLV:
            for (int j = 0; j < p; j++) {
                size_t sc = ip ? V[r].rc[j] : V[r].sc[j], sd = ip ? V[r].rd[j] : V[r].sd[j];
                for (size_t i = 0; i < sc; i++)
                    ((uint32_t *)in)[sd + i] = a2a_val(r, j, i);
                for (size_t i = 0; i < V[r].rc[j]; i++)
                    ((uint32_t *)want[r])[V[r].rd[j] + i] = a2a_val(j, r, i);
            }
            break;
        case COLL_REDUCE_SCATTER_BLOCK:
        case COLL_REDUCE_SCATTER:
            for (size_t e = 0; e < rsoff[p]; e++)
                val(op, r, e, in + e * es);
            for (size_t i = 0; i < rs_count(t, r); i++)
                fold_ranks(op, 0, p, rsoff[r] + i, want[r] + i * es);
            cmp_len[r] = rs_count(t, r) * es;   /* in place: the rest is undefined */
            break;
        default:    /* reduce, allreduce, scan, exscan */
            for (size_t e = 0; e < cnt; e++)
                val(op, r, e, in + e * es);
            if (kind == COLL_EXSCAN && r == 0) {
                memcpy(want[r], R->buf[COLL_RBUF], rl);   /* untouched */
                break;
            }
            if (kind == COLL_REDUCE && r != t->root)
                break;
            for (size_t e = 0; e < cnt; e++)
                fold_ranks(op, 0, kind == COLL_SCAN ? r + 1 : kind == COLL_EXSCAN ? r : p, e,
                           want[r] + e * es);
        }
    }

    if (sim_run(&S)) {
        report(t, failmsg);
        bad = 1;
        goto out;
    }
    for (int r = 0; r < p && !bad; r++) {
        sim_rank_t *R = &S.r[r];
        /* every rank that receives data must have heard from those it needs */
        uint64_t need = 0;
        if (kind == COLL_SCAN || kind == COLL_EXSCAN)
            need = t->count ? (r == 63 ? ~0ULL >> 1 : (1ULL << r) - 1) : 0;
        else if (kind == COLL_ALLTOALL || kind == COLL_ALLREDUCE ||
                 ((kind == COLL_REDUCE_SCATTER || kind == COLL_REDUCE_SCATTER_BLOCK) &&
                  rs_count(t, r)))
            need = t->count ? (p == 64 ? ~0ULL : (1ULL << p) - 1) : 0;
        if ((R->know & need) != need) {
            snprintf(failmsg, sizeof failmsg, "rank %d did not hear from all it must", r);
            report(t, failmsg);
            bad = 1;
        } else if (memcmp(R->buf[COLL_RBUF], want[r], cmp_len[r])) {
            size_t i = 0;
            while (R->buf[COLL_RBUF][i] == want[r][i])
                i++;
            snprintf(failmsg, sizeof failmsg, "rank %d: receive buffer differs at byte %d",
                     r, (int)i);
            report(t, failmsg);
            bad = 1;
        }
        for (int b = 0; b < COLL_NBUF && !bad; b++)
            if (R->buf[b][R->len[b]] != FILL) {
                report(t, "wrote past a buffer end");
                bad = 1;
            }
    }
    /* allreduce: identical bits everywhere */
    for (int r = 1; r < p && !bad && kind == COLL_ALLREDUCE; r++)
        if (memcmp(S.r[r].buf[COLL_RBUF], S.r[0].buf[COLL_RBUF], t->count * es)) {
            report(t, "bits differ between ranks");
            bad = 1;
        }
out:
    for (int r = 0; r < p; r++)
        free(want[r]);
    sim_free(&S);
    return bad;
}

static void check_case(tcase_t t)
{
    ncases++;
    if (run_case(&t))
        nfail++;
}

/* p = 1..16, then a dense sample up to 64 */
static const int psizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                             17, 19, 20, 23, 24, 27, 31, 32, 33, 40, 47, 48, 55, 63, 64};
#define NPS (int)(sizeof psizes / sizeof *psizes)

static int rank_ordered_name(const char *name)
{
    /* independent of select.c: the algorithms this test knows reorder */
    static const char *const reorder[] = {"rsag", "rabenseifner", "ring",
                                          "recursive_halving"};
    for (size_t i = 0; i < sizeof reorder / sizeof *reorder; i++)
        if (!strcmp(name, reorder[i]))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ */
/* suites                                                               */

static void test_alltoall(void)
{
    int before = nfail;
    for (int alg = 1; alg < tnsched(COLL_ALLTOALL); alg++)
        for (int pi = 0; pi < NPS; pi++)
            for (size_t c = 0; c < 4; c++) {
                size_t counts[] = {0, 1, 3, 13};
                for (int ip = 0; ip < 2; ip++)
                    check_case((tcase_t){COLL_ALLTOALL, alg, psizes[pi], ip, counts[c], 0,
                                         0, 0});
            }
    CU_ASSERT_EQUAL(nfail, before);
}

static void test_alltoallv(void)
{
    int before = nfail;
    for (int alg = 1; alg < tnsched(COLL_ALLTOALLV); alg++)
        for (int pi = 0; pi < NPS; pi++)
            for (size_t scale = 0; scale < 3; scale++)
                for (int ip = 0; ip < 2; ip++)
                    for (int shape = ip; shape < 2; shape++)
                        check_case((tcase_t){COLL_ALLTOALLV, alg, psizes[pi], ip, scale, shape,
                                             0, 0});
    CU_ASSERT_EQUAL(nfail, before);
}

static void test_reduce_scatter(void)
{
    int before = nfail;
    int kinds[] = {COLL_REDUCE_SCATTER_BLOCK, COLL_REDUCE_SCATTER};
    for (int ki = 0; ki < 2; ki++)
        for (int alg = 1; alg < tnsched(kinds[ki]); alg++)
            for (int pi = 0; pi < NPS; pi++)
                for (int op = 0; op < NOPS; op++) {
                    int ordered = rank_ordered_name(talg(kinds[ki], alg)->name);
                    if (op == OP_USER_AFFINE && !ordered)
                        continue;
                    size_t counts[] = {0, 1, 2, 7};
                    for (int c = 0; c < 4; c++)
                        for (int ip = 0; ip < 2; ip++)
                            for (int shape = 0; shape < (ki ? 3 : 1); shape++)
                                check_case((tcase_t){kinds[ki], alg, psizes[pi], ip,
                                                     counts[c], shape, op, 0});
                }
    CU_ASSERT_EQUAL(nfail, before);
}

static void test_scan(void)
{
    int before = nfail;
    int kinds[] = {COLL_SCAN, COLL_EXSCAN};
    for (int ki = 0; ki < 2; ki++)
        for (int alg = 1; alg < tnsched(kinds[ki]); alg++)
            for (int pi = 0; pi < NPS; pi++)
                for (int op = 0; op < NOPS; op++) {
                    size_t counts[] = {0, 1, 5, 300};
                    for (int c = 0; c < 4; c++)
                        for (int ip = 0; ip < 2; ip++)
                            check_case((tcase_t){kinds[ki], alg, psizes[pi], ip, counts[c],
                                                 0, op, 0});
                }
    CU_ASSERT_EQUAL(nfail, before);
}

/* the affine op really detects reordering: a reordering algorithm fails */
static void test_affine_detects_order(void)
{
    tcase_t t = {COLL_REDUCE_SCATTER_BLOCK, 1, 4, 0, 3, 0, OP_USER_AFFINE, 0};
    CU_ASSERT_STRING_EQUAL(talg(t.kind, t.alg)->name, "recursive_halving");
    fprintf(stderr, "\n  (a FAIL line for recursive_halving p=4 is expected here)");
    CU_ASSERT_NOT_EQUAL(run_case(&t), 0);
    int nc = 0;
    for (int alg = 1; alg < tnsched(COLL_ALLREDUCE); alg++)
        if (!rank_ordered_name(talg(COLL_ALLREDUCE, alg)->name)) {
            tcase_t u = {COLL_ALLREDUCE, alg, 5, 0, 64, 0, OP_USER_AFFINE, 0};
            fprintf(stderr, "\n  (a FAIL line for allreduce %s p=5 is expected here)",
                    talg(COLL_ALLREDUCE, alg)->name);
            nc += run_case(&u) != 0;
        }
    CU_ASSERT_EQUAL(nc, 2);   /* rabenseifner and ring */
}

/* coll_select with noncomm: never a reordering algorithm, and what it picks
   reduces a non-commutative op correctly */
static void test_select_noncomm(void)
{
    int before = nfail;
    int kinds[] = {COLL_REDUCE, COLL_ALLREDUCE, COLL_REDUCE_SCATTER_BLOCK,
                   COLL_REDUCE_SCATTER, COLL_SCAN, COLL_EXSCAN};
    size_t bytes[] = {0, 4, 64, 1024, 8192, 65536, 1u << 20, (size_t)1 << 30};
    for (int ki = 0; ki < 6; ki++) {
        int kind = kinds[ki], picked[16] = {0};
        for (int p = 1; p <= 4096; p = p < 20 ? p + 1 : p * 2 - 1)
            for (size_t b = 0; b < sizeof bytes / sizeof *bytes; b++)
                for (int ov = 0; ov < 2; ov++) {
                    int alg = tselect(kind, p, bytes[b], bytes[b] / 4, ov, 1);
                    CU_ASSERT_FATAL(alg >= 1 && alg < tnsched(kind));
                    if (!rank_ordered_name(talg(kind, alg)->name)) {
                        fprintf(stderr, "\n  FAIL select picked %s for a non-commutative op\n",
                                talg(kind, alg)->name);
                        nfail++;
                    }
                    picked[alg] = 1;
                    /* and the table in select.c agrees */
                    CU_ASSERT(trank_ordered(kind, alg));
                }
        for (int alg = 1; alg < tnsched(kind); alg++) {
            if (!picked[alg])
                continue;
            for (int pi = 0; pi < NPS; pi++) {
                int p = psizes[pi];
                size_t counts[] = {0, 1, 7, 100};
                for (int c = 0; c < 4; c++)
                    for (int root = 0; root < p; root += kind == COLL_REDUCE && p <= 9 ? 1 : p) {
                        for (int ip = 0; ip < 2; ip++) {
                            check_case((tcase_t){kind, alg, p, ip, counts[c], 2,
                                                 OP_USER_AFFINE, root});
                            if (kind == COLL_REDUCE && p > 9)   /* a few roots */
                                for (int k = 1; k < 4; k++)
                                    check_case((tcase_t){kind, alg, p, ip, counts[c], 2,
                                                         OP_USER_AFFINE, k * p / 4});
                        }
                    }
            }
        }
    }
    /* and every algorithm select.c calls rank-ordered really is */
    for (int ki = 0; ki < 6; ki++)
        for (int alg = 1; alg < tnsched(kinds[ki]); alg++)
            CU_ASSERT_EQUAL(trank_ordered(kinds[ki], alg),
                            rank_ordered_name(talg(kinds[ki], alg)->name));
    CU_ASSERT_EQUAL(nfail, before);
}

/* auto choices for the new kinds, commutative */
static void test_select(void)
{
    for (int kind = COLL_ALLTOALL; kind <= COLL_EXSCAN; kind++)
        for (int p = 1; p <= 1024; p = p * 2 + 1)
            for (size_t b = 0; b <= (1u << 24); b = b ? b * 8 : 1)
                for (int ov = 0; ov < 2; ov++) {
                    int a = tselect(kind, p, b, b, ov, 0);
                    CU_ASSERT(a >= 1 && a < tnsched(kind));
                }
    CU_ASSERT_STRING_EQUAL(talg(COLL_ALLTOALL, tselect(COLL_ALLTOALL, 16, 8, 8, 0, 0))->name, "bruck");
    CU_ASSERT_STRING_EQUAL(talg(COLL_ALLTOALL, tselect(COLL_ALLTOALL, 16, 1 << 20, 1 << 20, 0, 0))->name, "pairwise");
    CU_ASSERT_STRING_EQUAL(talg(COLL_REDUCE_SCATTER, tselect(COLL_REDUCE_SCATTER, 8, 1 << 20, 1 << 18, 0, 1))->name, "pairwise");
}

/* vector schedules are pure too (test_coll.c covers the uniform kinds) */
static void test_deterministic(void)
{
    size_t c[8] = {3, 0, 5, 1, 9, 2, 0, 4}, d[8] = {40, 0, 10, 30, 16, 5, 50, 60};
    for (int kind = COLL_ALLTOALLV; kind <= COLL_REDUCE_SCATTER; kind += 2)
        for (int r = 0; r < 8; r++) {
            coll_args_t a;
            coll_sched_t s1, s2;
            coll_args_set(&a, kind, r, 8, 0, 0, VC_INT16, VC_MAX, 0);
            coll_args_vec(&a, kind, c, kind == COLL_ALLTOALLV ? d : NULL,
                          kind == COLL_ALLTOALLV ? c : NULL, kind == COLL_ALLTOALLV ? d : NULL);
            for (int alg = 1; alg < tnsched(kind); alg++) {
                sched_init(&s1, &a);
                sched_init(&s2, &a);
                CU_ASSERT_EQUAL(talg(kind, alg)->build(&a, &s1), VC_SUCCESS);
                CU_ASSERT_EQUAL(talg(kind, alg)->build(&a, &s2), VC_SUCCESS);
                CU_ASSERT(s1.nsteps == s2.nsteps && s1.tmp_bytes == s2.tmp_bytes);
                if (s1.nsteps == s2.nsteps && s1.nsteps)
                    CU_ASSERT(!memcmp(s1.steps, s2.steps, (size_t)s1.nsteps * sizeof *s1.steps));
                sched_free(&s1);
                sched_free(&s2);
            }
        }
    /* alltoallv without its arrays is refused, not a crash */
    coll_args_t a;
    coll_sched_t s;
    coll_args_set(&a, COLL_ALLTOALLV, 0, 4, 0, 0, VC_INT32, VC_SUM, 0);
    sched_init(&s, &a);
    CU_ASSERT_EQUAL(talg(COLL_ALLTOALLV, 1)->build(&a, &s), VC_ERR_ARG);
    sched_free(&s);
}

static void test_summary(void)
{
    sim_summary(ncases, nfail);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite s = CU_add_suite("coll_a2a_schedules", NULL, NULL);
    CU_add_test(s, "vector schedules are deterministic", test_deterministic);
    CU_add_test(s, "selection table", test_select);
    CU_add_test(s, "alltoall, every algorithm, p 1..64", test_alltoall);
    CU_add_test(s, "alltoallv, p 1..64", test_alltoallv);
    CU_add_test(s, "reduce_scatter(_block), every algorithm and op", test_reduce_scatter);
    CU_add_test(s, "scan and exscan, every op", test_scan);
    CU_pSuite o = CU_add_suite("noncommutative", NULL, NULL);
    CU_add_test(o, "the affine op detects reordering", test_affine_detects_order);
    CU_add_test(o, "select picks rank-ordered algorithms only", test_select_noncomm);
    CU_add_test(o, "summary", test_summary);
    return sim_cunit_main();
}
