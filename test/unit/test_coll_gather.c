/*
 * test_coll_gather.c -- the gather family without a network: gather,
 * gatherv, scatter, scatterv and allgatherv.
 *
 * Every algorithm's schedule is built for every rank of a simulated job of
 * 1..64 ranks and run by the shared simulator (sim.c: strict rendezvous
 * model, bounds, overlap, size-match and deadlock checks). Inputs are a
 * byte pattern of (source rank, position); the expected receive buffers are
 * written here by plain loops over ranks and displacements, never by the
 * library. Receive buffers start as 0xA5 garbage so gaps between the
 * v-forms' blocks must come back untouched, and one sentinel byte past every
 * buffer catches writes off the end. The v-forms get several count shapes
 * (all zero, zeros mixed in, one large block, equal) and displacement
 * layouts (packed in rank order, reversed with gaps).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CUnit/Basic.h>

#include "vcoll.h"
#include "coll/sched.h"
#include "dtype/dtype.h"
#include "core/config.h"
#include "sim.h"
#include "coll_talg.h"

#define GARBAGE 0xA5

typedef struct {
    int kind, alg, p, root, inplace;
    vc_dtype_t dt;
    size_t cnt[MAXP];      /* per-rank counts (all equal for gather/scatter) */
    size_t dsp[MAXP];      /* displacements of the v-forms */
} gcase_t;

static int ncases, nfail;

static const char *kname(int kind)
{
    switch (kind) {
    case COLL_GATHER: return "gather";
    case COLL_GATHERV: return "gatherv";
    case COLL_SCATTER: return "scatter";
    case COLL_SCATTERV: return "scatterv";
    default: return "allgatherv";
    }
}

/* byte i of rank src's block */
static uint8_t pat(int src, size_t i)
{
    return (uint8_t)(src * 131 + i * 7 + 3 + (i >> 8) * 11);
}

static int is_v(int kind)
{
    return kind == COLL_GATHERV || kind == COLL_SCATTERV || kind == COLL_ALLGATHERV;
}

static int is_gather(int kind) { return kind == COLL_GATHER || kind == COLL_GATHERV; }
static int is_scatter(int kind) { return kind == COLL_SCATTER || kind == COLL_SCATTERV; }

/* offset (elements) of rank j's block in the root's / everyone's big buffer */
static size_t slot(const gcase_t *t, int j)
{
    return is_v(t->kind) ? t->dsp[j] : (size_t)j * t->cnt[0];
}

static size_t extent(const gcase_t *t)
{
    size_t e = 0;
    for (int j = 0; j < t->p; j++)
        if (t->cnt[j] && slot(t, j) + t->cnt[j] > e)
            e = slot(t, j) + t->cnt[j];
    return e;
}

static void fail(const gcase_t *t, const char *what, int r)
{
    fprintf(stderr, "\n  FAIL %s/%s p=%d root=%d inplace=%d dt=%d cnt[0]=%zu: rank %d: %s\n",
            kname(t->kind), talg(t->kind, t->alg)->name, t->p, t->root, t->inplace,
            (int)t->dt, t->cnt[0], r, what);
}

/* does rank r run in place (MPI: rooted forms only at the root) */
static int rank_inplace(const gcase_t *t, int r)
{
    return t->inplace && (t->kind == COLL_ALLGATHERV || r == t->root);
}

/* Build and load rank r: buffers sized as an MPI program would size them. */
static int setup_rank(sim_t *S, const gcase_t *t, int r)
{
    sim_rank_t *R = &S->r[r];
    size_t es = dtype_size(t->dt), big = extent(t) * es, mine = t->cnt[r] * es;
    int root = r == t->root, ip = rank_inplace(t, r);
    coll_args_t a;

    coll_args_set(&a, t->kind, r, t->p, t->root, t->cnt[r], t->dt, VC_SUM, ip);
    if (is_v(t->kind) && (root || t->kind == COLL_ALLGATHERV))
        coll_args_vec(&a, t->kind, t->cnt, t->dsp, NULL, NULL);
    sched_init(&R->s, &a);
    if (talg(t->kind, t->alg)->build(&a, &R->s) != VC_SUCCESS)
        return 1;
    R->know = 1ULL << r;
    size_t sl = 0, rl = 0;
    if (is_gather(t->kind)) {
        sl = ip ? 0 : mine;
        rl = root ? big : 0;
    } else if (is_scatter(t->kind)) {
        sl = root ? big : 0;
        rl = ip ? 0 : mine;
    } else {
        sl = ip ? 0 : mine;
        rl = big;
    }
    R->len[COLL_SBUF] = sl;
    R->len[COLL_RBUF] = rl;
    R->len[COLL_TMP] = R->s.tmp_bytes;
    for (int b = 0; b < COLL_NBUF; b++) {
        R->buf[b] = sim_buf(R->len[b] + 1);
        memset(R->buf[b], GARBAGE, R->len[b] + 1);
    }
    if (is_scatter(t->kind)) {
        /* the root's send buffer holds every rank's block at its slot */
        for (int j = 0; root && j < t->p; j++)
            for (size_t i = 0; i < t->cnt[j] * es; i++)
                R->buf[COLL_SBUF][slot(t, j) * es + i] = pat(j, i);
    } else {
        unsigned char *dst = ip ? R->buf[COLL_RBUF] + slot(t, r) * es : R->buf[COLL_SBUF];
        for (size_t i = 0; i < mine; i++)
            dst[i] = pat(r, i);
    }
    return 0;
}

/* expected byte at offset off of a big (gather root / allgatherv) buffer */
static uint8_t expect_big(const gcase_t *t, size_t off, size_t es)
{
    for (int j = 0; j < t->p; j++) {
        size_t b = slot(t, j) * es, n = t->cnt[j] * es;
        if (off >= b && off < b + n)
            return pat(j, off - b);
    }
    return GARBAGE;
}

static int check_rank(sim_t *S, const gcase_t *t, int r)
{
    sim_rank_t *R = &S->r[r];
    size_t es = dtype_size(t->dt);
    char msg[128];

    for (int b = 0; b < COLL_NBUF; b++)
        if (R->buf[b][R->len[b]] != GARBAGE) {
            fail(t, "wrote past a buffer end", r);
            return 1;
        }
    if (is_scatter(t->kind)) {
        if (r == t->root)   /* SBUF is read only: still the original blocks */
            for (int j = 0; j < t->p; j++)
                for (size_t i = 0; i < t->cnt[j] * es; i++)
                    if (R->buf[COLL_SBUF][slot(t, j) * es + i] != pat(j, i)) {
                        fail(t, "SBUF modified", r);
                        return 1;
                    }
        for (size_t i = 0; i < R->len[COLL_RBUF]; i++)
            if (R->buf[COLL_RBUF][i] != pat(r, i)) {
                snprintf(msg, sizeof msg, "wrong byte %zu of my block", i);
                fail(t, msg, r);
                return 1;
            }
        return 0;
    }
    for (size_t i = 0; i < R->len[COLL_SBUF]; i++)
        if (R->buf[COLL_SBUF][i] != pat(r, i)) {
            fail(t, "SBUF modified", r);
            return 1;
        }
    for (size_t i = 0; i < R->len[COLL_RBUF]; i++)
        if (R->buf[COLL_RBUF][i] != expect_big(t, i, es)) {
            snprintf(msg, sizeof msg, "RBUF byte %zu: %u, want %u", i,
                     R->buf[COLL_RBUF][i], expect_big(t, i, es));
            fail(t, msg, r);
            return 1;
        }
    return 0;
}

static void run_case(const gcase_t *t)
{
    static sim_t S;   /* big: keep it off the stack */
    int bad = 0;

    ncases++;
    memset(&S, 0, sizeof S);
    S.p = t->p;
    for (int r = 0; r < t->p && !bad; r++)
        if (setup_rank(&S, t, r)) {
            fail(t, "builder failed", r);
            bad = 1;
        }
    if (!bad && sim_run(&S)) {
        fail(t, failmsg, -1);
        bad = 1;
    }
    for (int r = 0; r < t->p && !bad; r++)
        bad = check_rank(&S, t, r);
    sim_free(&S);
    nfail += bad;
}

static int roots_for(int p, int *roots)
{
    int n = 0;
    if (p <= 9) {
        for (int r = 0; r < p; r++)
            roots[n++] = r;
        return n;
    }
    roots[n++] = 0;
    roots[n++] = 1;
    roots[n++] = p / 2;
    roots[n++] = p - 1;
    return n;
}

/* count shapes of the v-forms (shape < NSHAPES) */
#define NSHAPES 6
static void shape_counts(gcase_t *t, int shape)
{
    for (int j = 0; j < t->p; j++) {
        size_t c = 0;
        switch (shape) {
        case 0: c = 0; break;                                  /* all empty */
        case 1: c = (size_t)(j % 4); break;                    /* zeros mixed in */
        case 2: c = (size_t)((j * 7) % 5) + (j == t->p / 2 ? 1000 : 0); break;
        case 3: c = 3; break;                                  /* equal */
        case 4: c = j == t->root ? 0 : (size_t)(j % 3 + 1); break;  /* root empty */
        default: c = j == (t->root + 1) % t->p ? 777 : 0; break;   /* one block */
        }
        t->cnt[j] = c;
    }
}

/* layout 0: packed in rank order; 1: reversed, with gaps */
static void layout_displs(gcase_t *t, int layout)
{
    size_t off = layout ? 2 : 0;
    for (int k = 0; k < t->p; k++) {
        int j = layout ? t->p - 1 - k : k;
        t->dsp[j] = off;
        off += t->cnt[j] + (layout ? (size_t)(j % 3) : 0);
    }
}

/* gather and scatter: every algorithm, p = 1..64, counts 0, 1, 7, p-1, large */
static void test_gather_scatter(void)
{
    int kinds[] = {COLL_GATHER, COLL_SCATTER}, before = nfail;
    for (int ki = 0; ki < 2; ki++)
        for (int alg = 1; alg < tnsched(kinds[ki]); alg++)
            for (int p = 1; p <= MAXP; p++) {
                size_t counts[] = {0, 1, 7, (size_t)(p > 1 ? p - 1 : 2), 1000 + (size_t)p};
                int roots[MAXP], nr = roots_for(p, roots);
                for (int c = 0; c < 5; c++)
                    for (int ri = 0; ri < nr; ri++)
                        for (int ip = 0; ip < 2; ip++) {
                            gcase_t t = {kinds[ki], alg, p, roots[ri], ip,
                                         c == 2 ? VC_UINT8 : VC_INT32, {0}, {0}};
                            for (int j = 0; j < p; j++)
                                t.cnt[j] = counts[c];
                            run_case(&t);
                        }
            }
    CU_ASSERT_EQUAL(nfail, before);
}

/* the v-forms: every algorithm, p = 1..64, count shapes x layouts */
static void test_vector(void)
{
    int kinds[] = {COLL_GATHERV, COLL_SCATTERV, COLL_ALLGATHERV}, before = nfail;
    for (int ki = 0; ki < 3; ki++)
        for (int alg = 1; alg < tnsched(kinds[ki]); alg++)
            for (int p = 1; p <= MAXP; p++) {
                int roots[MAXP], nr = kinds[ki] == COLL_ALLGATHERV ? 1 : roots_for(p, roots);
                if (kinds[ki] == COLL_ALLGATHERV)
                    roots[0] = 0;
                for (int shape = 0; shape < NSHAPES; shape++)
                    for (int lay = 0; lay < 2; lay++)
                        for (int ri = 0; ri < nr; ri++)
                            for (int ip = 0; ip < 2; ip++) {
                                gcase_t t = {kinds[ki], alg, p, roots[ri], ip,
                                             lay ? VC_INT16 : VC_DOUBLE, {0}, {0}};
                                shape_counts(&t, shape);
                                layout_displs(&t, lay);
                                run_case(&t);
                            }
            }
    CU_ASSERT_EQUAL(nfail, before);
}

/* names line up with builders; auto picks binomial small, linear large */
static void test_select_gather(void)
{
    CU_ASSERT_EQUAL(tnsched(COLL_GATHER), 3);
    CU_ASSERT_EQUAL(tnsched(COLL_SCATTER), 3);
    CU_ASSERT_EQUAL(tnsched(COLL_GATHERV), 2);
    CU_ASSERT_EQUAL(tnsched(COLL_SCATTERV), 2);
    CU_ASSERT_EQUAL(tnsched(COLL_ALLGATHERV), 3);
    CU_ASSERT_STRING_EQUAL(talg(COLL_GATHER, 1)->name, "binomial");
    CU_ASSERT_STRING_EQUAL(talg(COLL_SCATTER, 2)->name, "linear");
    CU_ASSERT_STRING_EQUAL(talg(COLL_ALLGATHERV, 2)->name, "recursive_doubling");
    /* then the node's slots, which the simulator does not run */
    for (int k = COLL_GATHER; k <= COLL_SCATTERV; k++) {
        const coll_alg_t *f = coll_alg_find(k, "flags");
        CU_ASSERT(f && !f->build && coll_alg_number(f) == tnsched(k));
    }
    CU_ASSERT_PTR_NULL(talg(COLL_GATHERV, 3));
    CU_ASSERT_PTR_NULL(talg(COLL_SCATTERV, 3));
    for (int k = COLL_GATHER; k <= COLL_SCATTER; k += COLL_SCATTER - COLL_GATHER) {
        CU_ASSERT_EQUAL(tselect(k, 8, 8, 2, 0, 0), 1);
        CU_ASSERT_EQUAL(tselect(k, 8, 1u << 20, 1u << 18, 0, 0), 2);
        CU_ASSERT_EQUAL(tselect(k, 2, 8, 2, 0, 0), 2);
    }
    CU_ASSERT_EQUAL(tselect(COLL_ALLGATHERV, 8, 800, 200, 0, 0), 2);
    CU_ASSERT_EQUAL(tselect(COLL_ALLGATHERV, 8, 8u << 20, 2u << 20, 0, 0), 1);
}

static void test_summary(void)
{
    sim_summary(ncases, nfail);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite s = CU_add_suite("coll_gather_family", NULL, NULL);
    CU_add_test(s, "selection and names", test_select_gather);
    CU_add_test(s, "gather, scatter: all algorithms, sizes 1..64", test_gather_scatter);
    CU_add_test(s, "gatherv, scatterv, allgatherv: counts x layouts, 1..64",
                test_vector);
    CU_add_test(s, "summary", test_summary);
    return sim_cunit_main();
}
