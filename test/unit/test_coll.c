/*
 * test_coll.c -- collectives without a network.
 *
 * Every algorithm's schedule is built for every rank of a simulated job and
 * executed by an in-process simulator that follows the round semantics of
 * src/coll/sched.h under the strict (rendezvous) model: a send completes
 * only when the peer has posted the matching receive, messages between a
 * pair match in posting order. The simulator also checks bounds, that SBUF is
 * never written, that no receive in a round overlaps another receive or a
 * send of the same round, that message sizes agree, that no rank deadlocks,
 * and that information flows where it must (every rank of an allreduce has
 * heard from every other...). Results are compared with a reference
 * computed here by plain loops over the ranks' inputs in rank order, and
 * across ranks for identical bits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <CUnit/Basic.h>

#include "vcoll.h"
#include "coll/sched.h"
#include "coll/layout.h"
#include "coll/shm_run.h"
#include "net/net.h"
#include "dtype/dtype.h"
#include "core/config.h"
#include "sim.h"
#include "coll_talg.h"

#define NDT 15   /* VC_BYTE .. VC_INT64_INT */
#define NOP 12   /* VC_SUM .. VC_MAXLOC */

static const char *kind_name[COLL_NKINDS] = {"barrier", "bcast", "reduce",
                                             "allreduce", "allgather"};

/* ------------------------------------------------------------------ */
/* reference arithmetic, written independently of src/dtype/reduce.c   */

static int dt_signed(vc_dtype_t dt)
{
    return dt == VC_INT8 || dt == VC_INT16 || dt == VC_INT32 || dt == VC_INT64;
}

static int dt_float(vc_dtype_t dt) { return dt == VC_FLOAT || dt == VC_DOUBLE; }

static int dt_pair(vc_dtype_t dt)
{
    return dt == VC_FLOAT_INT || dt == VC_DOUBLE_INT || dt == VC_INT32_INT ||
           dt == VC_INT64_INT;
}

/* Pairs are read by byte offsets (MPI's layout: value at 0, int32 index
   right after it, aligned as C aligns the value type), not through the
   library's structs. */
static size_t pair_index_off(vc_dtype_t dt)
{
    return dt == VC_FLOAT_INT || dt == VC_INT32_INT ? 4 : 8;
}

static int32_t pair_index(vc_dtype_t dt, const void *p)
{
    int32_t i;
    memcpy(&i, (const char *)p + pair_index_off(dt), sizeof i);
    return i;
}

/* -1, 0, 1 as the value of x is below, equal to, above the value of y */
static int pair_cmp(vc_dtype_t dt, const void *x, const void *y)
{
    switch (dt) {
    case VC_FLOAT_INT: {
        float a, b;
        memcpy(&a, x, sizeof a);
        memcpy(&b, y, sizeof b);
        return (a > b) - (a < b);
    }
    case VC_DOUBLE_INT: {
        double a, b;
        memcpy(&a, x, sizeof a);
        memcpy(&b, y, sizeof b);
        return (a > b) - (a < b);
    }
    case VC_INT32_INT: {
        int32_t a, b;
        memcpy(&a, x, sizeof a);
        memcpy(&b, y, sizeof b);
        return (a > b) - (a < b);
    }
    default: {
        int64_t a, b;
        memcpy(&a, x, sizeof a);
        memcpy(&b, y, sizeof b);
        return (a > b) - (a < b);
    }
    }
}

/* acc = acc MINLOC/MAXLOC x: x replaces acc when its value is better, or
   equal with a smaller index (the whole element, padding included) */
static void ref_loc(vc_dtype_t dt, vc_op_t op, void *acc, const void *x)
{
    int c = pair_cmp(dt, x, acc);
    if (op == VC_MAXLOC)
        c = -c;
    if (c < 0 || (c == 0 && pair_index(dt, x) < pair_index(dt, acc)))
        memcpy(acc, x, dtype_size(dt));
}

/* integer elements as raw 64-bit values (sign-extended for signed types) */
static uint64_t get_u(vc_dtype_t dt, const void *p)
{
    switch (dt) {
    case VC_BYTE: case VC_UINT8: return *(const uint8_t *)p;
    case VC_INT8: return (uint64_t)(int64_t)*(const int8_t *)p;
    case VC_UINT16: return *(const uint16_t *)p;
    case VC_INT16: return (uint64_t)(int64_t)*(const int16_t *)p;
    case VC_UINT32: return *(const uint32_t *)p;
    case VC_INT32: return (uint64_t)(int64_t)*(const int32_t *)p;
    case VC_UINT64: return *(const uint64_t *)p;
    case VC_INT64: return (uint64_t)*(const int64_t *)p;
    default: return 0;
    }
}

/* store the low bits (two's complement truncation = wrap) */
static void put_u(vc_dtype_t dt, void *p, uint64_t v)
{
    size_t n = dtype_size(dt);
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)p)[i] = (unsigned char)(v >> (8 * i));
}

static void ref_op(vc_dtype_t dt, vc_op_t op, void *acc, const void *x)
{
    if (dt_pair(dt)) {
        ref_loc(dt, op, acc, x);
        return;
    }
    if (dt_float(dt)) {
        double a = dt == VC_FLOAT ? *(float *)acc : *(double *)acc;
        double b = dt == VC_FLOAT ? *(const float *)x : *(const double *)x;
        double r = 0;
        switch (op) {
        case VC_SUM: r = a + b; break;
        case VC_PROD: r = a * b; break;
        case VC_MIN: r = b < a ? b : a; break;
        case VC_MAX: r = b > a ? b : a; break;
        case VC_LAND: r = (a != 0) && (b != 0); break;
        case VC_LOR: r = (a != 0) || (b != 0); break;
        case VC_LXOR: r = (a != 0) != (b != 0); break;
        default: break;
        }
        if (dt == VC_FLOAT)
            *(float *)acc = (float)r;
        else
            *(double *)acc = r;
        return;
    }
    uint64_t a = get_u(dt, acc), b = get_u(dt, x), r = 0;
    int sg = dt_signed(dt);
    switch (op) {
    case VC_SUM: r = a + b; break;
    case VC_PROD: r = a * b; break;
    case VC_MIN: r = sg ? ((int64_t)b < (int64_t)a ? b : a) : (b < a ? b : a); break;
    case VC_MAX: r = sg ? ((int64_t)b > (int64_t)a ? b : a) : (b > a ? b : a); break;
    case VC_BAND: r = a & b; break;
    case VC_BOR: r = a | b; break;
    case VC_BXOR: r = a ^ b; break;
    case VC_LAND: r = a && b; break;
    case VC_LOR: r = a || b; break;
    case VC_LXOR: r = (a != 0) != (b != 0); break;
    default: break;
    }
    put_u(dt, acc, r);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Input element i of rank r. Floats are chosen so that every association
   order gives the exact same result (small integers, powers of two),
   which lets results be compared bit for bit with the reference. */
static void gen(vc_dtype_t dt, vc_op_t op, int p, int r, size_t i, uint64_t salt,
                void *out)
{
    uint64_t h = mix(salt * 1000003u + (uint64_t)r * 7919u + i * 104729u + 1);
    int logical = op == VC_LAND || op == VC_LOR || op == VC_LXOR;
    if (dt_pair(dt)) {
        /* few distinct values and indices, so ties on the value (and on
           both) are common; zero padding so whole elements compare */
        memset(out, 0, dtype_size(dt));
        int v = (int)(h % 5) - 2;
        int32_t idx = (int32_t)((h >> 20) % 9) - 2;
        switch (dt) {
        case VC_FLOAT_INT: { float f = (float)v * 0.75f; memcpy(out, &f, sizeof f); break; }
        case VC_DOUBLE_INT: { double d = (double)v * 1e300; memcpy(out, &d, sizeof d); break; }
        case VC_INT32_INT: { int32_t x = v * 65537; memcpy(out, &x, sizeof x); break; }
        default: { int64_t x = (int64_t)v * 0x100000001LL; memcpy(out, &x, sizeof x); break; }
        }
        memcpy((char *)out + pair_index_off(dt), &idx, sizeof idx);
        return;
    }
    if (dt_float(dt)) {
        double v;
        if (logical)
            v = (h % (uint64_t)(2 * p)) == 0 ? 0.0 : (h & 1 ? 2.5 : -1.0);
        else if (op == VC_PROD) {
            static const double f[4] = {1.0, 2.0, -1.0, 0.5};
            v = f[h % 4];
        } else
            v = (double)((int)(h % 17) - 8);
        if (dt == VC_FLOAT)
            *(float *)out = (float)v;
        else
            *(double *)out = v;
        return;
    }
    if (logical) {
        /* nonzero values vary (and have the low bit set so they stay
           nonzero in every width); zeros are rare enough that LAND over
           64 ranks is not always 0 */
        put_u(dt, out, (h % (uint64_t)(2 * p)) == 0 ? 0 : ((h >> 8) | 1));
        return;
    }
    if (op == VC_BAND)
        h |= mix(h) | mix(h + 1);   /* keep some bits set across many ranks */
    if (op == VC_BOR)
        h &= mix(h) & mix(h + 1);
    put_u(dt, out, h);
}

/* ------------------------------------------------------------------ */
/* running one case                                                     */

typedef struct {
    int kind, alg, p, root, inplace;
    size_t count;
    vc_dtype_t dt;
    vc_op_t op;
    int random_float;   /* inputs are random floats: compare with tolerance */
} tcase_t;

static unsigned char *input_of(const tcase_t *t, int r, size_t es)
{
    unsigned char *v = malloc(t->count * es + 1);
    for (size_t i = 0; i < t->count; i++) {
        if (t->random_float) {
            uint64_t h = mix((uint64_t)r * 31337u + i * 65537u + 17);
            double d = ((double)(h >> 11) / 9007199254740992.0) * 2.0 - 1.0;
            if (t->dt == VC_FLOAT)
                ((float *)v)[i] = (float)d;
            else
                ((double *)v)[i] = d * 1e3;
        } else {
            gen(t->dt, t->op, t->p, r, i, (uint64_t)t->kind, v + i * es);
        }
    }
    return v;
}

static int fcmp_close(vc_dtype_t dt, const void *a, const void *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = dt == VC_FLOAT ? ((const float *)a)[i] : ((const double *)a)[i];
        double y = dt == VC_FLOAT ? ((const float *)b)[i] : ((const double *)b)[i];
        double tol = (dt == VC_FLOAT ? 1e-4 : 1e-9) * (1.0 + fabs(y)) * 64;
        if (!(fabs(x - y) <= tol))
            return 1;
    }
    return 0;
}

static void report(const tcase_t *t, const char *what)
{
    fprintf(stderr, "\n  FAIL %s/%s p=%d count=%zu dt=%d op=%d root=%d inplace=%d: %s\n",
            kind_name[t->kind], talg(t->kind, t->alg)->name, t->p, t->count,
            (int)t->dt, (int)t->op, t->root, t->inplace, what);
}

/* returns 0 if the case passed */
static int run_case(const tcase_t *t)
{
    static sim_t S;   /* big: keep it off the stack */
    int p = t->p;
    size_t es = dtype_size(t->dt), n = t->count * es;
    unsigned char *in[MAXP];
    unsigned char *ref = NULL;
    int bad = 0;

    memset(&S, 0, sizeof S);
    S.p = p;
    for (int r = 0; r < p; r++)
        in[r] = input_of(t, r, es);

    for (int r = 0; r < p; r++) {
        sim_rank_t *R = &S.r[r];
        coll_args_t a;
        coll_args_set(&a, t->kind, r, p, t->root, t->count, t->dt, t->op,
                      t->inplace);
        sched_init(&R->s, &a);
        if (talg(t->kind, t->alg)->build(&a, &R->s) != VC_SUCCESS) {
            report(t, "builder failed");
            bad = 1;
            goto out;
        }
        R->know = 1ULL << r;
        size_t sl = 0, rl = 0;
        switch (t->kind) {
        case COLL_BCAST: rl = n; break;
        case COLL_REDUCE: sl = n; rl = r == t->root ? n : 0; break;
        case COLL_ALLREDUCE: sl = n; rl = n; break;
        case COLL_ALLGATHER: sl = n; rl = n * (size_t)p; break;
        default: break;
        }
        if (t->inplace)
            sl = 0;
        R->len[COLL_SBUF] = sl;
        R->len[COLL_RBUF] = rl;
        R->len[COLL_TMP] = R->s.tmp_bytes;
        for (int b = 0; b < COLL_NBUF; b++) {
            R->buf[b] = sim_buf(R->len[b] + 1);
            memset(R->buf[b], 0xA5, R->len[b] + 1);   /* garbage */
        }
        if (t->kind == COLL_BCAST && r == t->root)
            memcpy(R->buf[COLL_RBUF], in[r], n);
        else if (t->kind != COLL_BCAST && t->kind != COLL_BARRIER) {
            if (t->inplace)
                memcpy(R->buf[COLL_RBUF] + a.in_off, in[r], n);
            else
                memcpy(R->buf[COLL_SBUF], in[r], n);
        }
    }

    if (sim_run(&S)) {
        report(t, failmsg);
        bad = 1;
        goto out;
    }
    /* SBUF must be untouched */
    for (int r = 0; r < p && !t->inplace; r++)
        if (S.r[r].len[COLL_SBUF] && memcmp(S.r[r].buf[COLL_SBUF], in[r], n)) {
            report(t, "SBUF modified");
            bad = 1;
            goto out;
        }

    /* information flow */
    {
        uint64_t all = p == 64 ? ~0ULL : (1ULL << p) - 1;
        for (int r = 0; r < p; r++) {
            uint64_t need = 0;
            switch (t->kind) {
            case COLL_BARRIER: need = all; break;
            case COLL_BCAST: need = n ? 1ULL << t->root : 0; break;
            case COLL_REDUCE: need = r == t->root && n ? all : 0; break;
            default: need = n ? all : 0; break;
            }
            if ((S.r[r].know & need) != need) {
                snprintf(failmsg, sizeof failmsg, "rank %d did not hear from all it must", r);
                report(t, failmsg);
                bad = 1;
                goto out;
            }
        }
    }

    /* reference */
    if (t->kind == COLL_BCAST) {
        for (int r = 0; r < p; r++)
            if (memcmp(S.r[r].buf[COLL_RBUF], in[t->root], n)) {
                snprintf(failmsg, sizeof failmsg, "rank %d: wrong data", r);
                report(t, failmsg);
                bad = 1;
                goto out;
            }
    } else if (t->kind == COLL_ALLGATHER) {
        for (int r = 0; r < p; r++)
            for (int j = 0; j < p; j++)
                if (memcmp(S.r[r].buf[COLL_RBUF] + (size_t)j * n, in[j], n)) {
                    snprintf(failmsg, sizeof failmsg, "rank %d: wrong block %d", r, j);
                    report(t, failmsg);
                    bad = 1;
                    goto out;
                }
    } else if (t->kind == COLL_REDUCE || t->kind == COLL_ALLREDUCE) {
        ref = malloc(n + 1);
        memcpy(ref, in[0], n);
        for (int r = 1; r < p; r++)
            for (size_t i = 0; i < t->count; i++)
                ref_op(t->dt, t->op, ref + i * es, in[r] + i * es);
        for (int r = 0; r < p; r++) {
            if (t->kind == COLL_REDUCE && r != t->root)
                continue;
            const unsigned char *got = S.r[r].buf[COLL_RBUF];
            int differ = t->random_float ? fcmp_close(t->dt, got, ref, t->count)
                                         : memcmp(got, ref, n) != 0;
            if (differ) {
                snprintf(failmsg, sizeof failmsg, "rank %d: result differs from reference", r);
                report(t, failmsg);
                bad = 1;
                goto out;
            }
            /* identical bits on every rank */
            if (t->kind == COLL_ALLREDUCE && memcmp(got, S.r[0].buf[COLL_RBUF], n)) {
                snprintf(failmsg, sizeof failmsg, "rank %d: bits differ from rank 0", r);
                report(t, failmsg);
                bad = 1;
                goto out;
            }
        }
    }
    /* nothing written past the end of any buffer */
    for (int r = 0; r < p; r++)
        for (int b = 0; b < COLL_NBUF; b++)
            if (S.r[r].buf[b][S.r[r].len[b]] != 0xA5) {
                report(t, "wrote past a buffer end");
                bad = 1;
                goto out;
            }
out:
    free(ref);
    for (int r = 0; r < p; r++)
        free(in[r]);
    sim_free(&S);
    return bad;
}

static int inplace_allowed(int kind, int rank, int root)
{
    (void)rank;
    (void)root;
    return kind == COLL_ALLREDUCE || kind == COLL_REDUCE || kind == COLL_ALLGATHER;
}

/* ------------------------------------------------------------------ */
/* suites                                                               */

static int ncases, nfail;

static void check_case(tcase_t t)
{
    ncases++;
    if (run_case(&t))
        nfail++;
}

static int roots_for(int p, int *roots)
{
    int n = 0;
    if (p <= 9) {
        for (int r = 0; r < p; r++)
            roots[n++] = r;
    } else {
        roots[n++] = 0;
        roots[n++] = 1;
        roots[n++] = p / 2;
        roots[n++] = p - 1;
    }
    return n;
}

static int rooted(int kind) { return kind == COLL_BCAST || kind == COLL_REDUCE; }

/* every algorithm, p = 1..64, counts 0, 1, odd, < p, large */
static void test_all_sizes(void)
{
    int before = nfail;
    for (int kind = 0; kind <= COLL_ALLGATHER; kind++) {   /* the five of 0.1 */
        for (int alg = 1; alg < tnsched(kind); alg++) {
            for (int p = 1; p <= MAXP; p++) {
                size_t counts[] = {0, 1, 7, (size_t)(p > 1 ? p - 1 : 1), 1000 + (size_t)p};
                int nc = kind == COLL_BARRIER ? 1 : 5;
                int roots[MAXP], nr = rooted(kind) ? roots_for(p, roots) : 1;
                if (!rooted(kind))
                    roots[0] = 0;
                for (int c = 0; c < nc; c++) {
                    for (int ri = 0; ri < nr; ri++) {
                        for (int ip = 0; ip < 2; ip++) {
                            if (ip && (!inplace_allowed(kind, 0, 0) || kind == COLL_REDUCE))
                                continue;
                            tcase_t t = {kind, alg, p, roots[ri], ip, counts[c],
                                         VC_INT32, VC_SUM, 0};
                            if (kind == COLL_REDUCE || kind == COLL_ALLREDUCE) {
                                t.dt = VC_DOUBLE;
                                check_case(t);
                                t.dt = VC_UINT8;
                                t.op = VC_PROD;
                            }
                            check_case(t);
                        }
                    }
                }
            }
        }
    }
    CU_ASSERT_EQUAL(nfail, before);
}

/* every dtype x op on the reducing collectives at a few sizes */
static void test_dtype_op_matrix(void)
{
    int before = nfail;
    static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 12};
    static const size_t counts[] = {0, 1, 5, 37};
    int kinds[] = {COLL_REDUCE, COLL_ALLREDUCE};
    for (int ki = 0; ki < 2; ki++) {
        int kind = kinds[ki];
        for (int alg = 1; alg < tnsched(kind); alg++)
            for (size_t pi = 0; pi < sizeof ps / sizeof *ps; pi++)
                for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                    for (int dt = 0; dt < NDT; dt++)
                        for (int op = 0; op < NOP; op++) {
                            if (dtype_op_check(dt, op) != VC_SUCCESS)
                                continue;
                            tcase_t t = {kind, alg, ps[pi], ps[pi] - 1, 0, counts[ci],
                                         (vc_dtype_t)dt, (vc_op_t)op, 0};
                            check_case(t);
                            if (kind == COLL_ALLREDUCE) {
                                t.inplace = 1;
                                check_case(t);
                            }
                        }
    }
    CU_ASSERT_EQUAL(nfail, before);
}

/* In-place reduce: only the root passes VC_IN_PLACE. Built per rank. */
static void test_reduce_inplace_root(void)
{
    int before = nfail;
    static sim_t S;
    for (int alg = 1; alg < tnsched(COLL_REDUCE); alg++)
        for (int p = 1; p <= 24; p++)
            for (int root = 0; root < p; root += (p > 8 ? 5 : 1)) {
                size_t counts[] = {1, 9, 300};
                for (int ci = 0; ci < 3; ci++) {
                    size_t cnt = counts[ci], n = cnt * sizeof(int64_t);
                    int64_t ref[300] = {0};
                    memset(&S, 0, sizeof S);
                    S.p = p;
                    for (int r = 0; r < p; r++) {
                        sim_rank_t *R = &S.r[r];
                        coll_args_t a;
                        coll_args_set(&a, COLL_REDUCE, r, p, root, cnt, VC_INT64,
                                      VC_SUM, r == root);
                        sched_init(&R->s, &a);
                        talg(COLL_REDUCE, alg)->build(&a, &R->s);
                        R->know = 1ULL << r;
                        R->len[COLL_SBUF] = r == root ? 0 : n;
                        R->len[COLL_RBUF] = r == root ? n : 0;
                        R->len[COLL_TMP] = R->s.tmp_bytes;
                        for (int b = 0; b < COLL_NBUF; b++)
                            R->buf[b] = sim_buf_zero(R->len[b] + 1);
                        int64_t *v = (int64_t *)R->buf[r == root ? COLL_RBUF : COLL_SBUF];
                        for (size_t i = 0; i < cnt; i++) {
                            v[i] = (int64_t)(r * 1000 + i * 3 + 1);
                            ref[i] += v[i];
                        }
                    }
                    ncases++;
                    int bad = sim_run(&S);
                    if (!bad && memcmp(S.r[root].buf[COLL_RBUF], ref, n))
                        bad = 1;
                    if (bad) {
                        fprintf(stderr, "\n  FAIL reduce/%s in-place root p=%d root=%d count=%zu: %s\n",
                                talg(COLL_REDUCE, alg)->name, p, root, cnt, failmsg);
                        nfail++;
                    }
                    sim_free(&S);
                }
            }
    CU_ASSERT_EQUAL(nfail, before);
}

/* random floats: no exact reference, but every rank must get the same bits */
static void test_float_bitwise_identical(void)
{
    int before = nfail;
    for (int alg = 1; alg < tnsched(COLL_ALLREDUCE); alg++)
        for (int p = 1; p <= MAXP; p += (p < 16 ? 1 : 5))
            for (int dti = 0; dti < 2; dti++) {
                size_t counts[] = {1, 33, 2049};
                for (int ci = 0; ci < 3; ci++) {
                    tcase_t t = {COLL_ALLREDUCE, alg, p, 0, 0, counts[ci],
                                 dti ? VC_DOUBLE : VC_FLOAT, VC_SUM, 1};
                    check_case(t);
                }
            }
    for (int alg = 1; alg < tnsched(COLL_REDUCE); alg++)
        for (int p = 1; p <= 20; p++) {
            tcase_t t = {COLL_REDUCE, alg, p, p / 3, 0, 515, VC_DOUBLE, VC_SUM, 1};
            check_case(t);
        }
    CU_ASSERT_EQUAL(nfail, before);
}

/* schedules are pure: the same args give the same steps (vector kinds
   need their arrays: test_coll_a2a.c and friends cover them) */
static void test_sched_deterministic(void)
{
    for (int kind = 0; kind < COLL_NKINDS_FLAT; kind++)   /* neighbours: their test */
        for (int alg = 1; alg < tnsched(kind) && !coll_kind_vector(kind); alg++)
            for (int p = 1; p <= 17; p += 4) {
                coll_args_t a;
                coll_sched_t s1, s2;
                size_t vc[MAXP], vd[MAXP];   /* vector kinds: 1234 per rank, packed */
                coll_args_set(&a, kind, p - 1, p, 0, 1234, VC_INT16, VC_MAX, 0);
                for (int i = 0; i < p; i++) {
                    vc[i] = 1234;
                    vd[i] = (size_t)i * 1234;
                }
                if (coll_kind_vector(kind))
                    coll_args_vec(&a, kind, vc, vd, vc, vd);
                sched_init(&s1, &a);
                sched_init(&s2, &a);
                CU_ASSERT_EQUAL(talg(kind, alg)->build(&a, &s1), VC_SUCCESS);
                CU_ASSERT_EQUAL(talg(kind, alg)->build(&a, &s2), VC_SUCCESS);
                CU_ASSERT_EQUAL(s1.nsteps, s2.nsteps);
                CU_ASSERT_EQUAL(s1.nrounds, s2.nrounds);
                CU_ASSERT_EQUAL(s1.tmp_bytes, s2.tmp_bytes);
                if (s1.nsteps == s2.nsteps && s1.nsteps)
                    CU_ASSERT(!memcmp(s1.steps, s2.steps, (size_t)s1.nsteps * sizeof *s1.steps));
                /* sched_reset + rebuild reuses memory and gives the same */
                sched_reset(&s2, &a);
                talg(kind, alg)->build(&a, &s2);
                CU_ASSERT_EQUAL(s1.nsteps, s2.nsteps);
                sched_free(&s1);
                sched_free(&s2);
            }
}

/* Connections on demand make a collective's peer set its cost: each
 * distinct peer is an RC connection (a QP and 35 receive buffers). The
 * log-depth algorithms -- and what auto picks at 64 ranks and more -- must
 * touch at most 2 ceil(log2 p) peers per rank, not p - 1. */
static int distinct_peers(const coll_sched_t *s, int p)
{
    unsigned char seen[1024] = {0};
    int n = 0;
    for (int i = 0; i < s->nsteps; i++) {
        const coll_step_t *st = &s->steps[i];
        if ((st->kind == STEP_SEND || st->kind == STEP_RECV) && st->peer >= 0 &&
            st->peer < p && !seen[st->peer]) {
            seen[st->peer] = 1;
            n++;
        }
    }
    return n;
}

static int alg_index(int kind, const char *name)
{
    for (int a = 1; a < tnsched(kind); a++)
        if (!strcmp(talg(kind, a)->name, name))
            return a;
    return -1;
}

static void test_log_peers(void)
{
    static const struct { int kind; const char *alg; } logd[] = {
        {COLL_BARRIER, "dissemination"}, {COLL_BCAST, "binomial"},
        {COLL_REDUCE, "binomial"}, {COLL_ALLREDUCE, "recursive_doubling"},
        {COLL_ALLGATHER, "recursive_doubling"}, {COLL_GATHER, "binomial"},
        {COLL_SCATTER, "binomial"}, {COLL_SCAN, "recursive_doubling"},
        {COLL_EXSCAN, "recursive_doubling"},
    };
    int sizes[] = {64, 100, 1000};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        int p = sizes[z], lg = 0;
        while ((1 << lg) < p)
            lg++;
        for (size_t k = 0; k < sizeof logd / sizeof *logd; k++) {
            int kind = logd[k].kind;
            int alg = alg_index(kind, logd[k].alg);
            CU_ASSERT_FATAL(alg > 0);
            /* and the automatic choice for small messages, not oversubscribed */
            int autoalg = tselect(kind, p, 8, 1, 0, 0);
            int algs[2] = {alg, autoalg};
            for (int j = 0; j < 2; j++) {
                int worst = 0;
                for (int r = 0; r < p; r++) {
                    coll_args_t a;
                    coll_sched_t s;
                    coll_args_set(&a, kind, r, p, 0, 1, VC_INT64, VC_SUM, 0);
                    sched_init(&s, &a);
                    CU_ASSERT_EQUAL(talg(kind, algs[j])->build(&a, &s), VC_SUCCESS);
                    int n = distinct_peers(&s, p);
                    if (n > worst)
                        worst = n;
                    sched_free(&s);
                }
                if (worst > 2 * lg)
                    printf("\n  %s %s at p=%d: a rank talks to %d peers (> 2*%d)",
                           talg(kind, algs[j]) ? talg(kind, algs[j])->name : "?",
                           j ? "(auto)" : "", p, worst, lg);
                CU_ASSERT(worst <= 2 * lg);
            }
        }
    }
}

/* the auto choice is always a real algorithm that can serve the call */
static void test_select(void)
{
    size_t bytes[] = {0, 1, 8, 1024, 4096, 65536, 1 << 20, (size_t)1 << 30};
    for (int kind = 0; kind < COLL_NKINDS; kind++)
        for (int p = 1; p <= 1024; p = p * 2 + 1)
            for (size_t b = 0; b < sizeof bytes / sizeof *bytes; b++)
                for (int ov = 0; ov < 2; ov++)
                    for (int nc = 0; nc < 2; nc++) {
                        int a = tselect(kind, p, bytes[b], bytes[b] / 4, ov, nc);
                        CU_ASSERT(a >= 1 && a < tnsched(kind));
                        CU_ASSERT(!nc || trank_ordered(kind, a));
                    }
    /* the registry: names unique per collective, at most 15 (VCOLL_<COLL>_ALG
       values travel 4 bits each in the job-wide agreement), and the
       shared-memory-only ones last */
    for (int kind = 0; kind < COLL_NKINDS; kind++) {
        const coll_alg_t *const *l;
        int n = coll_algs(kind, &l);
        CU_ASSERT(n >= 1 && n <= 15);
        for (int i = 0; i < n; i++) {
            CU_ASSERT_PTR_EQUAL(coll_alg_find(kind, l[i]->name), l[i]);
            CU_ASSERT_EQUAL(coll_alg_number(l[i]), i + 1);
            CU_ASSERT(l[i]->build || (l[i]->props & ALG_SHARED));
            CU_ASSERT(i < tnsched(kind) - 1 || !l[i]->build);
        }
    }
    CU_ASSERT_PTR_NULL(coll_alg_find(COLL_BCAST, "auto"));
    CU_ASSERT_STRING_EQUAL(talg(COLL_ALLREDUCE, 3)->name, "ring");
    CU_ASSERT_STRING_EQUAL(talg(COLL_BARRIER, 1)->name, "dissemination");
    /* "shm": nothing to share with one rank per node; the segment barrier
       wherever two share a node; two ranks keep messages for small
       reductions (an allreduce goes through the segment from 512 KiB
       where the CMA call is dear, Rabenseifner where it is cheap; a
       reduce from 1 MiB and, where the CMA call is dear, both past the
       eager packet) and bcast past the caches (one CMA copy from 512 KiB); a
       core per rank takes the segment */
    coll_layout_t L;
    int one_node[8] = {0}, spread[4] = {0, 1, 2, 3};
    CU_ASSERT_EQUAL_FATAL(coll_layout_build(&L, 4, spread), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_BARRIER, 0, 1, 0, 0), "dissemination");
    CU_ASSERT_STRING_NOT_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 18, 4, 0, 0), "shm");
    coll_layout_free(&L);
    CU_ASSERT_EQUAL_FATAL(coll_layout_build(&L, 2, one_node), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_BARRIER, 0, 1, 0, 0), "shm");
    /* a world on one node (the slots serve it): two ranks take the
       released barrier, rank 0 leaving first, more the symmetric one
       unless they share cores */
    for (int p = 2; p <= 3; p++)
        for (int ov = 0; ov < 2; ov++) {
            coll_layout_t W;
            CU_ASSERT_EQUAL_FATAL(coll_layout_build(&W, p, one_node), VC_SUCCESS);
            W.oversub = ov;
            coll_query_t q;
            coll_query_init(&q, COLL_BARRIER, FORM_BLOCKING, &W, 0, 1, 0, 0, 0);
            q.flags_ok = 1;
            CU_ASSERT_STRING_EQUAL(coll_select(&q)->name,
                                   p == 2 || ov ? "flags_release" : "flags");
            coll_layout_free(&W);
        }
    /* reduce_scatter(_block) whose whole vector fits a line goes through
       the slots on a world on one node, whatever the ranks' cores; past a
       line, or where the slots do not serve (flags_ok 0), the message
       algorithms as before */
    for (int p = 2; p <= 8; p += 3)
        for (int ov = 0; ov < 2; ov++)
            for (int ok = 0; ok < 2; ok++)
                for (size_t total = 64; total <= 4096; total *= 4) {
                    coll_layout_t W;
                    CU_ASSERT_EQUAL_FATAL(coll_layout_build(&W, p, one_node), VC_SUCCESS);
                    W.oversub = ov;
                    coll_query_t q;
                    size_t blk = total / 4 / (size_t)p;     /* int elements per rank */
                    coll_query_init(&q, COLL_REDUCE_SCATTER_BLOCK, FORM_BLOCKING, &W, blk, 4,
                                    blk, 0, 0);
                    q.flags_ok = ok && coll_flags_need(COLL_REDUCE_SCATTER_BLOCK, q.bytes,
                                                       q.total, p) <= NET_SHM_SLOT_BYTES - 8;
                    int flags = ok && blk * 4 * (size_t)p <= 2048;
                    CU_ASSERT_EQUAL(!strcmp(coll_select(&q)->name, "flags"), flags);
                    /* reduce_scatter selects on its exact total, not the
                       average times p (blk * p + 1 elements) */
                    coll_query_init(&q, COLL_REDUCE_SCATTER, FORM_BLOCKING, &W, blk, 4,
                                    blk * (size_t)p + 1, 0, 0);
                    CU_ASSERT_EQUAL(q.total, (blk * (size_t)p + 1) * 4);
                    q.flags_ok = ok;
                    CU_ASSERT_EQUAL(!strcmp(coll_select(&q)->name, "flags"),
                                    ok && q.total <= 2048);
                    coll_layout_free(&W);
                }
    /* the line reduce_scatter asks the slots for is its exact total: 8
       ranks, 527 int32 (2108 B) do not fit a line, though the average
       times p (65 * 8 * 4 = 2080 B) would */
    {
        coll_layout_t W;
        CU_ASSERT_EQUAL_FATAL(coll_layout_build(&W, 8, one_node), VC_SUCCESS);
        coll_query_t q;
        coll_query_init(&q, COLL_REDUCE_SCATTER, FORM_BLOCKING, &W, 527 / 8, 4, 527, 0, 0);
        CU_ASSERT(coll_flags_need(COLL_REDUCE_SCATTER, q.bytes, q.total, 8) >
                  NET_SHM_SLOT_BYTES - 8);
        coll_query_init(&q, COLL_REDUCE_SCATTER, FORM_BLOCKING, &W, 520 / 8, 4, 520, 0, 0);
        CU_ASSERT(coll_flags_need(COLL_REDUCE_SCATTER, q.bytes, q.total, 8) <=
                  NET_SHM_SLOT_BYTES - 8);
        coll_layout_free(&W);
    }
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 2, 4, 0, 0), "recursive_doubling");
    CU_ASSERT_STRING_NOT_EQUAL(tchoose(&L, COLL_REDUCE, 512, 4, 0, 0), "shm");
    CU_ASSERT_STRING_NOT_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 11, 4, 0, 0), "shm");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 18, 4, 0, 0), "rabenseifner");
    /* two ranks: reduce_scatter's one exchange folds straight into the
       receive buffer (pairwise), past the slots' 2 KiB */
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_REDUCE_SCATTER_BLOCK, 1 << 11, 4, 0, 0),
                           "pairwise");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_REDUCE_SCATTER, 1 << 11, 4, 0, 0), "pairwise");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_BCAST, 1 << 19, 1, 0, 0), "binomial");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 13, 1, 0, 0), "pairwise");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 17, 1, 0, 0), "pairwise");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_REDUCE, 1 << 20, 4, 0, 0), "shm");
    /* the segment's two copies against one pulled message: which wins
       turns on the CMA call's price (L.pull: the size from which a message
       is pulled; never when CMA is refused) */
    uint64_t pulls[] = {0, 4097, 46u << 10, UINT64_MAX};
    for (int i = 0; i < 4; i++) {
        L.pull = pulls[i];
        const char *seg = i < 2 ? "binomial" : "shm", *a2a = i < 2 ? "pairwise" : "shm";
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_REDUCE, 1 << 15, 4, 0, 0), seg);
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_BCAST, 1 << 18, 1, 0, 0), seg);
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 14, 1, 0, 0), a2a);
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLGATHER, 1 << 14, 1, 0, 0),
                               i < 2 ? "recursive_doubling" : "shm");
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 12, 4, 0, 0),
                               i < 2 ? "recursive_doubling" : "shm");
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 16, 4, 0, 0),
                               i < 2 ? "recursive_doubling" : "shm");
        /* past the caches: Rabenseifner's halves where the call is cheap */
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 17, 4, 0, 0),
                               i < 2 ? "rabenseifner" : "shm");
        /* 2-4 KiB, the last eager sizes: the segment whatever the call's
           price (its copies beat the packet's); to 2 KiB the slots */
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_BCAST, 4096, 1, 0, 0), "shm");
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_BCAST, 2049, 1, 0, 0), "shm");
        CU_ASSERT_STRING_NOT_EQUAL(tchoose(&L, COLL_BCAST, 2048, 1, 0, 0), "shm");
        CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_REDUCE, 1024, 4, 0, 0), "shm");
        CU_ASSERT_STRING_NOT_EQUAL(tchoose(&L, COLL_REDUCE, 512, 4, 0, 0), "shm");
    }
    coll_layout_free(&L);
    CU_ASSERT_EQUAL_FATAL(coll_layout_build(&L, 8, one_node), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 2, 4, 0, 0), "shm");
    L.oversub = 1;
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 2, 4, 0, 0), "linear");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_REDUCE, 1 << 18, 4, 0, 0), "shm");
    CU_ASSERT_STRING_NOT_EQUAL(tchoose(&L, COLL_BCAST, 0, 4, 0, 0), "shm");
    /* ranks sharing cores: alltoall through the segment to 32 KiB a pair,
       to 256 KiB where the system call is dear */
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 15, 1, 0, 0), "shm");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 18, 1, 0, 0), "linear");
    L.pull = 46u << 10;
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 18, 1, 0, 0), "shm");
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLTOALL, 1 << 19, 1, 0, 0), "linear");
    L.pull = 0;
    /* a non-commutative op never gets a reordering algorithm */
    CU_ASSERT_STRING_EQUAL(tchoose(&L, COLL_ALLREDUCE, 1 << 18, 4, 1, 1), "recursive_doubling");
    coll_layout_free(&L);
    /* np=2 small allreduce is one exchange: recursive doubling */
    CU_ASSERT_STRING_EQUAL(talg(COLL_ALLREDUCE, tselect(COLL_ALLREDUCE, 2, 8, 2, 0, 0))->name,
                           "recursive_doubling");
    CU_ASSERT_STRING_EQUAL(talg(COLL_ALLREDUCE, tselect(COLL_ALLREDUCE, 8, 8, 2, 1, 0))->name,
                           "linear");
    /* np=2 reduce: binomial below 1 MiB, rsag from 1 MiB */
    CU_ASSERT_STRING_EQUAL(talg(COLL_REDUCE, tselect(COLL_REDUCE, 2, 512u << 10, 128u << 10,
                                                     0, 0))->name, "binomial");
    CU_ASSERT_STRING_EQUAL(talg(COLL_REDUCE, tselect(COLL_REDUCE, 2, 1u << 20, 256u << 10,
                                                     0, 0))->name, "rsag");
    CU_ASSERT_STRING_EQUAL(talg(COLL_REDUCE, tselect(COLL_REDUCE, 3, 1u << 20, 256u << 10,
                                                     0, 0))->name, "binomial");
}

/* ------------------------------------------------------------------ */
/* kernels                                                              */

static void test_kernels(void)
{
    size_t counts[] = {0, 1, 3, 16, 1037};
    for (int dt = 0; dt < NDT; dt++)
        for (int op = 0; op < NOP; op++) {
            if (dtype_op_check(dt, op) != VC_SUCCESS)
                continue;
            size_t es = dtype_size(dt);
            for (size_t ci = 0; ci < 5; ci++) {
                size_t cnt = counts[ci];
                /* odd element offsets: vector loops must not assume the
                   buffer starts on a vector boundary */
                size_t sk = es * 3;
                unsigned char *a = malloc(cnt * es + sk + 1), *b = malloc(cnt * es + sk + 1);
                unsigned char *o = malloc(cnt * es + 2), *ref = malloc(cnt * es + 2);
                unsigned char *a1 = a + sk, *b1 = b + es;
                for (size_t i = 0; i < cnt; i++) {
                    gen(dt, op, 4, 0, i, 99, a1 + i * es);
                    gen(dt, op, 4, 1, i, 99, b1 + i * es);
                }
                memcpy(ref, a1, cnt * es);
                for (size_t i = 0; i < cnt; i++)
                    ref_op(dt, op, ref + i * es, b1 + i * es);
                /* out-of-place */
                o[cnt * es] = 0x5a;
                dtype_reduce3(o, a1, b1, cnt, dt, op);
                CU_ASSERT(!memcmp(o, ref, cnt * es));
                CU_ASSERT_EQUAL(o[cnt * es], 0x5a);
                /* out aliases b */
                unsigned char *bb = malloc(cnt * es + 1);
                memcpy(bb, b1, cnt * es);
                dtype_reduce3(bb, a1, bb, cnt, dt, op);
                CU_ASSERT(!memcmp(bb, ref, cnt * es));
                free(bb);
                /* in place (inout = inout op in) */
                dtype_reduce(a1, b1, cnt, dt, op);
                if (memcmp(a1, ref, cnt * es)) {
                    fprintf(stderr, "\n  kernel mismatch dt=%d op=%d count=%zu\n", dt, op, cnt);
                    CU_FAIL("kernel differs from reference");
                }
                free(a); free(b); free(o); free(ref);
            }
        }
}

static void test_kernel_semantics(void)
{
    /* signed wrap */
    int8_t a8[2] = {127, -128}, b8[2] = {1, -1};
    dtype_reduce(a8, b8, 2, VC_INT8, VC_SUM);
    CU_ASSERT_EQUAL(a8[0], -128);
    CU_ASSERT_EQUAL(a8[1], 127);
    int16_t p16[1] = {-32768}, q16[1] = {-32768};
    dtype_reduce(p16, q16, 1, VC_INT16, VC_PROD);
    CU_ASSERT_EQUAL(p16[0], 0);
    uint16_t u16[1] = {65535}, v16[1] = {65535};
    dtype_reduce(u16, v16, 1, VC_UINT16, VC_PROD);
    CU_ASSERT_EQUAL(u16[0], 1);
    int64_t a64[1] = {INT64_MAX}, b64[1] = {1};
    dtype_reduce(a64, b64, 1, VC_INT64, VC_SUM);
    CU_ASSERT_EQUAL(a64[0], INT64_MIN);
    /* logical ops give 0/1 */
    int32_t l[3] = {5, 0, 7}, m[3] = {9, 3, 0};
    dtype_reduce(l, m, 3, VC_INT32, VC_LAND);
    CU_ASSERT(l[0] == 1 && l[1] == 0 && l[2] == 0);
    double d[2] = {0.0, -2.0}, e[2] = {3.5, 0.0};
    dtype_reduce(d, e, 2, VC_DOUBLE, VC_LOR);
    CU_ASSERT(d[0] == 1.0 && d[1] == 1.0);
    float f[2] = {1.5f, -3.0f}, g[2] = {-1.5f, -4.0f};
    dtype_reduce(f, g, 2, VC_FLOAT, VC_MIN);
    CU_ASSERT(f[0] == -1.5f && f[1] == -4.0f);
    uint8_t x[2] = {200, 0}, y[2] = {100, 1};
    dtype_reduce(x, y, 2, VC_UINT8, VC_MAX);
    CU_ASSERT(x[0] == 200 && x[1] == 1);
}

/* MINLOC/MAXLOC: ties to the smaller index, the padding of the winner is
   copied, and the documented NaN behaviour (a tie decided by index) */
static void test_loc_semantics(void)
{
    struct { double v; int32_t i; } p[4], q[4];
    memset(p, 0x11, sizeof p);   /* padding bytes tell which input won */
    memset(q, 0x22, sizeof q);
    p[0].v = 1.0; p[0].i = 5;  q[0].v = 1.0; q[0].i = 3;    /* tie: index 3 */
    p[1].v = 1.0; p[1].i = 2;  q[1].v = 1.0; q[1].i = 3;    /* tie: index 2 */
    p[2].v = -4.0; p[2].i = 9; q[2].v = 7.0; q[2].i = 0;    /* by value */
    p[3].v = NAN; p[3].i = 1;  q[3].v = 2.0; q[3].i = 0;    /* NaN: index 0 */
    struct { double v; int32_t i; } mn[4], mx[4];
    dtype_reduce3(mn, p, q, 4, VC_DOUBLE_INT, VC_MINLOC);
    dtype_reduce3(mx, p, q, 4, VC_DOUBLE_INT, VC_MAXLOC);
    CU_ASSERT(mn[0].i == 3 && mx[0].i == 3);
    CU_ASSERT(mn[1].i == 2 && mx[1].i == 2);
    CU_ASSERT(mn[2].v == -4.0 && mn[2].i == 9);
    CU_ASSERT(mx[2].v == 7.0 && mx[2].i == 0);
    CU_ASSERT(mn[3].v == 2.0 && mn[3].i == 0 && mx[3].v == 2.0);
    CU_ASSERT(!memcmp(&mn[0], &q[0], sizeof mn[0]));
    CU_ASSERT(!memcmp(&mn[1], &p[1], sizeof mn[1]));
    /* NaN at the smaller index is kept */
    p[3].i = 0; q[3].i = 1;
    dtype_reduce3(mn, p, q, 4, VC_DOUBLE_INT, VC_MINLOC);
    CU_ASSERT(isnan(mn[3].v) && mn[3].i == 0);
    /* extremes of the integer pairs */
    struct { int64_t v; int32_t i; } a = {INT64_MIN, 7}, b = {INT64_MAX, -1}, c;
    dtype_reduce3(&c, &a, &b, 1, VC_INT64_INT, VC_MINLOC);
    CU_ASSERT(c.v == INT64_MIN && c.i == 7);
    dtype_reduce3(&c, &a, &b, 1, VC_INT64_INT, VC_MAXLOC);
    CU_ASSERT(c.v == INT64_MAX && c.i == -1);
    struct { int32_t v; int32_t i; } e[2] = {{-3, 4}, {8, 1}}, f[2] = {{-3, 4}, {8, 0}};
    dtype_reduce(e, f, 2, VC_INT32_INT, VC_MAXLOC);
    CU_ASSERT(e[0].v == -3 && e[0].i == 4 && e[1].v == 8 && e[1].i == 0);
    struct { float v; int32_t i; } g = {-0.5f, 2}, h = {0.25f, 3};
    dtype_reduce(&g, &h, 1, VC_FLOAT_INT, VC_MAXLOC);
    CU_ASSERT(g.v == 0.25f && g.i == 3);
}

static void test_op_check(void)
{
    vc_op_t bits[] = {VC_BAND, VC_BOR, VC_BXOR};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(dtype_op_check(VC_FLOAT, bits[i]), VC_ERR_OP);
        CU_ASSERT_EQUAL(dtype_op_check(VC_DOUBLE, bits[i]), VC_ERR_OP);
        CU_ASSERT_EQUAL(dtype_op_check(VC_INT32, bits[i]), VC_SUCCESS);
    }
    CU_ASSERT_EQUAL(dtype_op_check(VC_DOUBLE, VC_LXOR), VC_SUCCESS);
    CU_ASSERT_EQUAL(dtype_op_check((vc_dtype_t)77, VC_SUM), VC_ERR_DTYPE);
    CU_ASSERT_EQUAL(dtype_op_check(VC_INT8, (vc_op_t)42), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_op_check(VC_INT8, (vc_op_t)-1), VC_ERR_OP);
}

/* The whole built-in matrix, written out as MPI defines it: pairs only with
   MINLOC/MAXLOC, VC_BYTE only with bit ops, no bit ops on floats. */
static void test_op_matrix(void)
{
    for (int dt = 0; dt < NDT; dt++)
        for (int op = 0; op < NOP; op++) {
            int bits = op == VC_BAND || op == VC_BOR || op == VC_BXOR;
            int loc = op == VC_MINLOC || op == VC_MAXLOC;
            int ok;
            if (dt_pair(dt))
                ok = loc;
            else if (dt == VC_BYTE)
                ok = bits;
            else if (dt_float(dt))
                ok = !bits && !loc;
            else
                ok = !loc;
            if (dtype_op_check(dt, op) != (ok ? VC_SUCCESS : VC_ERR_OP)) {
                fprintf(stderr, "\n  dtype %d op %d: expected %s\n", dt, op, ok ? "ok" : "VC_ERR_OP");
                CU_FAIL("op/dtype matrix");
            }
        }
    CU_ASSERT_EQUAL(dtype_op_check((vc_dtype_t)NDT, VC_MINLOC), VC_ERR_DTYPE);
    CU_ASSERT_EQUAL(dtype_op_check(VC_FLOAT_INT, (vc_op_t)NOP), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_size(VC_FLOAT_INT), 8);
    CU_ASSERT_EQUAL(dtype_size(VC_DOUBLE_INT), 16);
    CU_ASSERT_EQUAL(dtype_size(VC_INT32_INT), 8);
    CU_ASSERT_EQUAL(dtype_size(VC_INT64_INT), 16);
}

static void test_summary(void)
{
    sim_summary(ncases, nfail);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite k = CU_add_suite("dtype_kernels", NULL, NULL);
    CU_add_test(k, "every dtype x op vs reference", test_kernels);
    CU_add_test(k, "wrap, logical 0/1, float min", test_kernel_semantics);
    CU_add_test(k, "VC_ERR_OP for bit ops on floats", test_op_check);
    CU_add_test(k, "MINLOC/MAXLOC ties, padding, NaN", test_loc_semantics);
    CU_add_test(k, "op x dtype validity matrix", test_op_matrix);
    CU_pSuite s = CU_add_suite("coll_schedules", NULL, NULL);
    CU_add_test(s, "schedules are deterministic", test_sched_deterministic);
    CU_add_test(s, "selection table", test_select);
    CU_add_test(s, "log-depth schedules touch <= 2 log2 p peers (64..1000)", test_log_peers);
    CU_add_test(s, "all algorithms, sizes 1..64", test_all_sizes);
    CU_add_test(s, "dtype x op matrix", test_dtype_op_matrix);
    CU_add_test(s, "reduce in place at root", test_reduce_inplace_root);
    CU_add_test(s, "float results identical on all ranks", test_float_bitwise_identical);
    CU_add_test(s, "summary", test_summary);
    return sim_cunit_main();
}
