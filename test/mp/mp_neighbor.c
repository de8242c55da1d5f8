/*
 * mp_neighbor.c -- neighborhood collectives across processes, any np.
 *
 * Graphs: a Cartesian grid (2-D when np factors, periodic, then the same
 * grid non-periodic: VC_PROC_NULL edges), a 1-D periodic ring (np 2: both
 * neighbours one rank; np 1: oneself) and a random multigraph (self
 * edges, repeated edges, shuffled source lists) that every rank draws from
 * the same seed, so each knows the whole graph and computes what it must
 * receive with plain loops. On each: neighbor allgather(v) and alltoall(v)
 * in the blocking, non-blocking and persistent forms (several starts with
 * the contents changed between them), with counts from one element to a
 * rendezvous-sized block. Then the graph queries, a dup that keeps the
 * graph and a split that drops it, and the errors: lists that do not match
 * (VC_ERR_ARG everywhere), a neighbour out of range (VC_ERR_RANK on that
 * rank, VC_ERR_ARG on the others), dimensions that do not fit, in place,
 * and a neighbourhood call on a communicator without a graph
 * (VC_ERR_COMM). Run under mpirun; exit 0 on success.
 *
 * Also the blocking allgather and alltoall forced to "shm" (the
 * communicator's segment, neighbor_shm.c), more calls in a row than the
 * segment has slots per member, with a bcast through the same segment
 * between them. With MP_NBR_SHM=1 (one node, shared memory) each of those
 * calls must have gone through the segment exactly when the largest send
 * buffer fits one slot (the library's counter says so), so the check
 * cannot pass on the per-edge schedule.
 */
#include <stdint.h>
#include "mp_util.h"
#include "coll/coll.h"

#define MAXD 64
#define NSTARTS 3
#define UNTOUCHED 0xdeadbeefu

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return n ? (unsigned)((rng >> 33) % n) : 0;
}

/* element e of the block src sends on its edge i at start it */
static uint32_t val(int src, int i, int it, size_t e)
{
    uint32_t h = (uint32_t)src * 2654435761u + (uint32_t)i * 40503u + (uint32_t)it * 97u +
                 (uint32_t)e * 7919u;
    return h ^ (h >> 13);
}

/* the whole graph (every rank's lists), as every rank draws it */
typedef struct {
    int cart, ndims, dims[2], periods[2];
    int in[MAXD], out[MAXD];
    int src[MAXD][MAXD], dst[MAXD][MAXD];
} graph_t;

static graph_t G;

static int grid_nb(int r, int d, int side)
{
    int c[2], stride[2], s = 1;
    for (int k = G.ndims - 1; k >= 0; k--) {
        stride[k] = s;
        c[k] = (r / s) % G.dims[k];
        s *= G.dims[k];
    }
    int n = c[d] + (side ? 1 : -1);
    if (n < 0 || n >= G.dims[d]) {
        if (!G.periods[d])
            return VC_PROC_NULL;
        n = (n + G.dims[d]) % G.dims[d];
    }
    return r + (n - c[d]) * stride[d];
}

static void make_grid(int ndims, int d0, int d1, int periodic)
{
    memset(&G, 0, sizeof G);
    G.cart = 1;
    G.ndims = ndims;
    G.dims[0] = d0;
    G.dims[1] = d1;
    G.periods[0] = G.periods[1] = periodic;
    for (int r = 0; r < mp_size; r++) {
        G.in[r] = G.out[r] = 2 * ndims;
        for (int d = 0; d < ndims; d++)
            for (int s = 0; s < 2; s++)
                G.src[r][2 * d + s] = G.dst[r][2 * d + s] = grid_nb(r, d, s);
    }
}

static void make_random(uint64_t seed)
{
    memset(&G, 0, sizeof G);
    rng = seed;
    for (int a = 0; a < mp_size; a++) {
        int n = (int)rnd(5);
        for (int i = 0; i < n; i++) {
            int b = rnd(3) ? (int)rnd((unsigned)mp_size) : (a + 1) % mp_size;
            if (G.in[b] == MAXD)
                break;
            G.dst[a][G.out[a]++] = b;
            G.src[b][G.in[b]++] = a;
        }
    }
    for (int b = 0; b < mp_size; b++)
        for (int j = G.in[b] - 1; j > 0; j--) {
            int k = (int)rnd((unsigned)j + 1), t = G.src[b][j];
            G.src[b][j] = G.src[b][k];
            G.src[b][k] = t;
        }
}

/* which block of which rank lands in my receive block j (-1: none) */
static int paired(int me, int j, int *from)
{
    int a = G.src[me][j], m = 0;
    *from = a;
    if (a == VC_PROC_NULL)
        return -1;
    if (G.cart)
        return j ^ 1;
    for (int k = 0; k < j; k++)
        m += G.src[me][k] == a;
    for (int i = 0; i < G.out[a]; i++)
        if (G.dst[a][i] == me && m-- == 0)
            return i;
    return -1;
}

enum { AG, AGV, A2A, A2AV, NK };
static const char *const kname[NK] = {"neighbor_allgather", "neighbor_allgatherv",
                                      "neighbor_alltoall", "neighbor_alltoallv"};
enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* v counts: per edge (alltoallv: a's i-th block) or per sender */
static size_t vcnt(int k, int a, int i, size_t n)
{
    uint32_t h = (uint32_t)a * 2246822519u + (uint32_t)(k == AGV ? 0 : i) * 3266489917u;
    h ^= h >> 15;
    return h % 4 == 0 ? 0 : 1 + h % n;
}

typedef struct {
    int k;
    size_t n;
    uint32_t *s, *r;
    size_t slen, rlen;
    size_t sc[MAXD], sd[MAXD], rc[MAXD], rd[MAXD];
} call_t;

static void setup(call_t *c, int k, size_t n)
{
    int me = mp_rank, in = G.in[me], out = G.out[me];
    memset(c, 0, sizeof *c);
    c->k = k;
    c->n = n;
    size_t at = 0;
    for (int j = 0; j < in; j++) {      /* receive blocks, reversed order + gaps */
        int a, blk = paired(me, in - 1 - j, &a);
        size_t cnt = k == AG || k == A2A ? n : a == VC_PROC_NULL ? 2 : vcnt(k, a, blk, n);
        c->rc[in - 1 - j] = cnt;
        c->rd[in - 1 - j] = at + 1;
        at += cnt + 1;
    }
    c->rlen = k == AG || k == A2A ? (size_t)in * n : at + 1;
    at = 0;
    for (int i = 0; i < out; i++) {
        c->sc[i] = k == A2AV ? vcnt(k, me, i, n) : k == AGV ? vcnt(k, me, 0, n) : n;
        c->sd[i] = at;
        at += k == A2AV ? c->sc[i] + 3 : 0;
    }
    c->slen = k == A2A ? (size_t)out * n : k == A2AV ? at : k == AGV ? vcnt(k, me, 0, n) : n;
    c->s = malloc((c->slen + 1) * sizeof *c->s);
    c->r = malloc((c->rlen + 1) * sizeof *c->r);
}

static void fill(call_t *c, int it)
{
    int me = mp_rank;
    for (size_t e = 0; e <= c->slen; e++)
        c->s[e] = UNTOUCHED;
    for (size_t e = 0; e <= c->rlen; e++)
        c->r[e] = UNTOUCHED;
    if (c->k == AG || c->k == AGV) {
        for (size_t e = 0; e < c->slen; e++)
            c->s[e] = val(me, 0, it, e);
        return;
    }
    for (int i = 0; i < G.out[me]; i++)
        for (size_t e = 0; e < c->sc[i]; e++)
            c->s[(c->k == A2A ? (size_t)i * c->n : c->sd[i]) + e] = val(me, i, it, e);
}

static void check(call_t *c, int it, const char *form)
{
    int me = mp_rank, bad = 0;
    uint32_t *want = malloc((c->rlen + 1) * sizeof *want);
    for (size_t e = 0; e <= c->rlen; e++)
        want[e] = UNTOUCHED;
    for (int j = 0; j < G.in[me]; j++) {
        int a, blk = paired(me, j, &a);
        if (a == VC_PROC_NULL)
            continue;
        size_t at = c->k == AG || c->k == A2A ? (size_t)j * c->n : c->rd[j];
        for (size_t e = 0; e < c->rc[j]; e++)
            want[at + e] = val(a, c->k == AG || c->k == AGV ? 0 : blk, it, e);
    }
    for (size_t e = 0; e <= c->rlen && !bad; e++)
        if (c->r[e] != want[e]) {
            FAIL("%s %s %s n=%zu start %d: element %zu is %#x, expected %#x", form,
                 kname[c->k], G.cart ? "grid" : "graph", c->n, it, e, (unsigned)c->r[e],
                 (unsigned)want[e]);
            bad = 1;
        }
    for (size_t e = 0; e <= c->slen && !bad; e++)
        if (c->k == AG && e == c->slen && c->s[e] != UNTOUCHED)
            FAIL("%s wrote past the send buffer", kname[c->k]);
    free(want);
}

static int run(call_t *c, vc_comm_t comm, int form, vc_request_t *req)
{
    vc_request_t *q = form == BLOCKING ? NULL : req;
    switch (c->k * 3 + form) {
    case AG * 3 + BLOCKING: return vc_neighbor_allgather(c->s, c->r, c->n, VC_UINT32, comm);
    case AG * 3 + NONBLOCKING:
        return vc_ineighbor_allgather(c->s, c->r, c->n, VC_UINT32, comm, q);
    case AG * 3 + PERSISTENT:
        return vc_neighbor_allgather_init(c->s, c->r, c->n, VC_UINT32, comm, q);
    case AGV * 3 + BLOCKING:
        return vc_neighbor_allgatherv(c->s, c->slen, c->r, c->rc, c->rd, VC_UINT32, comm);
    case AGV * 3 + NONBLOCKING:
        return vc_ineighbor_allgatherv(c->s, c->slen, c->r, c->rc, c->rd, VC_UINT32, comm, q);
    case AGV * 3 + PERSISTENT:
        return vc_neighbor_allgatherv_init(c->s, c->slen, c->r, c->rc, c->rd, VC_UINT32, comm,
                                           q);
    case A2A * 3 + BLOCKING: return vc_neighbor_alltoall(c->s, c->r, c->n, VC_UINT32, comm);
    case A2A * 3 + NONBLOCKING:
        return vc_ineighbor_alltoall(c->s, c->r, c->n, VC_UINT32, comm, q);
    case A2A * 3 + PERSISTENT:
        return vc_neighbor_alltoall_init(c->s, c->r, c->n, VC_UINT32, comm, q);
    case A2AV * 3 + BLOCKING:
        return vc_neighbor_alltoallv(c->s, c->sc, c->sd, c->r, c->rc, c->rd, VC_UINT32, comm);
    case A2AV * 3 + NONBLOCKING:
        return vc_ineighbor_alltoallv(c->s, c->sc, c->sd, c->r, c->rc, c->rd, VC_UINT32, comm,
                                      q);
    default:
        return vc_neighbor_alltoallv_init(c->s, c->sc, c->sd, c->r, c->rc, c->rd, VC_UINT32,
                                          comm, q);
    }
}

static int want_seg;    /* MP_NBR_SHM=1 */

/* bytes of one slot of a p-member segment and what a call needs of it
   (shm_seg.c, neighbor_shm.c: 64-byte header lines, then the data, over
   at most the 4 slots of a member's ring) */
static size_t seg_chunk(int p)
{
    size_t c = (4u << 20) / ((size_t)p * 4);
    c = c > (64u << 10) ? 64u << 10 : c < (4u << 10) ? 4u << 10 : c;
    return c / 64 * 64;
}

static int seg_fits(int k, size_t bytes)
{
    int maxout = 0;
    for (int r = 0; r < mp_size; r++)
        maxout = G.out[r] > maxout ? G.out[r] : maxout;
    size_t hdr = (16 + 8 * (size_t)maxout + 63) / 64 * 64;
    return mp_size > 1 &&
           hdr + (k == A2A ? (size_t)maxout * bytes : bytes) <= 4 * seg_chunk(mp_size);
}

/* k's blocking form forced to "shm": 6 calls (more than the 4 slots a
   member has) with a 100 KiB bcast (two chunks through the same segment)
   after each of the first three */
static void forced_shm(call_t *c, vc_comm_t comm)
{
    int kind = c->k == AG ? COLL_NEIGHBOR_ALLGATHER : COLL_NEIGHBOR_ALLTOALL;
    static uint8_t big[100 << 10];
    OK(vc_coll_set_alg(comm, kname[c->k], "shm"));
    uint64_t c0 = coll_shm_calls(comm, kind);
    for (int it = 10; it < 16; it++) {
        fill(c, it);
        OK(run(c, comm, BLOCKING, NULL));
        check(c, it, "blocking (shm)");
        if (it < 13) {
            for (size_t e = 0; e < sizeof big; e++)
                big[e] = (uint8_t)(mp_rank == 0 ? e * 7 + (size_t)it : 0);
            OK(vc_bcast(big, sizeof big, VC_BYTE, 0, comm));
            for (size_t e = 0; e < sizeof big; e++)
                if (big[e] != (uint8_t)(e * 7 + (size_t)it)) {
                    FAIL("bcast between neighbour calls: byte %zu is %u", e, big[e]);
                    break;
                }
        }
    }
    uint64_t ran = coll_shm_calls(comm, kind) - c0;
    uint64_t want = seg_fits(c->k, c->n * sizeof(uint32_t)) ? 6 : 0;
    if (want_seg && ran != want)
        FAIL("%s forced to shm, n=%zu: %llu calls through the segment, expected %llu",
             kname[c->k], c->n, (unsigned long long)ran, (unsigned long long)want);
    OK(vc_coll_set_alg(comm, kname[c->k], "auto"));
}

static void exercise(vc_comm_t comm)
{
    /* 5000: a multi-chunk message through the segment (alltoall) */
    static const size_t sizes[] = {1, 300, 5000, 20000};
    int in, out;
    OK(vc_neighbors_count(comm, &in, &out));
    if (in != G.in[mp_rank] || out != G.out[mp_rank])
        FAIL("vc_neighbors_count: %d %d, expected %d %d", in, out, G.in[mp_rank],
             G.out[mp_rank]);
    int s[MAXD], d[MAXD];
    OK(vc_neighbors(comm, MAXD, s, MAXD, d));
    for (int j = 0; j < in && j < MAXD; j++)
        if (s[j] != G.src[mp_rank][j])
            FAIL("vc_neighbors: source %d is %d, expected %d", j, s[j], G.src[mp_rank][j]);
    for (int i = 0; i < out && i < MAXD; i++)
        if (d[i] != G.dst[mp_rank][i])
            FAIL("vc_neighbors: destination %d is %d, expected %d", i, d[i], G.dst[mp_rank][i]);
    for (int k = 0; k < NK; k++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            call_t c;
            vc_request_t req;
            setup(&c, k, sizes[z]);
            fill(&c, 0);
            OK(run(&c, comm, BLOCKING, NULL));
            check(&c, 0, "blocking");
            fill(&c, 1);
            OK(run(&c, comm, NONBLOCKING, &req));
            OK(vc_wait(&req, VC_STATUS_IGNORE));
            check(&c, 1, "non-blocking");
            OK(run(&c, comm, PERSISTENT, &req));
            for (int it = 2; it < 2 + NSTARTS; it++) {
                fill(&c, it);
                OK(vc_start(&req));
                if (it % 2) {
                    int flag = 0;
                    while (!flag)
                        OK(vc_test(&req, &flag, VC_STATUS_IGNORE));
                } else {
                    OK(vc_wait(&req, VC_STATUS_IGNORE));
                }
                check(&c, it, "persistent");
            }
            OK(vc_request_free(&req));
            if (k == AG || k == A2A)
                forced_shm(&c, comm);
            free(c.s);
            free(c.r);
        }
}

static void grid_case(int ndims, int d0, int d1, int periodic)
{
    vc_comm_t cart;
    int dims[2] = {d0, d1}, periods[2] = {periodic, periodic};
    make_grid(ndims, d0, d1, periodic);
    OK(vc_comm_create_cart(VC_COMM_WORLD, ndims, dims, periods, &cart));
    exercise(cart);
    /* a duplicate keeps the grid, a split does not */
    vc_comm_t dup, split;
    OK(vc_comm_dup(cart, &dup));
    exercise(dup);
    OK(vc_comm_split(cart, 0, mp_rank, &split));
    int in, out;
    EXPECT_RC(vc_neighbors_count(split, &in, &out), VC_ERR_COMM);
    OK(vc_comm_free(&split));
    OK(vc_comm_free(&dup));
    OK(vc_comm_free(&cart));
}

static void graph_case(uint64_t seed)
{
    vc_comm_t g;
    make_random(seed);
    OK(vc_comm_create_graph(VC_COMM_WORLD, G.in[mp_rank], G.src[mp_rank], G.out[mp_rank],
                            G.dst[mp_rank], &g));
    exercise(g);
    OK(vc_comm_free(&g));
}

static void errors(void)
{
    int p = mp_size, me = mp_rank;
    vc_comm_t c = VC_COMM_NULL;
    uint32_t x[4] = {0};
    int ring_src = (me - 1 + p) % p, ring_dst = (me + 1) % p;

    /* lists that do not match: rank 0 sends one edge nobody receives */
    int extra[2] = {ring_dst, 0};
    EXPECT_RC(vc_comm_create_graph(VC_COMM_WORLD, 1, &ring_src, me == 0 ? 2 : 1, extra, &c),
              VC_ERR_ARG);
    if (c != VC_COMM_NULL)
        FAIL("a failed creation left a communicator");
    /* a neighbour out of range on the last rank only */
    int far = me == p - 1 ? p : ring_dst;
    EXPECT_RC(vc_comm_create_graph(VC_COMM_WORLD, 1, &ring_src, 1, &far, &c),
              me == p - 1 ? VC_ERR_RANK : VC_ERR_ARG);
    int neg = -1;
    EXPECT_RC(vc_comm_create_graph(VC_COMM_WORLD, me == 0 ? -1 : 0, &neg, 0, NULL, &c),
              VC_ERR_ARG);
    /* the grid must fit the communicator, the same on every rank */
    int dims[2] = {p + 1, 1}, per[2] = {1, 1};
    EXPECT_RC(vc_comm_create_cart(VC_COMM_WORLD, 2, dims, per, &c), VC_ERR_ARG);
    dims[0] = p;
    dims[1] = me == 0 && p > 1 ? 0 : 1;
    EXPECT_RC(vc_comm_create_cart(VC_COMM_WORLD, 2, dims, per, &c), p > 1 ? VC_ERR_ARG
                                                                          : VC_SUCCESS);
    if (p == 1)
        OK(vc_comm_free(&c));
    per[0] = me % 2;    /* periods differ between ranks */
    dims[1] = 1;
    EXPECT_RC(vc_comm_create_cart(VC_COMM_WORLD, 2, dims, per, &c), p > 1 ? VC_ERR_ARG
                                                                          : VC_SUCCESS);
    if (p == 1)
        OK(vc_comm_free(&c));
    /* no graph: VC_ERR_COMM; no in-place form */
    EXPECT_RC(vc_neighbor_alltoall(x, x + 2, 1, VC_UINT32, VC_COMM_WORLD), VC_ERR_COMM);
    int in, out;
    EXPECT_RC(vc_neighbors_count(VC_COMM_WORLD, &in, &out), VC_ERR_COMM);
    OK(vc_comm_create_graph(VC_COMM_WORLD, 1, &ring_src, 1, &ring_dst, &c));
    EXPECT_RC(vc_neighbor_allgather(VC_IN_PLACE, x, 1, VC_UINT32, c), VC_ERR_BUFFER);
    EXPECT_RC(vc_neighbor_alltoall(x, x + 1, 1, (vc_dtype_t)999, c), VC_ERR_DTYPE);
    EXPECT_RC(vc_neighbor_alltoallv(x, NULL, NULL, x + 2, NULL, NULL, VC_UINT32, c),
              VC_ERR_ARG);
    /* the communicator still works after the errors */
    x[0] = (uint32_t)me;
    OK(vc_neighbor_alltoall(x, x + 1, 1, VC_UINT32, c));
    if (x[1] != (uint32_t)ring_src)
        FAIL("ring after errors: got %u, expected %d", (unsigned)x[1], ring_src);
    OK(vc_comm_free(&c));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    want_seg = getenv("MP_NBR_SHM") && atoi(getenv("MP_NBR_SHM"));
    if (mp_size > MAXD) {
        FAIL("at most %d ranks", MAXD);
        return mp_finish("mp_neighbor");
    }
    int d0 = mp_size, d1 = 1;
    for (int f = 2; f * f <= mp_size; f++)
        if (mp_size % f == 0) {
            d0 = mp_size / f;
            d1 = f;
        }
    grid_case(2, d0, d1, 1);
    grid_case(2, d0, d1, 0);
    grid_case(1, mp_size, 0, 1);
    for (uint64_t seed = 1; seed <= 3; seed++)
        graph_case(seed * 0x9e3779b97f4a7c15ULL);
    errors();
    return mp_finish("mp_neighbor");
}
