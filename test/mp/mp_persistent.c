/*
 * mp_persistent.c -- persistent collectives (vc_<name>_init, vc_start,
 * vc_startall, vc_request_free) across processes, any np.
 *
 * For every collective: init once, start it several times with the buffer
 * contents changed between starts, complete each start by vc_wait, a
 * vc_test loop or vc_waitall, and check every element against a value
 * computed here with plain loops from (source, destination, start, index).
 * Regular blocking and non-blocking collectives run between the starts.
 * Then: two requests started in different orders on even and odd ranks and
 * completed in different orders (MPI-4: starts need not be ordered alike);
 * vc_startall / vc_waitall with the array in another order on odd ranks;
 * vc_testany / vc_waitany / vc_testall over arrays holding inactive and
 * NULL entries; the local errors (start an active request, vc_startall with
 * one, free an active or a non-persistent one); and one request left for
 * vc_finalize to release. Run under mpirun; exit 0 on success.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "mp_util.h"
#include "coll/coll.h"

#define NSTARTS 5

/* element i of what src contributes to dst (dst = -1: to everyone) on start it */
static uint32_t val(int src, int dst, int it, size_t i)
{
    uint32_t h = (uint32_t)src * 2654435761u + (uint32_t)(dst + 1) * 40503u +
                 (uint32_t)it * 97u + (uint32_t)i * 7919u;
    return h ^ (h >> 11);
}

/* one collective under test: its buffers and arrays, how to init it, how
   to fill its inputs for start it and check its outputs */
typedef struct pc {
    const char *name;
    size_t n;                    /* the count the test was sized with */
    int root;
    uint32_t *s, *r;
    size_t slen, rlen;           /* elements */
    size_t *sc, *sd, *rc, *rd;   /* counts and displacements (p entries) */
    int (*init)(struct pc *c, vc_request_t *req);
    void (*fill)(struct pc *c, int it);
    void (*check)(struct pc *c, int it);
} pc_t;

#define P mp_size
#define ME mp_rank
#define U32 VC_UINT32

static void expect(pc_t *c, int it, size_t i, uint32_t got, uint32_t want)
{
    if (got != want)
        FAIL("%s n=%zu start %d: element %zu is %u, expected %u", c->name, c->n, it, i,
             (unsigned)got, (unsigned)want);
}

/* a sentinel that must come back untouched */
#define UNTOUCHED 0xdeadbeefu

static void fill_own(pc_t *c, int it)     /* sbuf = my contribution to all */
{
    for (size_t i = 0; i < c->slen; i++)
        c->s[i] = val(ME, -1, it, i);
    for (size_t i = 0; i < c->rlen; i++)
        c->r[i] = UNTOUCHED;
}

static void fill_per_dest(pc_t *c, int it)  /* sbuf block j (sc/sd) = mine to j */
{
    for (size_t i = 0; i < c->slen; i++)
        c->s[i] = UNTOUCHED;
    for (int j = 0; j < P; j++)
        for (size_t i = 0; i < c->sc[j]; i++)
            c->s[c->sd[j] + i] = val(ME, j, it, i);
    for (size_t i = 0; i < c->rlen; i++)
        c->r[i] = UNTOUCHED;
}

static uint32_t sum_over(int lo, int hi, int dst, int it, size_t i)
{
    uint32_t s = 0;
    for (int k = lo; k < hi; k++)
        s += val(k, dst, it, i);
    return s;
}

/* ---- the collectives ---- */

static int i_barrier(pc_t *c, vc_request_t *q) { (void)c; return vc_barrier_init(VC_COMM_WORLD, q); }
static void f_none(pc_t *c, int it) { (void)c, (void)it; }
static void k_none(pc_t *c, int it) { (void)c, (void)it; }

static int i_bcast(pc_t *c, vc_request_t *q)
{
    return vc_bcast_init(c->r, c->n, U32, c->root, VC_COMM_WORLD, q);
}
static void f_bcast(pc_t *c, int it)
{
    for (size_t i = 0; i < c->n; i++)
        c->r[i] = ME == c->root ? val(c->root, -1, it, i) : UNTOUCHED;
}
static void k_bcast(pc_t *c, int it)
{
    for (size_t i = 0; i < c->n; i++)
        expect(c, it, i, c->r[i], val(c->root, -1, it, i));
}

static int i_reduce(pc_t *c, vc_request_t *q)
{
    return vc_reduce_init(c->s, c->r, c->n, U32, VC_SUM, c->root, VC_COMM_WORLD, q);
}
static void k_reduce(pc_t *c, int it)
{
    for (size_t i = 0; i < c->n; i++)
        expect(c, it, i, c->r[i], ME == c->root ? sum_over(0, P, -1, it, i) : UNTOUCHED);
}

static int i_allreduce(pc_t *c, vc_request_t *q)
{
    return vc_allreduce_init(c->s, c->r, c->n, U32, VC_SUM, VC_COMM_WORLD, q);
}
static void k_allreduce(pc_t *c, int it)
{
    for (size_t i = 0; i < c->n; i++)
        expect(c, it, i, c->r[i], sum_over(0, P, -1, it, i));
}

static int i_scan(pc_t *c, vc_request_t *q)
{
    return vc_scan_init(c->s, c->r, c->n, U32, VC_SUM, VC_COMM_WORLD, q);
}
static void k_scan(pc_t *c, int it)
{
    for (size_t i = 0; i < c->n; i++)
        expect(c, it, i, c->r[i], sum_over(0, ME + 1, -1, it, i));
}

static int i_exscan(pc_t *c, vc_request_t *q)
{
    return vc_exscan_init(c->s, c->r, c->n, U32, VC_SUM, VC_COMM_WORLD, q);
}
static void k_exscan(pc_t *c, int it)    /* rank 0's rbuf is left untouched */
{
    for (size_t i = 0; i < c->n; i++)
        expect(c, it, i, c->r[i], ME ? sum_over(0, ME, -1, it, i) : UNTOUCHED);
}

/* gathers: block k of the result (rc/rd) holds rank k's contribution */
static void k_gathered(pc_t *c, int it, int here)
{
    for (int k = 0; k < P; k++)
        for (size_t i = 0; i < c->rc[k]; i++)
            expect(c, it, c->rd[k] + i, c->r[c->rd[k] + i],
                   here ? val(k, -1, it, i) : UNTOUCHED);
}
static void k_allgather(pc_t *c, int it) { k_gathered(c, it, 1); }
static void k_gather(pc_t *c, int it) { k_gathered(c, it, ME == c->root); }

static int i_allgather(pc_t *c, vc_request_t *q)
{
    return vc_allgather_init(c->s, c->r, c->n, U32, VC_COMM_WORLD, q);
}
static int i_gather(pc_t *c, vc_request_t *q)
{
    return vc_gather_init(c->s, c->r, c->n, U32, c->root, VC_COMM_WORLD, q);
}
static int i_gatherv(pc_t *c, vc_request_t *q)
{
    return vc_gatherv_init(c->s, c->rc[ME], c->r, c->rc, c->rd, U32, c->root, VC_COMM_WORLD,
                           q);
}
static int i_allgatherv(pc_t *c, vc_request_t *q)
{
    return vc_allgatherv_init(c->s, c->rc[ME], c->r, c->rc, c->rd, U32, VC_COMM_WORLD, q);
}

/* scatters: the root's block k (sc/sd) goes to rank k */
static int i_scatter(pc_t *c, vc_request_t *q)
{
    return vc_scatter_init(c->s, c->r, c->n, U32, c->root, VC_COMM_WORLD, q);
}
static int i_scatterv(pc_t *c, vc_request_t *q)
{
    return vc_scatterv_init(c->s, c->sc, c->sd, c->r, c->sc[ME], U32, c->root, VC_COMM_WORLD,
                            q);
}
static void f_scatter(pc_t *c, int it)
{
    fill_per_dest(c, it);
    if (ME != c->root)
        for (size_t i = 0; i < c->slen; i++)
            c->s[i] = UNTOUCHED;
}
static void k_scatter(pc_t *c, int it)
{
    for (size_t i = 0; i < c->sc[ME]; i++)
        expect(c, it, i, c->r[i], val(c->root, ME, it, i));
}

/* alltoall(v): my block k (rc/rd) is what rank k sent me */
static int i_alltoall(pc_t *c, vc_request_t *q)
{
    return vc_alltoall_init(c->s, c->r, c->n, U32, VC_COMM_WORLD, q);
}
static int i_alltoallv(pc_t *c, vc_request_t *q)
{
    return vc_alltoallv_init(c->s, c->sc, c->sd, c->r, c->rc, c->rd, U32, VC_COMM_WORLD, q);
}
static void k_alltoall(pc_t *c, int it)
{
    for (int k = 0; k < P; k++)
        for (size_t i = 0; i < c->rc[k]; i++)
            expect(c, it, c->rd[k] + i, c->r[c->rd[k] + i], val(k, ME, it, i));
}

/* reduce_scatter(_block): every rank's block j (sc/sd) is summed into rank j */
static int i_rsb(pc_t *c, vc_request_t *q)
{
    return vc_reduce_scatter_block_init(c->s, c->r, c->n, U32, VC_SUM, VC_COMM_WORLD, q);
}
static int i_rs(pc_t *c, vc_request_t *q)
{
    return vc_reduce_scatter_init(c->s, c->r, c->sc, U32, VC_SUM, VC_COMM_WORLD, q);
}
static void k_rs(pc_t *c, int it)
{
    for (size_t i = 0; i < c->sc[ME]; i++)
        expect(c, it, i, c->r[i], sum_over(0, P, ME, it, i));
}

/* block sizes: uniform n, or n + (k % 3) (v forms) */
static size_t blk(const pc_t *c, int vform, int k) { return c->n + (vform ? (size_t)(k % 3) : 0); }

/* alltoallv: what s sends d (differs from what d sends s) */
static size_t pair(const pc_t *c, int vform, int s, int d)
{
    return c->n + (vform ? (size_t)((s + 2 * d) % 3) : 0);
}

/* displacements for the counts cnt, blocks one after another with gap
   elements between (so a block written off its place shows); the total */
static size_t place(const size_t *cnt, size_t *dsp, int gap)
{
    size_t off = 0;
    for (int k = 0; k < P; k++) {
        dsp[k] = off;
        off += cnt[k] + (size_t)gap;
    }
    return off;
}

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_ALLGATHER, K_GATHER, K_GATHERV,
       K_SCATTER, K_SCATTERV, K_ALLGATHERV, K_ALLTOALL, K_ALLTOALLV, K_RSB, K_RS, K_SCAN,
       K_EXSCAN, NK };

static void pc_setup(pc_t *c, int kind, size_t n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->root = (kind + 1) % P;    /* a different root per collective */
    c->sc = calloc((size_t)P, sizeof(size_t));
    c->sd = calloc((size_t)P, sizeof(size_t));
    c->rc = calloc((size_t)P, sizeof(size_t));
    c->rd = calloc((size_t)P, sizeof(size_t));
    int v = kind == K_GATHERV || kind == K_SCATTERV || kind == K_ALLGATHERV ||
            kind == K_ALLTOALLV || kind == K_RS;
    c->slen = c->rlen = n;
    c->fill = fill_own;
    switch (kind) {
    case K_BARRIER: c->name = "barrier"; c->init = i_barrier; c->fill = f_none;
        c->check = k_none; break;
    case K_BCAST: c->name = "bcast"; c->init = i_bcast; c->fill = f_bcast;
        c->check = k_bcast; break;
    case K_REDUCE: c->name = "reduce"; c->init = i_reduce; c->check = k_reduce; break;
    case K_ALLREDUCE: c->name = "allreduce"; c->init = i_allreduce; c->check = k_allreduce;
        break;
    case K_SCAN: c->name = "scan"; c->init = i_scan; c->check = k_scan; break;
    case K_EXSCAN: c->name = "exscan"; c->init = i_exscan; c->check = k_exscan; break;
    case K_ALLGATHER: case K_GATHER: case K_GATHERV: case K_ALLGATHERV:
        c->name = kind == K_ALLGATHER ? "allgather" : kind == K_GATHER ? "gather"
                  : kind == K_GATHERV ? "gatherv" : "allgatherv";
        c->init = kind == K_ALLGATHER ? i_allgather : kind == K_GATHER ? i_gather
                  : kind == K_GATHERV ? i_gatherv : i_allgatherv;
        c->check = kind == K_ALLGATHER || kind == K_ALLGATHERV ? k_allgather : k_gather;
        for (int k = 0; k < P; k++)
            c->rc[k] = blk(c, v, k);
        c->rlen = place(c->rc, c->rd, v);
        c->slen = c->rc[ME];
        break;
    case K_SCATTER: case K_SCATTERV:
        c->name = kind == K_SCATTER ? "scatter" : "scatterv";
        c->init = kind == K_SCATTER ? i_scatter : i_scatterv;
        c->fill = f_scatter;
        c->check = k_scatter;
        for (int k = 0; k < P; k++)
            c->sc[k] = blk(c, v, k);
        c->slen = place(c->sc, c->sd, v);
        c->rlen = c->sc[ME];
        break;
    case K_ALLTOALL: case K_ALLTOALLV:
        c->name = kind == K_ALLTOALL ? "alltoall" : "alltoallv";
        c->init = kind == K_ALLTOALL ? i_alltoall : i_alltoallv;
        c->fill = fill_per_dest;
        c->check = k_alltoall;
        for (int k = 0; k < P; k++) {
            c->sc[k] = pair(c, v, ME, k);
            c->rc[k] = pair(c, v, k, ME);
        }
        c->slen = place(c->sc, c->sd, v);
        c->rlen = place(c->rc, c->rd, v);
        break;
    case K_RSB: case K_RS:
        c->name = kind == K_RSB ? "reduce_scatter_block" : "reduce_scatter";
        c->init = kind == K_RSB ? i_rsb : i_rs;
        c->fill = fill_per_dest;
        c->check = k_rs;
        /* the input is packed: no gaps (counts only, as MPI) */
        for (int k = 0; k < P; k++)
            c->sc[k] = blk(c, v, k);
        c->slen = place(c->sc, c->sd, 0);
        c->rlen = c->sc[ME];
        break;
    }
    c->s = malloc((c->slen + 1) * sizeof *c->s);
    c->r = malloc((c->rlen + 1) * sizeof *c->r);
}

static void pc_free(pc_t *c)
{
    free(c->s), free(c->r), free(c->sc), free(c->sd), free(c->rc), free(c->rd);
}

/* complete an active request one of three ways; the handle must survive */
static void complete(pc_t *c, vc_request_t *q, int how)
{
    vc_request_t before = *q;
    vc_status_t st;
    if (how == 0) {
        OK(vc_wait(q, &st));
    } else if (how == 1) {
        int flag = 0;
        while (!flag)
            OK(vc_test(q, &flag, &st));
    } else {
        OK(vc_waitall(1, q, &st));
    }
    if (*q != before || *q == VC_REQUEST_NULL)
        FAIL("%s: completing a persistent request changed its handle", c->name);
    if (st.error != VC_SUCCESS)
        FAIL("%s: status error %d", c->name, st.error);
}

/* a regular collective in between, checked */
static void regular(int it)
{
    uint32_t x = val(ME, -1, it, 0), y = 0, z = 0;
    OK(vc_allreduce(&x, &y, 1, U32, VC_SUM, VC_COMM_WORLD));
    if (y != sum_over(0, P, -1, it, 0))
        FAIL("blocking allreduce between starts: %u", (unsigned)y);
    vc_request_t q;
    OK(vc_iallreduce(&x, &z, 1, U32, VC_SUM, VC_COMM_WORLD, &q));
    OK(vc_wait(&q, VC_STATUS_IGNORE));
    if (z != y || q != VC_REQUEST_NULL)
        FAIL("non-blocking allreduce between starts: %u", (unsigned)z);
}

/* ---- every collective, started NSTARTS times ---- */
static void test_each(size_t n)
{
    for (int k = 0; k < NK; k++) {
        pc_t c;
        pc_setup(&c, k, n);
        vc_request_t q = VC_REQUEST_NULL;
        OK(c.init(&c, &q));
        if (q == VC_REQUEST_NULL) {
            FAIL("%s_init gave no request", c.name);
            pc_free(&c);
            continue;
        }
        /* inactive: waits and tests return at once with the empty status */
        vc_status_t st = {7, 7, 7, 7};
        int flag = 0;
        OK(vc_wait(&q, &st));
        if (q == VC_REQUEST_NULL || st.source != VC_ANY_SOURCE || st.tag != VC_ANY_TAG ||
            st.bytes != 0)
            FAIL("%s: waiting on an inactive request", c.name);
        OK(vc_test(&q, &flag, VC_STATUS_IGNORE));
        if (!flag)
            FAIL("%s: testing an inactive request gave flag 0", c.name);
        for (int it = 0; it < NSTARTS; it++) {
            c.fill(&c, it);
            OK(vc_start(&q));
            complete(&c, &q, it % 3);
            c.check(&c, it);
            if (it == 2)
                regular(it);
        }
        OK(vc_request_free(&q));
        if (q != VC_REQUEST_NULL)
            FAIL("%s: vc_request_free left the handle", c.name);
        pc_free(&c);
    }
}

/* ---- two requests started and completed in different orders by parity ----
 * (with a blocking and a non-blocking collective between the two starts);
 * returns the segment allreduces the loop ran (the library's counter) */
static uint64_t two_orders(int ka, size_t na, int kb, size_t nb)
{
    pc_t a, b;
    pc_setup(&a, ka, na);
    pc_setup(&b, kb, nb);
    vc_request_t qa, qb;
    OK(a.init(&a, &qa));
    OK(b.init(&b, &qb));
    uint64_t c0 = coll_shm_calls(VC_COMM_WORLD, COLL_ALLREDUCE);
    int odd = ME & 1;
    for (int it = 0; it < NSTARTS; it++) {
        a.fill(&a, it);
        b.fill(&b, it);
        OK(vc_start(odd ? &qb : &qa));
        regular(it);        /* a blocking collective with one request in flight */
        OK(vc_start(odd ? &qa : &qb));
        complete(odd ? &a : &b, odd ? &qa : &qb, it % 3);
        complete(odd ? &b : &a, odd ? &qb : &qa, (it + 1) % 3);
        a.check(&a, it);
        b.check(&b, it);
    }
    uint64_t segs = coll_shm_calls(VC_COMM_WORLD, COLL_ALLREDUCE) - c0;
    OK(vc_request_free(&qa));
    OK(vc_request_free(&qb));
    pc_free(&a);
    pc_free(&b);
    return segs;
}

static void test_orders(void)
{
    two_orders(K_ALLREDUCE, 17, K_ALLTOALLV, 5);
}

/* ---- allreduce forced through segments: each request its own ----
 * Two large ones (several windows each, so each segment's rings wrap
 * within a start) in opposite orders on even and odd ranks, with a
 * blocking allreduce between the starts that itself runs through the
 * communicator's segment: a start must never wait inside vc_start, and
 * the three must not share counters. Every start counts as a segment
 * call, and the answers are exact. */
static void test_seg(void)
{
    if (P < 2 || !mp_forced_on_one_node("VCOLL_ALLREDUCE_ALG", "shm"))
        return;
    uint64_t got = two_orders(K_ALLREDUCE, 300000, K_ALLREDUCE, 70001);
    /* two starts and regular()'s blocking allreduce per round; under a
       VCOLL_SHM_COLL_MAX cap the requests may get no segment: then they
       run on messages, checked all the same, and only the count differs */
    if (got != 3 * NSTARTS && !getenv("VCOLL_SHM_COLL_MAX"))
        FAIL("persistent allreduce forced to shm: %llu segment calls, expected %d",
             (unsigned long long)got, 3 * NSTARTS);
}

/* ---- the flag slot sets come back ----
 * A small allreduce that a blocking call runs through the flag slots gets
 * one of the world's slot sets while it lives. Two waves of more requests
 * than there are sets (made, started with changing values, checked,
 * freed): the second wave must get as many sets as the first, and a set
 * freed between two live requests serves the next one. Every start is
 * checked, so a line of an old request taken for a new one shows. */
enum { WAVE = 12 };

static int wave(pc_t *c, vc_request_t *q, int n, int salt)
{
    int sets = 0;
    for (int i = 0; i < n; i++) {
        pc_setup(&c[i], K_ALLREDUCE, 2);
        OK(c[i].init(&c[i], &q[i]));
        sets += coll_exec_flags_set(q[i]) != 0;
    }
    for (int it = 0; it < 3; it++)
        for (int i = 0; i < n; i++) {
            c[i].fill(&c[i], salt + it + 7 * i);
            OK(vc_start(&q[i]));
            complete(&c[i], &q[i], (it + i) % 3);
            c[i].check(&c[i], salt + it + 7 * i);
        }
    return sets;
}

static void test_sets(void)
{
    pc_t c[WAVE];
    vc_request_t q[WAVE];
    const char *f = getenv("VCOLL_ALLREDUCE_ALG");
    int want = P > 1 && (!f || !strcmp(f, "flags")) && mp_on_one_node();
    int s1 = wave(c, q, WAVE, 0);
    for (int i = 0; i < WAVE; i++) {
        OK(vc_request_free(&q[i]));
        pc_free(&c[i]);
    }
    int s2 = wave(c, q, WAVE, 100);
    if (want && (s1 == 0 || s2 != s1))
        FAIL("flag slot sets: %d of %d requests had one, then %d after all were freed", s1,
             WAVE, s2);
    /* free one that has a set while the others live: the next one takes it */
    int k = 0;
    while (k < WAVE && !coll_exec_flags_set(q[k]))
        k++;
    if (k < WAVE) {
        int had = coll_exec_flags_set(q[k]);
        OK(vc_request_free(&q[k]));
        pc_free(&c[k]);
        wave(&c[k], &q[k], 1, 200);
        if (coll_exec_flags_set(q[k]) != had)
            FAIL("flag slot set %d freed, the next request got %d", had,
                 coll_exec_flags_set(q[k]));
    }
    for (int i = 0; i < WAVE; i++) {
        OK(vc_request_free(&q[i]));
        pc_free(&c[i]);
    }
}

/* ---- vc_startall / vc_waitall, the array in another order on odd ranks ---- */
static void test_startall(void)
{
    enum { N = 4 };
    static const int kinds[N] = {K_ALLREDUCE, K_ALLGATHER, K_ALLTOALL, K_BARRIER};
    pc_t c[N];
    vc_request_t q[N], arr[N];
    for (int i = 0; i < N; i++) {
        pc_setup(&c[i], kinds[i], 3 + (size_t)i);
        OK(c[i].init(&c[i], &q[i]));
    }
    for (int it = 0; it < NSTARTS; it++) {
        for (int i = 0; i < N; i++) {
            c[i].fill(&c[i], it);
            arr[i] = q[ME & 1 ? N - 1 - i : i];
        }
        OK(vc_startall(N, arr));
        vc_status_t st[N];
        OK(vc_waitall(N, arr, st));
        for (int i = 0; i < N; i++) {
            c[i].check(&c[i], it);
            if (arr[i] != q[ME & 1 ? N - 1 - i : i])
                FAIL("vc_waitall changed a persistent handle");
        }
    }
    for (int i = 0; i < N; i++) {
        OK(vc_request_free(&q[i]));
        pc_free(&c[i]);
    }
}

/* ---- the any / all forms over arrays with inactive and NULL entries ---- */
static void test_any(void)
{
    pc_t a, b;
    pc_setup(&a, K_ALLREDUCE, 9);
    pc_setup(&b, K_BCAST, 9);
    vc_request_t arr[3] = {VC_REQUEST_NULL, VC_REQUEST_NULL, VC_REQUEST_NULL};
    OK(a.init(&a, &arr[1]));          /* stays inactive */
    OK(b.init(&b, &arr[2]));
    int index = -5, flag = 0;
    /* nothing active: done at once, no index */
    OK(vc_testany(3, arr, &index, &flag, VC_STATUS_IGNORE));
    if (!flag || index != VC_UNDEFINED)
        FAIL("testany over NULL and inactive: flag %d index %d", flag, index);
    OK(vc_waitany(3, arr, &index, VC_STATUS_IGNORE));
    if (index != VC_UNDEFINED)
        FAIL("waitany over NULL and inactive: index %d", index);
    OK(vc_testall(3, arr, &flag, NULL));
    if (!flag)
        FAIL("testall over NULL and inactive: flag 0");
    for (int it = 0; it < 3; it++) {
        b.fill(&b, it);
        OK(vc_start(&arr[2]));
        flag = 0;
        while (!flag)
            OK(vc_testany(3, arr, &index, &flag, VC_STATUS_IGNORE));
        if (index != 2)
            FAIL("testany: index %d, expected 2 (the only active one)", index);
        b.check(&b, it);
        if (arr[2] == VC_REQUEST_NULL || arr[1] == VC_REQUEST_NULL)
            FAIL("testany freed a persistent request");
        b.fill(&b, it + 10);
        OK(vc_start(&arr[2]));
        OK(vc_waitany(3, arr, &index, VC_STATUS_IGNORE));
        if (index != 2)
            FAIL("waitany: index %d, expected 2", index);
        b.check(&b, it + 10);
    }
    OK(vc_request_free(&arr[1]));
    OK(vc_request_free(&arr[2]));
    pc_free(&a);
    pc_free(&b);
}

/* ---- local errors (every rank makes the same ones, so none hangs) ---- */
static void test_errors(void)
{
    pc_t a, b;
    pc_setup(&a, K_ALLREDUCE, 4);
    pc_setup(&b, K_ALLGATHER, 4);
    vc_request_t qa, qb, nb, nul = VC_REQUEST_NULL;
    /* init checks its arguments as the other forms do */
    EXPECT_RC(vc_allreduce_init(a.s, a.r, 4, U32, VC_SUM, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_bcast_init(a.r, 4, U32, P, VC_COMM_WORLD, &qa), VC_ERR_RANK);
    EXPECT_RC(vc_allreduce_init(NULL, a.r, 4, U32, VC_SUM, VC_COMM_WORLD, &qa), VC_ERR_BUFFER);
    EXPECT_RC(vc_barrier_init(VC_COMM_NULL, &qa), VC_ERR_COMM);
    OK(a.init(&a, &qa));
    OK(b.init(&b, &qb));
    a.fill(&a, 0);
    b.fill(&b, 0);
    OK(vc_start(&qa));
    EXPECT_RC(vc_start(&qa), VC_ERR_REQUEST);          /* already active */
    EXPECT_RC(vc_request_free(&qa), VC_ERR_REQUEST);   /* active */
    vc_request_t two[2] = {qb, qa};
    EXPECT_RC(vc_startall(2, two), VC_ERR_REQUEST);    /* one active: none started */
    OK(vc_wait(&qa, VC_STATUS_IGNORE));
    a.check(&a, 0);
    OK(vc_start(&qb));          /* fails if vc_startall had started it */
    OK(vc_wait(&qb, VC_STATUS_IGNORE));
    b.check(&b, 0);
    /* non-persistent requests are not vc_start's or vc_request_free's */
    OK(vc_ibarrier(VC_COMM_WORLD, &nb));
    EXPECT_RC(vc_request_free(&nb), VC_ERR_REQUEST);
    EXPECT_RC(vc_start(&nb), VC_ERR_REQUEST);
    OK(vc_wait(&nb, VC_STATUS_IGNORE));
    EXPECT_RC(vc_request_free(&nul), VC_ERR_REQUEST);
    EXPECT_RC(vc_start(&nul), VC_ERR_REQUEST);
    EXPECT_RC(vc_start(NULL), VC_ERR_ARG);
    OK(vc_request_free(&qa));
    EXPECT_RC(vc_request_free(&qa), VC_ERR_REQUEST);   /* now NULL */
    /* qb is left allocated: vc_finalize releases it. Its buffers may go
       now: an inactive request touches them only when started. */
    pc_free(&a);
    pc_free(&b);
}

/* ---- a split communicator: its own persistent tag space ---- */
static void test_split(void)
{
    vc_comm_t half;
    OK(vc_comm_split(VC_COMM_WORLD, ME & 1, ME, &half));
    uint32_t x[3], y[3];
    vc_request_t qh, qw;
    OK(vc_allreduce_init(x, y, 3, U32, VC_SUM, half, &qh));
    uint32_t wx = 0, wy = 0;
    OK(vc_allreduce_init(&wx, &wy, 1, U32, VC_SUM, VC_COMM_WORLD, &qw));
    for (int it = 0; it < NSTARTS; it++) {
        for (int i = 0; i < 3; i++)
            x[i] = val(ME, -1, it, (size_t)i);
        wx = (uint32_t)(ME + it);
        int flip = (it + ME / 2) & 1;      /* differs within each half */
        OK(vc_start(flip ? &qw : &qh));
        OK(vc_start(flip ? &qh : &qw));
        OK(vc_wait(&qh, VC_STATUS_IGNORE));
        OK(vc_wait(&qw, VC_STATUS_IGNORE));
        for (int i = 0; i < 3; i++) {
            uint32_t want = 0;
            for (int k = ME & 1; k < P; k += 2)
                want += val(k, -1, it, (size_t)i);
            if (y[i] != want)
                FAIL("split allreduce start %d: %u, expected %u", it, (unsigned)y[i],
                     (unsigned)want);
        }
        if (wy != (uint32_t)(P * (P - 1) / 2 + P * it))
            FAIL("world allreduce beside the split one: %u", (unsigned)wy);
    }
    OK(vc_request_free(&qh));
    OK(vc_request_free(&qw));
    OK(vc_comm_free(&half));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    test_each(1);
    test_each(7);
    test_each(3000);      /* past the eager limit: rendezvous messages */
    test_sets();
    test_orders();
    test_seg();
    test_startall();
    test_any();
    test_split();
    test_errors();
    return mp_finish("mp_persistent");
}
