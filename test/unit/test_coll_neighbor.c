/*
 * test_coll_neighbor.c -- the neighborhood collectives' schedules without a
 * network, and the graphs they run on.
 *
 * Every rank's schedule runs in the in-process simulator (sim.c: strict
 * rendezvous matching, messages between a pair matched in posting order,
 * bounds, overlap, deadlock and SBUF-untouched checks). The graphs are
 * random multigraphs (self edges, repeated edges, shuffled source lists,
 * empty neighbourhoods) and Cartesian grids of 1..3 dimensions, periodic or
 * not, with dimensions of 1 and 2 among them (both neighbours one rank, or
 * oneself). The expected receive buffers come from plain loops written
 * from MPI's rules alone: on a graph the k-th listing of b by a pairs with
 * the k-th listing of a by b; on a grid block 2d comes from the -1
 * neighbour's block 2d+1 and block 2d+1 from the +1 neighbour's block 2d,
 * with the neighbours computed here from coordinates; a VC_PROC_NULL block
 * keeps its fill bytes, as do the gaps of the v forms' layouts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CUnit/Basic.h>

#include "vcoll.h"
#include "coll/sched.h"
#include "coll/graph.h"
#include "sim.h"
#include "coll_talg.h"

#define FILL 0xA5
#define MAXDEG 24

static int ncases, nfail;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng = mix(rng + 0x9e3779b97f4a7c15ULL);
    return n ? (unsigned)(rng % n) : 0;
}

/* element e of the block rank a sends on its edge i (allgather: i = 0) */
static uint32_t val(int a, int i, size_t e)
{
    return (uint32_t)mix((uint64_t)a * 1000003u + (uint64_t)i * 7919u + e + 1);
}

/* One test graph: every rank's lists as vc_comm_create_graph or the grid
   would give them. */
typedef struct {
    int p, cart, ndims, dims[3], periods[3];
    int indeg[MAXP], outdeg[MAXP];
    int src[MAXP][MAXDEG], dst[MAXP][MAXDEG];
} tgraph_t;

static void random_graph(tgraph_t *T, int p, int maxout)
{
    memset(T, 0, sizeof *T);
    T->p = p;
    for (int a = 0; a < p; a++) {
        T->outdeg[a] = (int)rnd((unsigned)maxout + 1);
        for (int i = 0; i < T->outdeg[a]; i++) {
            /* few distinct targets make repeated edges common */
            int b = rnd(3) ? (int)rnd((unsigned)p) : (a + 1) % p;
            if (T->indeg[b] == MAXDEG) {
                T->outdeg[a] = i;
                break;
            }
            T->dst[a][i] = b;
            T->src[b][T->indeg[b]++] = a;
        }
    }
    for (int b = 0; b < p; b++)     /* any source order is legal */
        for (int j = T->indeg[b] - 1; j > 0; j--) {
            int k = (int)rnd((unsigned)j + 1), t = T->src[b][j];
            T->src[b][j] = T->src[b][k];
            T->src[b][k] = t;
        }
}

/* coordinates, last dimension fastest; the -1 (side 0) or +1 neighbour */
static int grid_nb(const tgraph_t *T, int r, int d, int side)
{
    int c[3], stride[3], s = 1;
    for (int k = T->ndims - 1; k >= 0; k--) {
        stride[k] = s;
        c[k] = (r / s) % T->dims[k];
        s *= T->dims[k];
    }
    int n = c[d] + (side ? 1 : -1);
    if (n < 0 || n >= T->dims[d]) {
        if (!T->periods[d])
            return VC_PROC_NULL;
        n = (n + T->dims[d]) % T->dims[d];
    }
    return r + (n - c[d]) * stride[d];
}

static void grid(tgraph_t *T, int p, int ndims, const int *dims, const int *periods)
{
    memset(T, 0, sizeof *T);
    T->p = p;
    T->cart = 1;
    T->ndims = ndims;
    for (int d = 0; d < ndims; d++) {
        T->dims[d] = dims[d];
        T->periods[d] = periods[d];
    }
    for (int r = 0; r < p; r++) {
        T->indeg[r] = T->outdeg[r] = 2 * ndims;
        for (int d = 0; d < ndims; d++)
            for (int side = 0; side < 2; side++)
                T->src[r][2 * d + side] = T->dst[r][2 * d + side] = grid_nb(T, r, d, side);
    }
}

/* Which send block of which rank lands in b's receive block j:
   *from = VC_PROC_NULL when nothing does. */
static void paired(const tgraph_t *T, int b, int j, int *from, int *blk)
{
    int a = T->src[b][j];
    *from = a;
    *blk = -1;
    if (a == VC_PROC_NULL)
        return;
    if (T->cart) {      /* MPI-4: 2d <- the -1 one's 2d+1, 2d+1 <- the +1 one's 2d */
        *blk = j ^ 1;
        return;
    }
    int m = 0;          /* this is the m-th listing of a in b's sources */
    for (int k = 0; k < j; k++)
        m += T->src[b][k] == a;
    for (int i = 0; i < T->outdeg[a]; i++)
        if (T->dst[a][i] == b && m-- == 0) {
            *blk = i;
            return;
        }
}

/* counts of the v forms: per edge for alltoallv (the a's i-th block),
   per sender for allgatherv */
static size_t vcnt(int kind, int a, int i, size_t count, uint64_t salt)
{
    if (!count)
        return 0;
    uint64_t h = mix((uint64_t)a * 131u + (kind == COLL_NEIGHBOR_ALLGATHERV ? 0 : i) + salt);
    return h % 5 == 0 ? 0 : (size_t)(h % (2 * count + 1));
}

/* v layout: n blocks of cnt[] placed in a shuffled order with gaps; the
   total length in elements */
static size_t vplace(const size_t *cnt, int n, size_t *dsp)
{
    int ord[MAXDEG];
    size_t at = rnd(3);
    for (int i = 0; i < n; i++)
        ord[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int k = (int)rnd((unsigned)i + 1), t = ord[i];
        ord[i] = ord[k];
        ord[k] = t;
    }
    for (int i = 0; i < n; i++) {
        dsp[ord[i]] = at;
        at += cnt[ord[i]] + rnd(3);
    }
    return at + 1;
}

static void report(int kind, const tgraph_t *T, size_t count, const char *what)
{
    printf("\n  FAIL %s on %s p=%d count=%zu: %s", coll_kind_name(kind),
           T->cart ? "grid" : "graph", T->p, count, what);
}

static int run_case(int kind, const tgraph_t *T, size_t count)
{
    static sim_t S;
    static size_t sc[MAXP][MAXDEG], sd[MAXP][MAXDEG], rc[MAXP][MAXDEG], rd[MAXP][MAXDEG];
    static coll_graph_t *G[MAXP];
    static uint32_t *want[MAXP];
    static size_t rlen[MAXP];
    uint64_t salt = rng;
    int p = T->p, bad = 0;

    memset(&S, 0, sizeof S);
    S.p = p;
    for (int r = 0; r < p; r++) {
        G[r] = NULL;
        want[r] = NULL;
    }
    for (int r = 0; r < p && !bad; r++) {
        sim_rank_t *R = &S.r[r];
        int in = T->indeg[r], out = T->outdeg[r];
        size_t slen, my = vcnt(kind, r, 0, count, salt);
        /* the library's own graph for this rank: a grid from its maker, so
           its neighbour lists are checked against ours too */
        G[r] = T->cart ? coll_graph_cart(T->ndims, T->dims, T->periods, r)
                       : coll_graph_new(in, T->src[r], out, T->dst[r]);
        if (!G[r] || G[r]->indeg != in || G[r]->outdeg != out ||
            memcmp(G[r]->src, T->src[r], (size_t)in * sizeof(int)) ||
            memcmp(G[r]->dst, T->dst[r], (size_t)out * sizeof(int))) {
            report(kind, T, count, "the graph's neighbour lists are not MPI's");
            bad = 1;
            break;
        }
        for (int i = 0; i < out; i++) {
            sc[r][i] = kind == COLL_NEIGHBOR_ALLTOALLV ? vcnt(kind, r, i, count, salt) : count;
            if (kind == COLL_NEIGHBOR_ALLGATHERV)
                sc[r][i] = my;
        }
        for (int j = 0; j < in; j++) {
            int a, blk;
            paired(T, r, j, &a, &blk);
            rc[r][j] = a == VC_PROC_NULL ? 1 + rnd(3)   /* anything: nothing comes */
                       : kind == COLL_NEIGHBOR_ALLTOALLV ? vcnt(kind, a, blk, count, salt)
                       : kind == COLL_NEIGHBOR_ALLGATHERV ? vcnt(kind, a, 0, count, salt)
                                                          : count;
        }
        int vec = coll_kind_vector(kind);
        rlen[r] = vec ? vplace(rc[r], in, rd[r]) : (size_t)in * count;
        if (kind == COLL_NEIGHBOR_ALLTOALLV)
            slen = vplace(sc[r], out, sd[r]);
        else if (kind == COLL_NEIGHBOR_ALLTOALL)
            slen = (size_t)out * count;
        else
            slen = kind == COLL_NEIGHBOR_ALLGATHERV ? my : count;

        coll_args_t a;
        coll_args_set(&a, kind, r, p, 0, kind == COLL_NEIGHBOR_ALLGATHERV ? my : count,
                      VC_UINT32, VC_SUM, 0);
        a.graph = G[r];
        if (kind == COLL_NEIGHBOR_ALLGATHERV)
            coll_args_vec(&a, kind, NULL, NULL, rc[r], rd[r]);
        else if (kind == COLL_NEIGHBOR_ALLTOALLV)
            coll_args_vec(&a, kind, sc[r], sd[r], rc[r], rd[r]);
        sched_init(&R->s, &a);
        if (talg(kind, 1)->build(&a, &R->s) != VC_SUCCESS) {
            report(kind, T, count, "builder failed");
            bad = 1;
            break;
        }
        R->know = 1ULL << r;
        R->len[COLL_SBUF] = slen * 4;
        R->len[COLL_RBUF] = rlen[r] * 4;
        R->len[COLL_TMP] = R->s.tmp_bytes;
        for (int b = 0; b < COLL_NBUF; b++) {
            R->buf[b] = sim_buf(R->len[b] + 1);
            memset(R->buf[b], FILL, R->len[b] + 1);
        }
        uint32_t *sb = (uint32_t *)R->buf[COLL_SBUF];
        if (kind == COLL_NEIGHBOR_ALLGATHER || kind == COLL_NEIGHBOR_ALLGATHERV)
            for (size_t e = 0; e < slen; e++)
                sb[e] = val(r, 0, e);
        else
            for (int i = 0; i < out; i++)
                for (size_t e = 0; e < sc[r][i]; e++)
                    sb[(kind == COLL_NEIGHBOR_ALLTOALL ? (size_t)i * count : sd[r][i]) + e] =
                        val(r, i, e);
    }
    /* the expected receive buffers, once every rank's layout is known */
    for (int r = 0; r < p && !bad; r++) {
        want[r] = malloc(rlen[r] * 4 + 1);
        memset(want[r], FILL, rlen[r] * 4 + 1);
        for (int j = 0; j < T->indeg[r]; j++) {
            int a, blk;
            paired(T, r, j, &a, &blk);
            if (a == VC_PROC_NULL)
                continue;
            if (blk < 0) {
                report(kind, T, count, "test graph does not pair (test bug)");
                bad = 1;
                break;
            }
            int gather = kind == COLL_NEIGHBOR_ALLGATHER || kind == COLL_NEIGHBOR_ALLGATHERV;
            size_t at = coll_kind_vector(kind) ? rd[r][j] : (size_t)j * count;
            for (size_t e = 0; e < rc[r][j]; e++)
                want[r][at + e] = val(a, gather ? 0 : blk, e);
        }
    }
    if (!bad && sim_run(&S)) {
        report(kind, T, count, failmsg);
        bad = 1;
    }
    for (int r = 0; r < p && !bad; r++) {
        sim_rank_t *R = &S.r[r];
        uint64_t need = 0;
        for (int j = 0; j < T->indeg[r]; j++)
            if (T->src[r][j] != VC_PROC_NULL && rc[r][j])
                need |= 1ULL << T->src[r][j];
        if ((R->know & need) != need) {
            snprintf(failmsg, sizeof failmsg, "rank %d did not hear from a source", r);
            report(kind, T, count, failmsg);
            bad = 1;
        } else if (memcmp(R->buf[COLL_RBUF], want[r], rlen[r] * 4)) {
            size_t i = 0;
            while (R->buf[COLL_RBUF][i] == ((unsigned char *)want[r])[i])
                i++;
            snprintf(failmsg, sizeof failmsg, "rank %d: receive buffer differs at byte %zu",
                     r, i);
            report(kind, T, count, failmsg);
            bad = 1;
        }
        for (int b = 0; b < COLL_NBUF && !bad; b++)
            if (R->buf[b][R->len[b]] != FILL) {
                report(kind, T, count, "wrote past a buffer end");
                bad = 1;
            }
    }
    for (int r = 0; r < p; r++) {
        free(want[r]);
        coll_graph_free(G[r]);
    }
    sim_free(&S);
    return bad;
}

static const int kinds[] = {COLL_NEIGHBOR_ALLGATHER, COLL_NEIGHBOR_ALLGATHERV,
                            COLL_NEIGHBOR_ALLTOALL, COLL_NEIGHBOR_ALLTOALLV};
static const size_t counts[] = {0, 1, 3, 17, 300};

static void check_all(const tgraph_t *T)
{
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            ncases++;
            if (run_case(kinds[k], T, counts[c]))
                nfail++;
        }
}

static void test_graphs(void)
{
    static tgraph_t T;
    rng = 42;
    for (int p = 1; p <= MAXP; p++)
        for (int rep = 0; rep < (p <= 16 ? 4 : 1); rep++) {
            random_graph(&T, p, rep == 0 ? 1 : rep == 1 ? 4 : 8);
            check_all(&T);
        }
}

/* every factorisation of p into ndims factors, each periodicity pattern */
static void grids(int p, int ndims, int d, int left, int *dims, tgraph_t *T)
{
    if (d == ndims - 1) {
        dims[d] = left;
        for (int per = 0; per < (1 << ndims); per++) {
            int periods[3] = {per & 1, per >> 1 & 1, per >> 2 & 1};
            grid(T, p, ndims, dims, periods);
            check_all(T);
        }
        return;
    }
    for (int f = 1; f <= left; f++)
        if (left % f == 0) {
            dims[d] = f;
            grids(p, ndims, d + 1, left / f, dims, T);
        }
}

static void test_grids(void)
{
    static tgraph_t T;
    int dims[3];
    rng = 7;
    static const int ps[] = {1, 2, 3, 4, 6, 8, 9, 12, 16, 64};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (int nd = 1; nd <= (ps[i] <= 16 ? 3 : 2); nd++)
            grids(ps[i], nd, 0, ps[i], dims, &T);
    /* no dimensions at all: one rank, no neighbours */
    grid(&T, 1, 0, dims, dims);
    check_all(&T);
}

/* the pairing rule that differs from a graph's: on a periodic dimension of
   2 both neighbours are one rank, and MPI pairs my block 2d with its block
   2d+1; a graph with the same lists pairs block k with block k */
static void test_grid_pairing_is_not_graph(void)
{
    static tgraph_t T;
    int dims[1] = {2}, periods[1] = {1};
    grid(&T, 2, 1, dims, periods);
    CU_ASSERT_EQUAL(T.src[0][0], 1);
    CU_ASSERT_EQUAL(T.src[0][1], 1);
    int a, blk;
    paired(&T, 0, 0, &a, &blk);
    CU_ASSERT_EQUAL(blk, 1);
    T.cart = 0;
    paired(&T, 0, 0, &a, &blk);
    CU_ASSERT_EQUAL(blk, 0);
    /* the library's schedule for the grid follows the grid rule */
    T.cart = 1;
    ncases++;
    if (run_case(COLL_NEIGHBOR_ALLTOALL, &T, 5))
        nfail++;
}

static void test_no_graph(void)
{
    coll_args_t a;
    coll_sched_t s;
    coll_args_set(&a, COLL_NEIGHBOR_ALLTOALL, 0, 2, 0, 1, VC_UINT32, VC_SUM, 0);
    sched_init(&s, &a);
    CU_ASSERT_EQUAL(coll_neighbor_alltoall_direct(&a, &s), VC_ERR_COMM);
    sched_free(&s);
}

static void test_summary(void)
{
    sim_summary(ncases, nfail);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("coll_neighbor_schedules", NULL, NULL);
    CU_add_test(s, "random multigraphs, p 1..64, four collectives", test_graphs);
    CU_add_test(s, "grids of 0..3 dimensions, periodic or not", test_grids);
    CU_add_test(s, "grid pairing differs from a graph's", test_grid_pairing_is_not_graph);
    CU_add_test(s, "no graph: VC_ERR_COMM", test_no_graph);
    CU_add_test(s, "summary", test_summary);
    return sim_cunit_main();
}
