/*
 * test_coll_hier.c -- node layouts and the two-level (hier) schedules
 * without a network.
 *
 * Layouts are fed by hand (the job-wide node map is an input of
 * coll_layout_build), so nodes that this machine does not have are tested
 * too: 1..64 ranks on 1..8 nodes, placed in blocks (even and uneven),
 * round-robin as with --map-by node, with a lone rank on one node, and
 * scattered at random with arbitrary node ids. Every hierarchical schedule
 * is built for every rank and run by the shared simulator (sim.c: strict
 * rendezvous matching, bounds, overlap, deadlock and information-flow
 * checks), and the results are compared with references computed here by
 * plain loops; reductions of random floats must come out bit for bit the
 * same on every rank.
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
#include "dtype/dtype.h"
#include "sim.h"
#include "coll_talg.h"

enum { PL_BLOCK, PL_ROUND_ROBIN, PL_SKEWED, PL_LONE, PL_SCATTERED, PL_N };
static const char *const pl_name[PL_N] = {"block", "round-robin", "skewed", "lone",
                                          "scattered"};

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16; x *= 0x7feb352dU;
    x ^= x >> 15; x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* node id of rank r of p on nn nodes under placement pl */
static int place(int pl, int p, int nn, int r)
{
    switch (pl) {
    case PL_BLOCK:          /* sizes differ by at most one */
        return (int)((long)r * nn / p);
    case PL_ROUND_ROBIN:
        return r % nn;
    case PL_SKEWED:         /* node 0 takes all but one rank per other node */
        return r < p - (nn - 1) ? 0 : r - (p - (nn - 1)) + 1;
    case PL_LONE:           /* the last rank alone, the rest in blocks */
        return r == p - 1 ? nn - 1 : (nn > 1 ? (int)((long)r * (nn - 1) / (p - 1)) : 0);
    default:                /* random, ids far from 0..nn-1 */
        return 1000 - 37 * (int)(hash32((uint32_t)(r * 2654435761u + (unsigned)nn)) %
                                  (uint32_t)nn);
    }
}

/* ------------------------------------------------------------------ */
/* the layout itself, checked against facts recomputed here           */

static int check_layout(const coll_layout_t *L, int p, const int *id)
{
    /* same id <=> same node */
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++)
            if ((id[a] == id[b]) != (L->node[a] == L->node[b]))
                return 1;
    int lowest[MAXP], cnt[MAXP] = {0}, nn = 0;
    for (int r = 0; r < p; r++) {
        int n = L->node[r];
        if (n < 0 || n >= L->nnodes)
            return 2;
        if (!cnt[n]++)
            lowest[n] = r;
        if (L->local[r] != cnt[n] - 1)          /* local rank = order on the node */
            return 3;
        if (L->members[L->start[n] + L->local[r]] != r)
            return 4;
        if (n > nn)                             /* nodes numbered by lowest rank */
            return 5;
        if (n == nn)
            nn++;
    }
    if (nn != L->nnodes || L->start[0] != 0 || L->start[nn] != p)
        return 6;
    int mn = p, mx = 0, blocked = 1;
    for (int n = 0; n < nn; n++) {
        if (coll_layout_leader(L, n) != lowest[n] || coll_layout_ppn(L, n) != cnt[n])
            return 7;
        mn = cnt[n] < mn ? cnt[n] : mn;
        mx = cnt[n] > mx ? cnt[n] : mx;
        for (int j = 0; j < cnt[n]; j++)
            if (L->node[lowest[n] + j < p ? lowest[n] + j : 0] != n)
                blocked = 0;
    }
    if (mn != L->min_ppn || mx != L->max_ppn || blocked != L->blocked)
        return 8;
    return 0;
}

static void test_layouts(void)
{
    int id[MAXP];
    for (int p = 1; p <= MAXP; p++)
        for (int nn = 1; nn <= 8 && nn <= p; nn++)
            for (int pl = 0; pl < PL_N; pl++) {
                coll_layout_t L;
                for (int r = 0; r < p; r++)
                    id[r] = place(pl, p, nn, r);
                CU_ASSERT_EQUAL_FATAL(coll_layout_build(&L, p, id), VC_SUCCESS);
                int why = check_layout(&L, p, id);
                if (why)
                    fprintf(stderr, "\n  layout p=%d nn=%d %s: check %d\n", p, nn,
                            pl_name[pl], why);
                CU_ASSERT_EQUAL(why, 0);
                coll_layout_free(&L);
            }
    /* hand-made cases */
    coll_layout_t L;
    int rr[6] = {7, 3, 7, 3, 9, 9};
    CU_ASSERT_EQUAL(coll_layout_build(&L, 6, rr), VC_SUCCESS);
    CU_ASSERT_EQUAL(L.nnodes, 3);
    CU_ASSERT(L.node[0] == 0 && L.node[1] == 1 && L.node[2] == 0 && L.node[4] == 2);
    CU_ASSERT(L.members[0] == 0 && L.members[1] == 2 && L.members[2] == 1);
    CU_ASSERT(L.local[3] == 1 && L.local[5] == 1 && !L.blocked);
    CU_ASSERT(L.min_ppn == 2 && L.max_ppn == 2);
    coll_layout_free(&L);
    /* an unknown node (-1) anywhere: one node for everyone */
    int unk[4] = {0, 0, -1, 5};
    CU_ASSERT_EQUAL(coll_layout_build(&L, 4, unk), VC_SUCCESS);
    CU_ASSERT(L.nnodes == 1 && L.max_ppn == 4 && L.blocked && L.local[3] == 3);
    coll_layout_free(&L);
    int blk[5] = {4, 4, 4, 2, 2};
    CU_ASSERT_EQUAL(coll_layout_build(&L, 5, blk), VC_SUCCESS);
    CU_ASSERT(L.nnodes == 2 && L.blocked && L.min_ppn == 2 && L.max_ppn == 3);
    coll_layout_free(&L);
    CU_ASSERT_EQUAL(coll_layout_build(&L, 0, blk), VC_ERR_ARG);
}

/* ------------------------------------------------------------------ */
/* running the hierarchical schedules                                  */

typedef struct {
    int kind, p, root, inplace;
    size_t count;
    vc_dtype_t dt;
    int randf;                  /* random floats: compare bits across ranks */
    const coll_layout_t *L;
    const char *lname;
} hcase_t;

static int ncases, nfail;
static char lname_buf[64];

static void fail(const hcase_t *t, const char *why, int r)
{
    static const char *const kn[] = {"barrier", "bcast", "reduce", "allreduce",
                                     "allgather"};
    fprintf(stderr, "\n  FAIL %s/hier p=%d layout=%s count=%zu dt=%d root=%d inplace=%d"
            " rank %d: %s\n", kn[t->kind], t->p, t->lname, t->count, (int)t->dt, t->root,
            t->inplace, r, why);
    nfail++;
}

/* element i of rank r's input */
static void input(const hcase_t *t, int r, size_t i, void *out)
{
    /* unsigned arithmetic: the mix may wrap, which signed int must not */
    uint32_t h = hash32((uint32_t)r * 7919u + (uint32_t)i * 104729u + (uint32_t)t->kind * 31u + 1u);
    if (t->dt == VC_INT32)
        *(int32_t *)out = (int32_t)(h ^ (h << 13));    /* sums wrap */
    else if (t->dt == VC_DOUBLE)
        *(double *)out = t->randf ? (double)h / 4294967296.0 - 0.5
                                  : (double)((int)(h % 201) - 100);
    else
        *(float *)out = (float)((double)h / 4294967296.0 * 2.0 - 1.0);
}

/* every rank's input, and the reduction reference in rank order by plain
   loops: ints wrap as unsigned, exact doubles make the order irrelevant,
   random floats are summed in double and compared with a tolerance */
static unsigned char *inputs[MAXP];
static double *ref_d;
static uint32_t *ref_i;

static void make_inputs(const hcase_t *t, size_t es)
{
    /* from the case's arena: sim_free hands them back with the buffers */
    ref_d = sim_buf_zero((t->count + 1) * sizeof *ref_d);
    ref_i = sim_buf_zero((t->count + 1) * sizeof *ref_i);
    for (int r = 0; r < t->p; r++) {
        inputs[r] = sim_buf(t->count * es + 1);
        for (size_t i = 0; i < t->count; i++) {
            unsigned char *v = inputs[r] + i * es;
            input(t, r, i, v);
            if (t->dt == VC_INT32)
                ref_i[i] += (uint32_t)*(int32_t *)v;
            else if (t->dt == VC_DOUBLE)
                ref_d[i] += *(double *)v;
            else
                ref_d[i] += *(float *)v;
        }
    }
}

static int elem_ok(const hcase_t *t, const unsigned char *got, size_t i)
{
    if (t->dt == VC_INT32)
        return (uint32_t)((const int32_t *)got)[i] == ref_i[i];
    double g = t->dt == VC_DOUBLE ? ((const double *)got)[i] : ((const float *)got)[i];
    if (!t->randf)
        return g == ref_d[i];
    return fabs(g - ref_d[i]) <= (t->dt == VC_FLOAT ? 1e-4 : 1e-11) * (double)t->p;
}

static int rank_inplace(const hcase_t *t, int r)
{
    return t->inplace && (t->kind != COLL_REDUCE || r == t->root);
}

static void run(const hcase_t *t)
{
    static sim_t S;
    int p = t->p, alg = tindex(t->kind, "hier");
    size_t es = dtype_size(t->dt), n = t->count * es;

    ncases++;
    make_inputs(t, es);
    memset(&S, 0, sizeof S);
    S.p = p;
    for (int r = 0; r < p; r++) {
        sim_rank_t *R = &S.r[r];
        coll_args_t a;
        coll_args_set(&a, t->kind, r, p, t->root, t->count, t->dt, VC_SUM,
                      rank_inplace(t, r));
        a.layout = t->L;
        sched_init(&R->s, &a);
        if (talg(t->kind, alg)->build(&a, &R->s) != VC_SUCCESS) {
            fail(t, "builder failed", r);
            goto out;
        }
        R->know = 1ULL << r;
        size_t sl = 0, rl = 0;
        switch (t->kind) {
        case COLL_BCAST: rl = n; break;
        case COLL_REDUCE: sl = n; rl = r == t->root ? n : 0; break;
        case COLL_ALLREDUCE: sl = rl = n; break;
        case COLL_ALLGATHER: sl = n; rl = n * (size_t)p; break;
        }
        if (rank_inplace(t, r))
            sl = 0;
        R->len[COLL_SBUF] = sl;
        R->len[COLL_RBUF] = rl;
        R->len[COLL_TMP] = R->s.tmp_bytes;
        for (int b = 0; b < COLL_NBUF; b++) {
            R->buf[b] = sim_buf(R->len[b] + 1);
            memset(R->buf[b], 0x5C, R->len[b] + 1);
        }
        unsigned char *dst = NULL;
        if (t->kind == COLL_BCAST)
            dst = r == t->root ? R->buf[COLL_RBUF] : NULL;
        else if (t->kind != COLL_BARRIER)
            dst = rank_inplace(t, r) ? R->buf[COLL_RBUF] + a.in_off : R->buf[COLL_SBUF];
        if (dst && n)
            memcpy(dst, inputs[r], n);
    }
    if (sim_run(&S)) {
        fail(t, failmsg, -1);
        goto out;
    }
    uint64_t all = p == 64 ? ~0ULL : (1ULL << p) - 1;
    for (int r = 0; r < p; r++) {
        sim_rank_t *R = &S.r[r];
        unsigned char *got = R->buf[COLL_RBUF];
        uint64_t need = t->kind == COLL_BARRIER ? all : 0;
        if (n && t->kind == COLL_BCAST)
            need = 1ULL << t->root;
        if (n && (t->kind == COLL_ALLREDUCE || t->kind == COLL_ALLGATHER ||
                  (t->kind == COLL_REDUCE && r == t->root)))
            need = all;
        if ((R->know & need) != need) {
            fail(t, "did not hear from every rank it depends on", r);
            goto out;
        }
        for (int b = 0; b < COLL_NBUF; b++)
            if (R->buf[b][R->len[b]] != 0x5C) {
                fail(t, "wrote past a buffer end", r);
                goto out;
            }
        if (R->len[COLL_SBUF] && memcmp(R->buf[COLL_SBUF], inputs[r], n)) {
            fail(t, "SBUF modified", r);
            goto out;
        }
        int bad = 0;
        switch (t->kind) {
        case COLL_BCAST:
            bad = n && memcmp(got, inputs[t->root], n);
            break;
        case COLL_ALLGATHER:
            for (int j = 0; j < p && !bad; j++)
                bad = n && memcmp(got + (size_t)j * n, inputs[j], n);
            break;
        case COLL_REDUCE:
        case COLL_ALLREDUCE:
            if (t->kind == COLL_REDUCE && r != t->root)
                break;
            for (size_t i = 0; i < t->count && !bad; i++)
                bad = !elem_ok(t, got, i);
            if (!bad && t->kind == COLL_ALLREDUCE && n &&
                memcmp(got, S.r[0].buf[COLL_RBUF], n)) {
                fail(t, "bits differ from rank 0", r);
                goto out;
            }
            break;
        }
        if (bad) {
            fail(t, "result differs from the reference", r);
            goto out;
        }
    }
out:
    sim_free(&S);
}

/* roots worth trying on a layout: 0, the last rank, a rank that is not
   its node's leader, the lowest rank of the last node */
static int roots_of(const coll_layout_t *L, int *roots)
{
    int n = 0, p = L->size;
    roots[n++] = 0;
    if (p > 1)
        roots[n++] = p - 1;
    for (int r = 1; r < p; r++)
        if (L->local[r] > 0 && r != p - 1) {
            roots[n++] = r;
            break;
        }
    int last = coll_layout_leader(L, L->nnodes - 1);
    if (last != 0 && last != p - 1)
        roots[n++] = last;
    return n;
}

static void run_layout(const coll_layout_t *L, int quick)
{
    const size_t counts[] = {0, 1, 5, 67 + (size_t)L->size};
    int nc = quick ? 2 : 4, roots[4], nr = roots_of(L, roots);
    hcase_t t = {0};
    t.p = L->size;
    t.L = L;
    t.lname = lname_buf;
    t.kind = COLL_BARRIER;
    t.dt = VC_INT32;
    run(&t);
    for (int c = quick ? 2 : 0; c < nc + (quick ? 2 : 0); c++) {
        t.count = counts[c];
        for (int ri = 0; ri < nr; ri++) {
            t.root = roots[ri];
            t.inplace = 0;
            t.kind = COLL_BCAST;
            t.dt = VC_INT32;
            run(&t);
            t.kind = COLL_REDUCE;
            for (int ip = 0; ip < 2; ip++) {
                t.inplace = ip;
                t.dt = VC_INT32;
                run(&t);
                t.dt = VC_DOUBLE;
                run(&t);
            }
        }
        t.root = 0;
        for (int ip = 0; ip < 2; ip++) {
            t.inplace = ip;
            t.kind = COLL_ALLREDUCE;
            t.dt = VC_INT32;
            run(&t);
            t.dt = VC_DOUBLE;
            run(&t);
            t.kind = COLL_ALLGATHER;
            t.dt = VC_INT32;
            run(&t);
        }
    }
}

static void for_layouts(void (*fn)(const coll_layout_t *L, int p))
{
    int id[MAXP];
    for (int p = 1; p <= MAXP; p++)
        for (int nn = 1; nn <= 8 && nn <= p; nn++)
            for (int pl = 0; pl < PL_N; pl++) {
                coll_layout_t L;
                /* every size to 24, then a spread (odd, prime, powers of two) */
                if (p > 24 && p % 6 != 1 && p != 32 && p != 48 && p != MAXP)
                    break;
                if (nn == 1 && pl > 0)
                    continue;           /* one node is one layout */
                for (int r = 0; r < p; r++)
                    id[r] = place(pl, p, nn, r);
                if (coll_layout_build(&L, p, id))
                    continue;
                snprintf(lname_buf, sizeof lname_buf, "%s/%d nodes (%d..%d per node)",
                         pl_name[pl], L.nnodes, L.min_ppn, L.max_ppn);
                L.oversub = (p + nn) & 1;   /* both selections of the phases */
                fn(&L, p);
                coll_layout_free(&L);
            }
}

static void every_layout(const coll_layout_t *L, int p)
{
    /* all counts up to 24 ranks, fewer (the big ones) above */
    run_layout(L, p > 24);
}

static void test_hier_all_layouts(void)
{
    int before = nfail;
    for_layouts(every_layout);
    CU_ASSERT_EQUAL(nfail, before);
}

/* bigger messages (the leaders' and the nodes' phases switch to their
   bandwidth algorithms) and random floats: bits identical everywhere */
static void float_layout(const coll_layout_t *L, int p)
{
    if (p % 3 != 1 && p != MAXP)
        return;
    hcase_t t = {0};
    t.p = p;
    t.L = L;
    t.lname = lname_buf;
    t.randf = 1;
    for (int d = 0; d < 2; d++) {
        t.dt = d ? VC_DOUBLE : VC_FLOAT;
        t.count = d ? 40000 : 3001;
        t.kind = COLL_ALLREDUCE;
        t.inplace = d;
        run(&t);
        t.kind = COLL_REDUCE;
        t.root = p / 2;
        run(&t);
    }
    t.randf = 0;
    t.dt = VC_INT32;
    t.count = 9000;
    t.kind = COLL_BCAST;
    run(&t);
    t.count = 5000 / (size_t)p + 1;
    t.kind = COLL_ALLGATHER;
    run(&t);
}

static void test_hier_big_and_float(void)
{
    int before = nfail;
    for_layouts(float_layout);
    CU_ASSERT_EQUAL(nfail, before);
}

/* a layout that does not belong to the communicator is refused, and no
   layout at all means one node */
static void test_hier_args(void)
{
    coll_layout_t L;
    int id[4] = {0, 0, 1, 1};
    CU_ASSERT_EQUAL(coll_layout_build(&L, 4, id), VC_SUCCESS);
    for (int kind = 0; kind <= COLL_ALLGATHER; kind++) {
        coll_args_t a;
        coll_sched_t s;
        coll_args_set(&a, kind, 1, 5, 0, 3, VC_INT32, VC_SUM, 0);
        a.layout = &L;
        sched_init(&s, &a);
        CU_ASSERT_EQUAL(talg(kind, tindex(kind, "hier"))->build(&a, &s),
                        VC_ERR_ARG);
        sched_free(&s);
    }
    coll_layout_free(&L);
    hcase_t t = {0};
    t.p = 7;
    t.lname = "none";
    t.dt = VC_INT32;
    t.count = 11;
    for (t.kind = 0; t.kind <= COLL_ALLGATHER; t.kind++)
        run(&t);
    CU_ASSERT_EQUAL(nfail, 0);
}

/* auto picks hier only where it can pay (the rules table; asked as if
   shared memory had declined, since "shm" comes first where ranks share
   a node) */
static int hier(const coll_layout_t *L, int kind, size_t bytes, int noncomm)
{
    return !strcmp(tchoose(L, kind, bytes / 8 ? bytes / 8 : 0, 8, noncomm, 1), "hier");
}

static void test_hier_select(void)
{
    coll_layout_t L;
    int id[8];
    for (int k = 0; k <= COLL_ALLGATHER; k++)
        CU_ASSERT(tindex(k, "hier") > 0);
    CU_ASSERT_EQUAL(tindex(COLL_BCAST, "nonsense"), 0);
    for (int r = 0; r < 8; r++)
        id[r] = r / 4;
    coll_layout_build(&L, 8, id);                  /* 2 nodes x 4, blocked */
    for (int k = 0; k <= COLL_ALLGATHER; k++)
        CU_ASSERT(hier(&L, k, 64, 0));
    CU_ASSERT_FALSE(hier(&L, COLL_ALLREDUCE, 64, 1));   /* noncomm */
    CU_ASSERT_FALSE(hier(&L, COLL_ALLGATHER, 1u << 20, 0));
    coll_layout_free(&L);
    for (int r = 0; r < 8; r++)
        id[r] = r % 2;
    coll_layout_build(&L, 8, id);                  /* round-robin */
    CU_ASSERT(hier(&L, COLL_ALLGATHER, 1u << 20, 0));
    coll_layout_free(&L);
    for (int r = 0; r < 8; r++)
        id[r] = r;
    coll_layout_build(&L, 8, id);                  /* one rank per node */
    CU_ASSERT_FALSE(hier(&L, COLL_BCAST, 64, 0));
    coll_layout_free(&L);
    memset(id, 0, sizeof id);
    coll_layout_build(&L, 8, id);                  /* one node */
    CU_ASSERT_FALSE(hier(&L, COLL_BARRIER, 0, 0));
    coll_layout_free(&L);
}

static void test_summary(void)
{
    sim_summary(ncases, nfail);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite s = CU_add_suite("coll_hier", NULL, NULL);
    CU_add_test(s, "layouts: 1..64 ranks, 1..8 nodes, 5 placements", test_layouts);
    CU_add_test(s, "selection of hier", test_hier_select);
    CU_add_test(s, "wrong-size layout refused, no layout = one node", test_hier_args);
    CU_add_test(s, "hier schedules on every layout", test_hier_all_layouts);
    CU_add_test(s, "big messages, float bits identical", test_hier_big_and_float);
    CU_add_test(s, "summary", test_summary);
    return sim_cunit_main();
}
