/*
 * transpose.c -- distributed transpose of an N x N matrix of doubles, the
 * communication step of a 2-D FFT (row FFTs, transpose, row FFTs again).
 *
 * Each of p ranks owns b = N/p consecutive rows. Tile (r, j) -- my rows,
 * columns [j*b, (j+1)*b) -- becomes tile (j, r) of the transpose, so one
 * alltoall of b*b elements per pair moves every tile to its owner; each
 * rank then transposes the b x b tiles it received locally. The result is
 * checked element by element and the time per transpose printed.
 *
 * The same file builds against MPI for a same-sitting comparison:
 *     mpicc.openmpi -O2 -DTRANSPOSE_MPI examples/transpose.c -o transpose_mpi
 * Options: -b ROWS_PER_RANK (default 64), -i ITERS (default 20)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef TRANSPOSE_MPI
#include <mpi.h>
#define LIB "MPI"
static int init(int *c, char ***v) { return MPI_Init(c, v); }
static void fin(void) { MPI_Finalize(); }
static int me(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int np(void) { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
static double now(void) { return MPI_Wtime(); }
static int a2a(const double *s, double *r, size_t n)
{
    return MPI_Alltoall(s, (int)n, MPI_DOUBLE, r, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
}
static int maxd(double *x) { return MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); }
static const char *err(int rc) { (void)rc; return "MPI error"; }
#else
#include <vcoll.h>
#define LIB "vcoll"
static int init(int *c, char ***v) { return vc_init(c, v); }
static void fin(void) { vc_finalize(); }
static int me(void) { int r; vc_comm_rank(VC_COMM_WORLD, &r); return r; }
static int np(void) { int s; vc_comm_size(VC_COMM_WORLD, &s); return s; }
static double now(void) { return vc_wtime(); }
static int a2a(const double *s, double *r, size_t n)
{
    return vc_alltoall(s, r, n, VC_DOUBLE, VC_COMM_WORLD);
}
static int maxd(double *x) { return vc_allreduce(VC_IN_PLACE, x, 1, VC_DOUBLE, VC_MAX, VC_COMM_WORLD); }
static const char *err(int rc) { return vc_strerror(rc); }
#endif

#define CHECK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "rank %d: %s: %s\n", me(), #x, err(rc_)); exit(1); } } while (0)

/* element (i, k) of the matrix: exact in a double, unique per position */
static double elem(size_t n, size_t i, size_t k) { return (double)(i * n + k); }

int main(int argc, char **argv)
{
    if (init(&argc, &argv)) {
        fprintf(stderr, "init failed\n");
        return 1;
    }
    size_t b = 64;
    int iters = 20, opt;
    while ((opt = getopt(argc, argv, "b:i:")) != -1) {
        if (opt == 'b') b = strtoull(optarg, NULL, 0);
        else if (opt == 'i') iters = atoi(optarg);
    }
    if (b < 1) b = 1;
    if (iters < 1) iters = 1;
    int rank = me(), p = np();
    size_t n = b * (size_t)p, tile = b * b;
    /* my rows: a[i][k], i < b, k < n */
    double *a = malloc(b * n * sizeof *a), *send = malloc(b * n * sizeof *a);
    double *recv = malloc(b * n * sizeof *a), *t = malloc(b * n * sizeof *a);
    if (!a || !send || !recv || !t) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        return 1;
    }
    for (size_t i = 0; i < b; i++)
        for (size_t k = 0; k < n; k++)
            a[i * n + k] = elem(n, (size_t)rank * b + i, k);

    double t_a2a = 0, t0 = 0;
    for (int it = 0; it <= iters; it++) {      /* iteration 0 warms up */
        /* pack: tile j (columns j*b..) contiguous, row by row */
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < b; i++)
                for (size_t k = 0; k < b; k++)
                    send[(size_t)j * tile + i * b + k] = a[i * n + (size_t)j * b + k];
        if (it == 1)
            t0 = now();
        double ts = now();
        CHECK(a2a(send, recv, tile));
        if (it > 0)
            t_a2a += now() - ts;
        /* tile from rank j holds its rows j*b.., my columns: transpose it
           into my rows of the result, columns j*b.. */
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < b; i++)
                for (size_t k = 0; k < b; k++)
                    t[k * n + (size_t)j * b + i] = recv[(size_t)j * tile + i * b + k];
    }
    double total = now() - t0;

    /* my row i of the transpose is column rank*b + i of the original */
    long bad = 0;
    for (size_t i = 0; i < b; i++)
        for (size_t k = 0; k < n; k++)
            if (t[i * n + k] != elem(n, k, (size_t)rank * b + i))
                bad++;
    double worst = (double)bad;
    CHECK(maxd(&worst));
    CHECK(maxd(&t_a2a));
    CHECK(maxd(&total));
    if (rank == 0) {
        printf("# %s transpose: %zu x %zu doubles on %d ranks (%zu KiB per pair)\n", LIB, n, n,
               p, tile * sizeof(double) / 1024);
        printf("  alltoall %.1f us, whole transpose %.1f us per iteration (max over ranks)\n",
               t_a2a * 1e6 / iters, total * 1e6 / iters);
        printf("  result %s\n", worst == 0 ? "verified" : "WRONG");
    }
    free(a); free(send); free(recv); free(t);
    fin();
    return worst == 0 ? 0 : 1;
}
