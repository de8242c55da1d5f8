/*
 * stencil.c -- explicit 2-D heat equation (Jacobi sweep, 5-point stencil)
 * on a periodic N x M grid split into tiles over a 2-D periodic Cartesian
 * communicator. Each time step exchanges one-point halos with the 4
 * neighbours through a persistent neighbor alltoallv made once before the
 * loop: the schedule is built once, a step only starts and waits for it.
 *
 * The result is checked twice, and a line says PASS or FAIL (exit 1):
 *  - heat is conserved: on a periodic grid the global sum of the field
 *    stays the same up to rounding;
 *  - every rank recomputes the whole (small) grid serially and compares its
 *    tile: a halo that came from the wrong side or rank shows up here even
 *    when it happens to conserve the sum.
 *
 * The same file builds against MPI for a comparison:
 *     mpicc.mpich -O2 -DSTENCIL_MPI examples/stencil.c -o stencil_mpi
 * MPI-4 libraries (MPICH 4) use MPI_Neighbor_alltoallv_init; older ones
 * (Open MPI 4.1) call MPI_Neighbor_alltoallv every step. MPICH 4.0.2 FAILs
 * when a side of the rank grid is 1 or 2 (np 1, 2, 4, 8, ...): there both
 * neighbours in that dimension are one rank, and it pairs their two blocks
 * the pre-MPI-4 way, so the halos arrive swapped (MPI-4 errata, fixed in
 * later MPICH). A 3x3 grid (9 ranks) passes with it.
 * Options: -n TILE_SIDE (default 32), -s STEPS (default 100)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NBRS 4  /* Cartesian order: dim 0 -1 (up), +1 (down), dim 1 -1 (left), +1 (right) */

#ifdef STENCIL_MPI
#include <mpi.h>
#define LIB "MPI"
typedef MPI_Comm comm_t;
static MPI_Request req = MPI_REQUEST_NULL;
static int init(int *c, char ***v) { return MPI_Init(c, v); }
static void fin(void) { MPI_Finalize(); }
static int me(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int np(void) { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
static double now(void) { return MPI_Wtime(); }
static const char *err(int rc) { (void)rc; return "MPI error"; }
static int cart(const int dims[2], comm_t *c)
{
    int periods[2] = {1, 1};
    return MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, c);
}
/* MPI counts are ints; kept here for the blocking form's every call */
static int cnt[NBRS], dsp[NBRS];
static const double *hs;
static double *hr;
static comm_t hc;
static int halo_init(const double *s, double *r, const size_t n[NBRS], const size_t d[NBRS],
                     comm_t c)
{
    for (int i = 0; i < NBRS; i++)
        cnt[i] = (int)n[i], dsp[i] = (int)d[i];
    hs = s, hr = r, hc = c;
#if MPI_VERSION >= 4
    return MPI_Neighbor_alltoallv_init(s, cnt, dsp, MPI_DOUBLE, r, cnt, dsp, MPI_DOUBLE, c,
                                       MPI_INFO_NULL, &req);
#else
    return MPI_SUCCESS;
#endif
}
static int halo_exchange(void)
{
#if MPI_VERSION >= 4
    int rc = MPI_Start(&req);
    return rc ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
#else
    return MPI_Neighbor_alltoallv(hs, cnt, dsp, MPI_DOUBLE, hr, cnt, dsp, MPI_DOUBLE, hc);
#endif
}
static void halo_free(comm_t *c)
{
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    MPI_Comm_free(c);
}
static int sumd(double *x, MPI_Op op)
{
    return MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
}
#define OP_SUM MPI_SUM
#define OP_MAX MPI_MAX
#else
#include <vcoll.h>
#define LIB "vcoll"
typedef vc_comm_t comm_t;
static vc_request_t req;
static int init(int *c, char ***v) { return vc_init(c, v); }
static void fin(void) { vc_finalize(); }
static int me(void) { int r; vc_comm_rank(VC_COMM_WORLD, &r); return r; }
static int np(void) { int s; vc_comm_size(VC_COMM_WORLD, &s); return s; }
static double now(void) { return vc_wtime(); }
static const char *err(int rc) { return vc_strerror(rc); }
static int cart(const int dims[2], comm_t *c)
{
    int periods[2] = {1, 1};
    return vc_comm_create_cart(VC_COMM_WORLD, 2, dims, periods, c);
}
static int halo_init(const double *s, double *r, const size_t n[NBRS], const size_t d[NBRS],
                     comm_t c)
{
    return vc_neighbor_alltoallv_init(s, n, d, r, n, d, VC_DOUBLE, c, &req);
}
static int halo_exchange(void)
{
    int rc = vc_start(&req);
    return rc ? rc : vc_wait(&req, VC_STATUS_IGNORE);
}
static void halo_free(comm_t *c)
{
    vc_request_free(&req);
    vc_comm_free(c);
}
static int sumd(double *x, vc_op_t op)
{
    return vc_allreduce(VC_IN_PLACE, x, 1, VC_DOUBLE, op, VC_COMM_WORLD);
}
#define OP_SUM VC_SUM
#define OP_MAX VC_MAX
#endif

#define CHECK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "rank %d: %s: %s\n", me(), #x, err(rc_)); exit(1); } } while (0)

#define ALPHA 0.2   /* diffusion number; explicit Euler is stable up to 0.25 */

/* initial field: uneven in both directions, so a halo taken from the wrong
   side changes the result */
static double u0(long gi, long gj) { return (double)((gi * 31 + gj * 17 + gi * gj) % 23); }

/* one point of a sweep; the serial check calls the same function so both
   sides round alike */
static double sweep(double c, double n, double s, double w, double e)
{
    return c + ALPHA * (n + s + w + e - 4.0 * c);
}

/* Serial reference on the whole periodic gn x gm grid, `steps` sweeps. */
static double *serial(long gn, long gm, int steps)
{
    double *a = malloc(gn * gm * sizeof *a), *b = malloc(gn * gm * sizeof *b);
    if (!a || !b)
        return NULL;
    for (long i = 0; i < gn; i++)
        for (long j = 0; j < gm; j++)
            a[i * gm + j] = u0(i, j);
    for (int t = 0; t < steps; t++) {
        for (long i = 0; i < gn; i++)
            for (long j = 0; j < gm; j++)
                b[i * gm + j] = sweep(a[i * gm + j], a[(i + gn - 1) % gn * gm + j],
                                      a[(i + 1) % gn * gm + j], a[i * gm + (j + gm - 1) % gm],
                                      a[i * gm + (j + 1) % gm]);
        double *x = a; a = b; b = x;
    }
    free(b);
    return a;
}

int main(int argc, char **argv)
{
    if (init(&argc, &argv)) {
        fprintf(stderr, "init failed\n");
        return 1;
    }
    long n = 32;
    int steps = 100, opt;
    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        if (opt == 'n') n = atol(optarg);
        else if (opt == 's') steps = atoi(optarg);
    }
    if (n < 1) n = 1;
    if (steps < 1) steps = 1;
    int rank = me(), p = np(), dims[2] = {p, 1};
    /* p factored evenly, larger side first (MPI_Dims_create's 2-D answer) */
    for (int k = 1; k * k <= p; k++)
        if (p % k == 0)
            dims[0] = p / k, dims[1] = k;
    comm_t cc;
    CHECK(cart(dims, &cc));
    /* reorder 0: ranks in world order, last dimension fastest */
    long ci = rank / dims[1], cj = rank % dims[1], w = n + 2;  /* tile row with halos */

    /* u, v: n x n tile inside a one-point halo; pack / unpack edges through
       sbuf / rbuf, blocks in Cartesian neighbour order, n doubles each */
    double *u = calloc(w * w, sizeof *u), *v = calloc(w * w, sizeof *v);
    double *sbuf = malloc(NBRS * n * sizeof *sbuf), *rbuf = malloc(NBRS * n * sizeof *rbuf);
    if (!u || !v || !sbuf || !rbuf) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        return 1;
    }
    size_t cnts[NBRS], dspl[NBRS];
    for (int k = 0; k < NBRS; k++)
        cnts[k] = (size_t)n, dspl[k] = (size_t)(k * n);
    CHECK(halo_init(sbuf, rbuf, cnts, dspl, cc));

    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            u[(i + 1) * w + j + 1] = u0(ci * n + i, cj * n + j);
    double sum0 = 0;
    for (long i = 1; i <= n; i++)
        for (long j = 1; j <= n; j++)
            sum0 += u[i * w + j];
    CHECK(sumd(&sum0, OP_SUM));

    double t_halo = 0, t0 = now();
    for (int t = 0; t < steps; t++) {
        /* what my up / down / left / right neighbour needs: my edge facing it */
        for (long k = 0; k < n; k++) {
            sbuf[0 * n + k] = u[1 * w + k + 1];
            sbuf[1 * n + k] = u[n * w + k + 1];
            sbuf[2 * n + k] = u[(k + 1) * w + 1];
            sbuf[3 * n + k] = u[(k + 1) * w + n];
        }
        double ts = now();
        CHECK(halo_exchange());
        t_halo += now() - ts;
        /* block 0 came from above: its bottom edge is my top halo, etc. */
        for (long k = 0; k < n; k++) {
            u[0 * w + k + 1] = rbuf[0 * n + k];
            u[(n + 1) * w + k + 1] = rbuf[1 * n + k];
            u[(k + 1) * w + 0] = rbuf[2 * n + k];
            u[(k + 1) * w + n + 1] = rbuf[3 * n + k];
        }
        for (long i = 1; i <= n; i++)
            for (long j = 1; j <= n; j++)
                v[i * w + j] = sweep(u[i * w + j], u[(i - 1) * w + j], u[(i + 1) * w + j],
                                     u[i * w + j - 1], u[i * w + j + 1]);
        double *x = u; u = v; v = x;
    }
    double total = now() - t0;

    double sum = 0, diff = 0;
    for (long i = 1; i <= n; i++)
        for (long j = 1; j <= n; j++)
            sum += u[i * w + j];
    double *ref = serial(dims[0] * n, dims[1] * n, steps);
    if (!ref) {
        fprintf(stderr, "rank %d: out of memory for the serial check\n", rank);
        return 1;
    }
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double d = fabs(u[(i + 1) * w + j + 1] - ref[(ci * n + i) * dims[1] * n + cj * n + j]);
            diff = d > diff ? d : diff;
        }
    CHECK(sumd(&sum, OP_SUM));
    CHECK(sumd(&diff, OP_MAX));
    CHECK(sumd(&t_halo, OP_MAX));
    CHECK(sumd(&total, OP_MAX));
    /* rounding only: a sum of ~1e4 values of ~10 drifts by far less than 1e-9 of it */
    double drift = fabs(sum - sum0) / (fabs(sum0) > 1.0 ? fabs(sum0) : 1.0);
    int ok = drift < 1e-9 && diff < 1e-9;
    if (rank == 0) {
        printf("# %s stencil: %ldx%ld periodic grid, %dx%d ranks, %ldx%ld tile, %d steps\n",
               LIB, dims[0] * n, dims[1] * n, dims[0], dims[1], n, n, steps);
        printf("  halo exchange %.2f us, whole step %.2f us (max over ranks)\n",
               t_halo * 1e6 / steps, total * 1e6 / steps);
        printf("  heat %.6f -> %.6f (relative drift %.1e), max error vs serial %.1e\n",
               sum0, sum, drift, diff);
        printf("%s\n", ok ? "PASS" : "FAIL");
    }
    free(ref); free(u); free(v); free(sbuf); free(rbuf);
    halo_free(&cc);
    fin();
    return ok ? 0 : 1;
}
