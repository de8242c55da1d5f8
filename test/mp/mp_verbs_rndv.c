/*
 * mp_verbs_rndv.c -- transport-level checks meant for VCOLL_NET=rc (they
 * also pass on shm): ring exchange of every size class (inline, eager,
 * rendezvous, multi-chunk RDMA READ), a burst that must survive credit
 * exhaustion in order, and the stale-registration case: a send buffer
 * unmapped and mapped again at the same address with new contents must be
 * sent with the new contents.
 * With VCOLL_VERBS_PERF=1, ranks 0 and 1 also print ping-pong latency and
 * streaming bandwidth.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "vcoll.h"

static int rank, size;

#define FAIL(...) do { printf("FAIL: rank %d: ", rank); printf(__VA_ARGS__); \
                       printf("\n"); fflush(stdout); vc_abort(VC_COMM_WORLD, 1); exit(1); } while (0)
#define CHK(call) do { int e_ = (call); if (e_) FAIL("%s: %s", #call, vc_strerror(e_)); } while (0)

static unsigned char pat(size_t i, int src, int salt)
{
    return (unsigned char)((i * 131u) ^ (size_t)(src * 17 + salt * 101) ^ (i >> 11));
}

/* send to right neighbour, receive from left; check every byte */
static void ring(unsigned char *sb, unsigned char *rb, size_t len, int salt)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (size_t i = 0; i < len; i++)
        sb[i] = pat(i, rank, salt);
    memset(rb, 0xee, len);
    vc_request_t rq;
    vc_status_t st;
    CHK(vc_irecv(rb, len, VC_BYTE, left, salt & 0xffff, VC_COMM_WORLD, &rq));
    CHK(vc_send(sb, len, VC_BYTE, right, salt & 0xffff, VC_COMM_WORLD));
    CHK(vc_wait(&rq, &st));
    if (st.bytes != len)
        FAIL("size %zu salt %d: got %zu bytes", len, salt, st.bytes);
    for (size_t i = 0; i < len; i++)
        if (rb[i] != pat(i, left, salt))
            FAIL("size %zu salt %d: byte %zu is 0x%02x, want 0x%02x", len, salt, i,
                 rb[i], pat(i, left, salt));
}

static void sizes(void)
{
    static const size_t sz[] = { 0, 1, 7, 64, 200, 1000, 4095, 8191, 8192, 8193,
                                 16384, 65536, 300000, 1 << 20, (4 << 20) + 3 };
    size_t max = (4 << 20) + 3;
    unsigned char *sb = malloc(max), *rb = malloc(max);
    if (!sb || !rb)
        FAIL("malloc");
    for (size_t k = 0; k < sizeof sz / sizeof sz[0]; k++)
        ring(sb, rb, sz[k], (int)k + 1);
    free(sb);
    free(rb);
}

/* many small messages in flight: credits run out, order must hold */
static void burst(void)
{
    enum { N = 3000, LEN = 100 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *sb = malloc((size_t)N * LEN), *rb = malloc(LEN);
    vc_request_t *rq = malloc(N * sizeof *rq);
    if (!sb || !rb || !rq)
        FAIL("malloc");
    for (int m = 0; m < N; m++) {
        for (int i = 0; i < LEN; i++)
            sb[(size_t)m * LEN + (size_t)i] = pat((size_t)i, rank, m);
        CHK(vc_isend(sb + (size_t)m * LEN, LEN, VC_BYTE, right, 7, VC_COMM_WORLD, &rq[m]));
    }
    for (int m = 0; m < N; m++) {
        vc_status_t st;
        CHK(vc_recv(rb, LEN, VC_BYTE, left, 7, VC_COMM_WORLD, &st));
        for (int i = 0; i < LEN; i++)
            if (rb[i] != pat((size_t)i, left, m))
                FAIL("burst message %d out of order or corrupt at byte %d", m, i);
    }
    CHK(vc_waitall(N, rq, NULL));
    free(sb);
    free(rb);
    free(rq);
}

/* Same virtual address, new physical pages, new contents: a registration
   cache that kept the old MR would send the old bytes. */
static void stale_registration(void)
{
    const size_t len = 2u << 20;
    void *want = NULL;
    unsigned char *rb = malloc(len);
    if (!rb)
        FAIL("malloc");
    for (int it = 0; it < 4; it++) {
        unsigned char *sb = mmap(want, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
                                 MAP_ANONYMOUS | (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);
        if (sb == MAP_FAILED)
            FAIL("mmap at %p", want);
        if (want && (void *)sb != want)
            FAIL("mmap did not reuse %p", want);
        want = sb;
        ring(sb, rb, len, 1000 + it);      /* different contents every round */
        CHK(vc_barrier(VC_COMM_WORLD));
        munmap(sb, len);
    }
    /* and through malloc/free, the way applications do it */
    for (int it = 0; it < 4; it++) {
        unsigned char *sb = malloc(len);
        if (!sb)
            FAIL("malloc");
        ring(sb, rb, len, 2000 + it);
        free(sb);
    }
    free(rb);
}

static void perf(void)
{
    if (size < 2 || rank > 1)
        return;
    int peer = 1 - rank;
    char *b = malloc(1 << 20);
    if (!b)
        FAIL("malloc");
    memset(b, rank, 1 << 20);
    const int iters = 2000, skip = 100;
    double t0 = 0;
    for (int i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = vc_wtime();
        if (rank == 0) {
            CHK(vc_send(b, 8, VC_BYTE, peer, 1, VC_COMM_WORLD));
            CHK(vc_recv(b, 8, VC_BYTE, peer, 1, VC_COMM_WORLD, VC_STATUS_IGNORE));
        } else {
            CHK(vc_recv(b, 8, VC_BYTE, peer, 1, VC_COMM_WORLD, VC_STATUS_IGNORE));
            CHK(vc_send(b, 8, VC_BYTE, peer, 1, VC_COMM_WORLD));
        }
    }
    double lat = (vc_wtime() - t0) / iters / 2 * 1e6;
    const int win = 16, bw_iters = 20;
    vc_request_t rq[16];
    CHK(vc_barrier(VC_COMM_WORLD));
    t0 = vc_wtime();
    for (int i = 0; i < bw_iters; i++) {
        for (int w = 0; w < win; w++) {
            if (rank == 0)
                CHK(vc_isend(b, 1 << 20, VC_BYTE, peer, 2, VC_COMM_WORLD, &rq[w]));
            else
                CHK(vc_irecv(b, 1 << 20, VC_BYTE, peer, 2, VC_COMM_WORLD, &rq[w]));
        }
        CHK(vc_waitall(win, rq, NULL));
    }
    if (rank == 0)
        CHK(vc_recv(b, 1, VC_BYTE, peer, 3, VC_COMM_WORLD, VC_STATUS_IGNORE));
    else
        CHK(vc_send(b, 1, VC_BYTE, peer, 3, VC_COMM_WORLD));
    double bw = (double)bw_iters * win * (1 << 20) / (vc_wtime() - t0) / 1e6;
    if (rank == 0)
        printf("perf: 8 B one-way latency %.2f us, 1 MiB bandwidth %.1f MB/s\n", lat, bw);
    free(b);
}

int main(int argc, char **argv)
{
    CHK(vc_init(&argc, &argv));
    CHK(vc_comm_rank(VC_COMM_WORLD, &rank));
    CHK(vc_comm_size(VC_COMM_WORLD, &size));
    sizes();
    burst();
    stale_registration();
    const char *p = getenv("VCOLL_VERBS_PERF");
    if (p && *p == '1')
        perf();
    CHK(vc_barrier(VC_COMM_WORLD));
    CHK(vc_finalize());
    return 0;
}
