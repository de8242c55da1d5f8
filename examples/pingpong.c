/*
 * pingpong.c -- latency and bandwidth between rank 0 and rank 1.
 * Latency: half the round trip of a ping-pong. Bandwidth: a window of 64
 * non-blocking sends, then a 1-byte ack (the OSU method).
 * The same file builds against MPI for a same-sitting comparison:
 *     mpicc.openmpi -O2 -DPINGPONG_MPI examples/pingpong.c -o pingpong_mpi
 * Options: -m MAXBYTES (default 4 MiB), -i ITERS (small sizes), -w WINDOW,
 * -o OFFSET: rank 1's buffer starts OFFSET bytes past a page (rank 0's on
 * one), as a malloc'd buffer does (glibc: a page plus 16 bytes); copies
 * between such a pair can take another path through memcpy and the kernel
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PINGPONG_MPI
#include <mpi.h>
#define LIB "MPI"
typedef MPI_Request req_t;
static int init(int *c, char ***v) { return MPI_Init(c, v); }
static void fin(void) { MPI_Finalize(); }
static int me(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int np(void) { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
static double now(void) { return MPI_Wtime(); }
static int snd(void *b, size_t n, int p, int t) { return MPI_Send(b, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD); }
static int rcv(void *b, size_t n, int p, int t) { return MPI_Recv(b, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static int isnd(void *b, size_t n, int p, int t, req_t *r) { return MPI_Isend(b, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD, r); }
static int ircv(void *b, size_t n, int p, int t, req_t *r) { return MPI_Irecv(b, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD, r); }
static int wall(int n, req_t *r) { return MPI_Waitall(n, r, MPI_STATUSES_IGNORE); }
static const char *err(int rc) { (void)rc; return "MPI error"; }
#else
#include <vcoll.h>
#define LIB "vcoll"
typedef vc_request_t req_t;
static int init(int *c, char ***v) { return vc_init(c, v); }
static void fin(void) { vc_finalize(); }
static int me(void) { int r; vc_comm_rank(VC_COMM_WORLD, &r); return r; }
static int np(void) { int s; vc_comm_size(VC_COMM_WORLD, &s); return s; }
static double now(void) { return vc_wtime(); }
static int snd(void *b, size_t n, int p, int t) { return vc_send(b, n, VC_BYTE, p, t, VC_COMM_WORLD); }
static int rcv(void *b, size_t n, int p, int t) { return vc_recv(b, n, VC_BYTE, p, t, VC_COMM_WORLD, VC_STATUS_IGNORE); }
static int isnd(void *b, size_t n, int p, int t, req_t *r) { return vc_isend(b, n, VC_BYTE, p, t, VC_COMM_WORLD, r); }
static int ircv(void *b, size_t n, int p, int t, req_t *r) { return vc_irecv(b, n, VC_BYTE, p, t, VC_COMM_WORLD, r); }
static int wall(int n, req_t *r) { return vc_waitall(n, r, NULL); }
static const char *err(int rc) { return vc_strerror(rc); }
#endif

#define CHECK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "rank %d: %s: %s\n", me(), #x, err(rc_)); exit(1); } } while (0)

int main(int argc, char **argv)
{
    if (init(&argc, &argv)) {
        fprintf(stderr, "init failed\n");
        return 1;
    }
    size_t maxb = 4u << 20;
    int iters = 10000, window = 64, opt;
    size_t off = 0;
    while ((opt = getopt(argc, argv, "m:i:w:o:")) != -1) {
        if (opt == 'm') maxb = strtoull(optarg, NULL, 0);
        else if (opt == 'i') iters = atoi(optarg);
        else if (opt == 'w') window = atoi(optarg);
        else if (opt == 'o') off = strtoull(optarg, NULL, 0) % 4096;
    }
    if (window < 1 || window > 1024) window = 64;
    int rank = me();
    if (np() < 2) {
        if (rank == 0) fprintf(stderr, "pingpong needs 2 ranks\n");
        fin();
        return 1;
    }
    char *mem = aligned_alloc(4096, (maxb + 4095) / 4096 * 4096 + 8192);
    char *buf = mem + (rank == 1 ? off : 0);
    req_t *reqs = malloc(sizeof *reqs * (size_t)window);
    memset(buf, 'a', maxb);
    if (rank == 0)
        printf("# %s pingpong: one-way latency (us) and bandwidth (MB/s, window %d)\n"
               "# %10s %12s %12s\n", LIB, window, "bytes", "latency", "bandwidth");
    for (size_t n = 0; n <= maxb; n = n ? n * 2 : 1) {
        int it = n <= 8192 ? iters : n <= (1u << 20) ? iters / 10 : iters / 50;
        if (it < 20) it = 20;
        int warm = it / 10 + 2;
        double t0 = 0, lat = 0, bw = 0;
        if (rank < 2) {
            int peer = 1 - rank;
            for (int i = 0; i < it + warm; i++) {
                if (i == warm) t0 = now();
                if (rank == 0) { CHECK(snd(buf, n, peer, 1)); CHECK(rcv(buf, n, peer, 1)); }
                else { CHECK(rcv(buf, n, peer, 1)); CHECK(snd(buf, n, peer, 1)); }
            }
            lat = (now() - t0) * 1e6 / (2.0 * it);
            if (n > 0) {
                int bit = it / 4 + 2;
                for (int i = 0; i < bit + 2; i++) {
                    if (i == 2) t0 = now();
                    if (rank == 0) {
                        for (int w = 0; w < window; w++) CHECK(isnd(buf, n, peer, 2, &reqs[w]));
                        CHECK(wall(window, reqs));
                        CHECK(rcv(buf + maxb, 1, peer, 3));
                    } else {
                        for (int w = 0; w < window; w++) CHECK(ircv(buf, n, peer, 2, &reqs[w]));
                        CHECK(wall(window, reqs));
                        CHECK(snd(buf + maxb, 1, peer, 3));
                    }
                }
                bw = (double)n * window * bit / (now() - t0) / 1e6;
            }
        }
        if (rank == 0)
            printf("  %10zu %12.2f %12.1f\n", n, lat, bw);
    }
    free(reqs);
    free(mem);
    fin();
    return 0;
}
