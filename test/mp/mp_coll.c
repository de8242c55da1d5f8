/*
 * mp_coll.c -- collectives across processes (run under mpirun, any np).
 *
 * Every result is checked against values each rank can compute on its own
 * (inputs are a function of rank and index; sums stay exact). Covers every
 * collective and dtype class, counts 0/1/odd/large (eager and rendezvous
 * sizes), all roots, in place, non-blocking collectives overlapping
 * point-to-point traffic and each other, sub-communicators from split and
 * dup (traffic on one never matches another), and bad arguments returning
 * the documented error with the job still working afterwards.
 * Exit 0 on success; "FAIL: <what>" and exit 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vcoll.h"

static int rank, size, fails;

#define CHECK(cond, ...)                                                 \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "FAIL: rank %d: ", rank);                    \
            fprintf(stderr, __VA_ARGS__);                                \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);           \
            fails++;                                                     \
        }                                                                \
    } while (0)

#define OK(call) CHECK((call) == VC_SUCCESS, "%s -> error", #call)

static double val(int r, size_t i) { return (double)((r * 7 + (int)(i % 13)) % 17) - 5.0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);  /* one clock for every rank of a machine */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A barrier must hold everyone until the last has arrived: in each round
   one member arrives 20 ms late, and no member may leave before that
   late arrival (every rank's exit time against the latest entry time,
   exchanged afterwards). A barrier that lets anyone through early, say a
   member that waits for rank 0 alone while rank 0 did not wait for all,
   fails here. Then 20 back-to-back barriers. */
static void test_barrier(vc_comm_t comm)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    double *t = malloc(2 * (size_t)p * sizeof *t);
    for (int round = 0; round < 3 && p > 1; round++) {
        int late = (round * 5 + 1) % p;     /* rank 0 and others, by size */
        if (me == late) {
            struct timespec d = {0, 20 * 1000 * 1000};
            nanosleep(&d, NULL);
        }
        double io[2];
        io[0] = now_s();
        OK(vc_barrier(comm));
        io[1] = now_s();
        OK(vc_allgather(io, t, 2, VC_DOUBLE, comm));
        double last_in = 0;
        for (int r = 0; r < p; r++)
            if (t[2 * r] > last_in)
                last_in = t[2 * r];
        for (int r = 0; r < p; r++)
            CHECK(t[2 * r + 1] >= last_in, "barrier round %d: rank %d left %.3f ms before "
                  "rank %d arrived", round, r, 1e3 * (last_in - t[2 * r + 1]), late);
    }
    free(t);
    for (int i = 0; i < 20; i++)
        OK(vc_barrier(comm));
}

static void test_bcast(vc_comm_t comm, size_t count)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    int32_t *b = malloc((count + 1) * sizeof *b);
    for (int root = 0; root < p; root++) {
        for (size_t i = 0; i < count; i++)
            b[i] = me == root ? (int32_t)(root * 100000 + (int)i) : -1;
        OK(vc_bcast(b, count, VC_INT32, root, comm));
        for (size_t i = 0; i < count; i++)
            if (b[i] != (int32_t)(root * 100000 + (int)i)) {
                CHECK(0, "bcast count %zu root %d: b[%zu]=%d", count, root, i, b[i]);
                break;
            }
    }
    free(b);
}

/* world ranks of comm members are not needed: inputs use comm ranks */
static void test_allreduce(vc_comm_t comm, size_t count)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    double *s = malloc((count + 1) * sizeof *s), *r = malloc((count + 1) * sizeof *r);
    int64_t *si = malloc((count + 1) * sizeof *si), *ri = malloc((count + 1) * sizeof *ri);
    for (size_t i = 0; i < count; i++) {
        s[i] = val(me, i);
        si[i] = (int64_t)me * 1000 + (int64_t)i;
    }
    OK(vc_allreduce(s, r, count, VC_DOUBLE, VC_SUM, comm));
    for (size_t i = 0; i < count; i++) {
        double e = 0;
        for (int q = 0; q < p; q++)
            e += val(q, i);
        if (r[i] != e) {
            CHECK(0, "allreduce sum count %zu: r[%zu]=%g want %g", count, i, r[i], e);
            break;
        }
    }
    OK(vc_allreduce(si, ri, count, VC_INT64, VC_MAX, comm));
    for (size_t i = 0; i < count; i++)
        if (ri[i] != (int64_t)(p - 1) * 1000 + (int64_t)i) {
            CHECK(0, "allreduce max count %zu: i=%zu", count, i);
            break;
        }
    /* in place */
    for (size_t i = 0; i < count; i++)
        ri[i] = (int64_t)me + (int64_t)i;
    OK(vc_allreduce(VC_IN_PLACE, ri, count, VC_INT64, VC_SUM, comm));
    for (size_t i = 0; i < count; i++)
        if (ri[i] != (int64_t)p * (p - 1) / 2 + (int64_t)p * (int64_t)i) {
            CHECK(0, "allreduce in place count %zu: i=%zu", count, i);
            break;
        }
    free(s); free(r); free(si); free(ri);
}

static void test_allreduce_bits_n(vc_comm_t comm, size_t n);
static void test_allreduce_bits(vc_comm_t comm)
{
    /* 5 floats fit the shared-memory flag variant, 3001 take the schedules */
    test_allreduce_bits_n(comm, 5);
    test_allreduce_bits_n(comm, 3001);
}

static void test_allreduce_bits_n(vc_comm_t comm, size_t n)
{
    /* random-ish floats: the result must be bitwise identical everywhere */
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    float *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    float *all = malloc(n * (size_t)p * sizeof *all);
    uint32_t x = 12345u + (uint32_t)me * 7919u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        s[i] = (float)(x >> 8) / (float)(1 << 24) - 0.5f;
    }
    OK(vc_allreduce(s, r, n, VC_FLOAT, VC_SUM, comm));
    OK(vc_allgather(r, all, n, VC_FLOAT, comm));
    for (int q = 0; q < p; q++)
        CHECK(!memcmp(all + (size_t)q * n, r, n * sizeof *r),
              "float allreduce bits differ between rank %d and %d", me, q);
    free(s); free(r); free(all);
}

static void test_reduce(vc_comm_t comm, size_t count)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    int32_t *s = malloc((count + 1) * sizeof *s), *r = malloc((count + 1) * sizeof *r);
    for (int root = 0; root < p; root++) {
        for (size_t i = 0; i < count; i++) {
            s[i] = (int32_t)(me + 1) * (int32_t)((i % 5) + 1);
            r[i] = -7;
        }
        OK(vc_reduce(s, me == root ? r : NULL, count, VC_INT32, VC_SUM, root, comm));
        if (me == root)
            for (size_t i = 0; i < count; i++)
                if (r[i] != (int32_t)(p * (p + 1) / 2) * (int32_t)((i % 5) + 1)) {
                    CHECK(0, "reduce count %zu root %d: r[%zu]=%d", count, root, i, r[i]);
                    break;
                }
        /* in place at the root */
        for (size_t i = 0; i < count; i++)
            r[i] = s[i];
        OK(vc_reduce(me == root ? VC_IN_PLACE : s, me == root ? r : NULL, count,
                     VC_INT32, VC_SUM, root, comm));
        if (me == root)
            for (size_t i = 0; i < count; i++)
                if (r[i] != (int32_t)(p * (p + 1) / 2) * (int32_t)((i % 5) + 1)) {
                    CHECK(0, "reduce in place count %zu root %d", count, root);
                    break;
                }
    }
    /* a bitwise op on unsigned bytes */
    uint8_t bs = (uint8_t)(1u << (me % 8)), br = 0;
    OK(vc_reduce(&bs, &br, 1, VC_UINT8, VC_BOR, 0, comm));
    if (me == 0) {
        uint8_t e = 0;
        for (int q = 0; q < p; q++)
            e |= (uint8_t)(1u << (q % 8));
        CHECK(br == e, "reduce BOR: %u want %u", br, e);
    }
    free(s); free(r);
}

static void test_allgather(vc_comm_t comm, size_t count)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    uint16_t *s = malloc((count + 1) * sizeof *s);
    uint16_t *r = malloc((count * (size_t)p + 1) * sizeof *r);
    for (size_t i = 0; i < count; i++)
        s[i] = (uint16_t)(me * 1000 + (int)i);
    OK(vc_allgather(s, r, count, VC_UINT16, comm));
    for (int q = 0; q < p; q++)
        for (size_t i = 0; i < count; i++)
            if (r[(size_t)q * count + i] != (uint16_t)(q * 1000 + (int)i)) {
                CHECK(0, "allgather count %zu: block %d elem %zu", count, q, i);
                q = p;
                break;
            }
    /* in place */
    for (size_t i = 0; i < count * (size_t)p; i++)
        r[i] = 0xffff;
    for (size_t i = 0; i < count; i++)
        r[(size_t)me * count + i] = s[i];
    OK(vc_allgather(VC_IN_PLACE, r, count, VC_UINT16, comm));
    for (int q = 0; q < p; q++)
        for (size_t i = 0; i < count; i++)
            if (r[(size_t)q * count + i] != (uint16_t)(q * 1000 + (int)i)) {
                CHECK(0, "allgather in place count %zu: block %d", count, q);
                q = p;
                break;
            }
    free(s); free(r);
}

static void test_all(vc_comm_t comm)
{
    size_t counts[] = {0, 1, 7, 1001, 70000};
    test_barrier(comm);
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        test_bcast(comm, counts[c]);
        test_allreduce(comm, counts[c]);
        test_reduce(comm, counts[c]);
        test_allgather(comm, counts[c] > 10000 ? 10000 : counts[c]);
    }
    test_allreduce_bits(comm);
}

/* Back-to-back bcasts and allgathers with changing roots and sizes that
   are not multiples of anything: on one node they stream through the
   communicator's shared segment, whose ring slots then wrap many times
   across calls while slow readers still drain earlier ones. */
static void test_stream(vc_comm_t comm)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    const size_t counts[] = {262147, 3, 50001, 1};
    size_t maxc = 262147 + 1;
    uint32_t *b = malloc(maxc * sizeof *b);
    for (int it = 0; it < 12; it++) {
        size_t c = counts[it % 4];
        int root = (it * 5 + 1) % p;
        for (size_t i = 0; i < c; i++)
            b[i] = me == root ? (uint32_t)(it * 1000003u + i) : 0xdeadu;
        OK(vc_bcast(b, c, VC_UINT32, root, comm));
        for (size_t i = 0; i < c; i++)
            if (b[i] != (uint32_t)(it * 1000003u + i)) {
                CHECK(0, "stream bcast it %d count %zu: b[%zu]=%u", it, c, i, b[i]);
                break;
            }
        size_t ac = c / (size_t)p + (size_t)it;
        uint32_t *in = malloc((ac + 1) * sizeof *in), *all = malloc((ac * (size_t)p + 1) * sizeof *all);
        for (size_t i = 0; i < ac; i++)
            in[i] = (uint32_t)(me * 7919 + it * 31) + (uint32_t)i;
        OK(vc_allgather(in, all, ac, VC_UINT32, comm));
        for (int r = 0; r < p; r++)
            for (size_t i = 0; i < ac; i++)
                if (all[(size_t)r * ac + i] != (uint32_t)(r * 7919 + it * 31) + (uint32_t)i) {
                    CHECK(0, "stream allgather it %d block %d [%zu]", it, r, i);
                    r = p;
                    break;
                }
        free(in);
        free(all);
    }
    free(b);
}

/* non-blocking collectives overlapping each other and point-to-point */
static void test_nonblocking(void)
{
    vc_request_t rq[6];
    int64_t s[257], r[257], b[300];
    int tok_out = rank, tok_in = -1;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    for (int it = 0; it < 10; it++) {
        for (int i = 0; i < 257; i++)
            s[i] = rank + i + it;
        for (int i = 0; i < 300; i++)
            b[i] = rank == it % size ? 5 * i + it : 0;
        OK(vc_ibarrier(VC_COMM_WORLD, &rq[0]));
        OK(vc_iallreduce(s, r, 257, VC_INT64, VC_SUM, VC_COMM_WORLD, &rq[1]));
        OK(vc_irecv(&tok_in, 1, VC_INT32, left, 77, VC_COMM_WORLD, &rq[2]));
        OK(vc_ibcast(b, 300, VC_INT64, it % size, VC_COMM_WORLD, &rq[3]));
        OK(vc_isend(&tok_out, 1, VC_INT32, right, 77, VC_COMM_WORLD, &rq[4]));
        /* a blocking collective while the non-blocking ones are in flight */
        int32_t one = 1, tot = 0;
        OK(vc_allreduce(&one, &tot, 1, VC_INT32, VC_SUM, VC_COMM_WORLD));
        CHECK(tot == size, "blocking allreduce during non-blocking: %d", tot);
        /* finish in a scrambled order, partly by vc_test polling */
        int flag = 0;
        while (!flag)
            OK(vc_test(&rq[3], &flag, VC_STATUS_IGNORE));
        OK(vc_waitall(2, &rq[1], NULL));
        OK(vc_wait(&rq[4], VC_STATUS_IGNORE));
        OK(vc_wait(&rq[0], VC_STATUS_IGNORE));
        CHECK(rq[0] == VC_REQUEST_NULL && rq[3] == VC_REQUEST_NULL, "requests not nulled");
        CHECK(tok_in == left, "p2p during collectives: got %d want %d", tok_in, left);
        for (int i = 0; i < 257; i++)
            if (r[i] != (int64_t)size * (size - 1) / 2 + (int64_t)size * (i + it)) {
                CHECK(0, "iallreduce it %d elem %d", it, i);
                break;
            }
        for (int i = 0; i < 300; i++)
            if (b[i] != 5 * i + it) {
                CHECK(0, "ibcast it %d elem %d", it, i);
                break;
            }
    }
    /* large non-blocking allreduce (rendezvous-sized messages) */
    size_t n = 1 << 17;
    double *ls = malloc(n * sizeof *ls), *lr = malloc(n * sizeof *lr);
    for (size_t i = 0; i < n; i++)
        ls[i] = (double)(rank + 1);
    vc_request_t lq;
    OK(vc_iallreduce(ls, lr, n, VC_DOUBLE, VC_SUM, VC_COMM_WORLD, &lq));
    OK(vc_wait(&lq, VC_STATUS_IGNORE));
    for (size_t i = 0; i < n; i++)
        if (lr[i] != (double)size * (size + 1) / 2) {
            CHECK(0, "large iallreduce elem %zu", i);
            break;
        }
    free(ls);
    free(lr);
}

static void test_comms(void)
{
    /* split in halves by parity, reversed key order */
    vc_comm_t half, dup, none, dup2;
    OK(vc_comm_split(VC_COMM_WORLD, rank % 2, size - rank, &half));
    int hr = -1, hs = -1;
    OK(vc_comm_rank(half, &hr));
    OK(vc_comm_size(half, &hs));
    int expect_size = (size + 1 - rank % 2) / 2;
    CHECK(hs == expect_size, "split size %d want %d", hs, expect_size);
    /* key = size - rank reverses the order: highest world rank is rank 0 */
    int members_above = 0;
    for (int q = rank + 1; q < size; q++)
        if (q % 2 == rank % 2)
            members_above++;
    CHECK(hr == members_above, "split rank %d want %d", hr, members_above);

    OK(vc_comm_dup(half, &dup));
    OK(vc_comm_dup(VC_COMM_WORLD, &dup2));

    /* the same tag on world, half and dup must not cross */
    int32_t a = 100 + rank, b = -1;
    vc_request_t rq[4];
    int hright = (hr + 1) % hs;
    OK(vc_irecv(&b, 1, VC_INT32, VC_ANY_SOURCE, 5, dup, &rq[0]));
    int32_t w = 900 + rank, wb = -1;
    OK(vc_irecv(&wb, 1, VC_INT32, VC_ANY_SOURCE, 5, VC_COMM_WORLD, &rq[1]));
    OK(vc_isend(&w, 1, VC_INT32, (rank + 1) % size, 5, VC_COMM_WORLD, &rq[2]));
    OK(vc_isend(&a, 1, VC_INT32, hright, 5, dup, &rq[3]));
    OK(vc_waitall(4, rq, NULL));
    CHECK(wb == 900 + (rank - 1 + size) % size, "world msg crossed comms: %d", wb);
    /* the sender on dup is my left neighbour in half: same parity as me */
    CHECK(b >= 100 && b < 100 + size && (b - 100) % 2 == rank % 2,
          "dup msg crossed comms: %d", b);

    /* collectives on all of them, interleaved */
    test_all(half);
    test_stream(half);      /* both halves at once, each on its own segment */
    test_barrier(dup);
    test_allreduce(dup, 33);
    test_allgather(dup2, 5);
    test_bcast(dup2, 17);

    /* concurrent non-blocking collectives on two comms */
    vc_request_t q1, q2;
    int64_t x = rank, y = 0, u = 1, v = 0;
    OK(vc_iallreduce(&x, &y, 1, VC_INT64, VC_SUM, half, &q1));
    OK(vc_iallreduce(&u, &v, 1, VC_INT64, VC_SUM, VC_COMM_WORLD, &q2));
    OK(vc_wait(&q2, VC_STATUS_IGNORE));
    OK(vc_wait(&q1, VC_STATUS_IGNORE));
    int64_t ey = 0;
    for (int q = rank % 2; q < size; q += 2)
        ey += q;
    CHECK(y == ey && v == size, "concurrent iallreduce on two comms: %lld %lld",
          (long long)y, (long long)v);

    /* VC_UNDEFINED color */
    OK(vc_comm_split(VC_COMM_WORLD, rank == 0 ? VC_UNDEFINED : 1, 0, &none));
    if (rank == 0)
        CHECK(none == VC_COMM_NULL, "UNDEFINED gave a communicator");
    else {
        int ns = 0;
        OK(vc_comm_size(none, &ns));
        CHECK(ns == size - 1, "split without rank 0: size %d", ns);
        test_allreduce(none, 9);
        OK(vc_comm_free(&none));
    }

    /* split of a split */
    vc_comm_t quarter;
    OK(vc_comm_split(half, hr % 2, hr, &quarter));
    test_allreduce(quarter, 3);
    OK(vc_comm_free(&quarter));

    OK(vc_comm_free(&dup));
    CHECK(dup == VC_COMM_NULL, "free did not null the handle");
    vc_comm_t stale = half;
    OK(vc_comm_free(&half));
    CHECK(vc_barrier(stale) == VC_ERR_COMM, "barrier on freed comm");
    CHECK(vc_comm_free(&stale) == VC_ERR_COMM, "double free");
    vc_comm_t wc = VC_COMM_WORLD;
    CHECK(vc_comm_free(&wc) == VC_ERR_COMM, "freeing world");
    OK(vc_comm_free(&dup2));

    /* many dup/free cycles: context ids must keep working */
    for (int i = 0; i < 50; i++) {
        vc_comm_t d;
        OK(vc_comm_dup(VC_COMM_WORLD, &d));
        int32_t one = 1, t = 0;
        OK(vc_allreduce(&one, &t, 1, VC_INT32, VC_SUM, d));
        CHECK(t == size, "allreduce on dup %d", i);
        OK(vc_comm_free(&d));
    }
}

/* every rank passes the same bad argument: all get the error, none hangs */
static void test_errors(void)
{
    int32_t s[4] = {1, 2, 3, 4}, r[4 * 64];
    float f = 1.0f, g;
    vc_request_t rq;
    CHECK(vc_bcast(s, 4, VC_INT32, size, VC_COMM_WORLD) == VC_ERR_RANK, "bcast root");
    CHECK(vc_bcast(s, 4, VC_INT32, -1, VC_COMM_WORLD) == VC_ERR_RANK, "bcast root -1");
    CHECK(vc_reduce(s, r, 4, VC_INT32, VC_SUM, size, VC_COMM_WORLD) == VC_ERR_RANK, "reduce root");
    CHECK(vc_allreduce(&f, &g, 1, VC_FLOAT, VC_BXOR, VC_COMM_WORLD) == VC_ERR_OP, "bxor float");
    CHECK(vc_allreduce(&f, &g, 1, VC_DOUBLE, VC_BAND, VC_COMM_WORLD) == VC_ERR_OP, "band double");
    CHECK(vc_allreduce(s, r, 1, VC_INT32, (vc_op_t)99, VC_COMM_WORLD) == VC_ERR_OP, "bad op");
    CHECK(vc_allreduce(s, r, 1, (vc_dtype_t)99, VC_SUM, VC_COMM_WORLD) == VC_ERR_DTYPE, "bad dtype");
    CHECK(vc_allreduce(NULL, r, 4, VC_INT32, VC_SUM, VC_COMM_WORLD) == VC_ERR_BUFFER, "null sbuf");
    CHECK(vc_allreduce(s, NULL, 4, VC_INT32, VC_SUM, VC_COMM_WORLD) == VC_ERR_BUFFER, "null rbuf");
    CHECK(vc_bcast(NULL, 4, VC_INT32, 0, VC_COMM_WORLD) == VC_ERR_BUFFER, "bcast null");
    CHECK(vc_allgather(s, NULL, 1, VC_INT32, VC_COMM_WORLD) == VC_ERR_BUFFER, "allgather null");
    CHECK(vc_allreduce(s, r, SIZE_MAX / 2, VC_INT32, VC_SUM, VC_COMM_WORLD) == VC_ERR_COUNT, "count overflow");
    CHECK(vc_allgather(s, r, SIZE_MAX / 4, VC_INT32, VC_COMM_WORLD) == VC_ERR_COUNT, "allgather count overflow");
    CHECK(vc_bcast(s, SIZE_MAX / 3, VC_INT64, 0, VC_COMM_WORLD) == VC_ERR_COUNT, "bcast overflow");
    CHECK(vc_ibarrier(VC_COMM_WORLD, NULL) == VC_ERR_ARG, "ibarrier null req");
    CHECK(vc_iallreduce(s, r, 1, VC_INT32, VC_SUM, VC_COMM_WORLD, NULL) == VC_ERR_ARG, "iallreduce null req");
    CHECK(vc_ibcast(s, 1, VC_INT32, 0, VC_COMM_WORLD, NULL) == VC_ERR_ARG, "ibcast null req");
    CHECK(vc_ibcast(s, 1, VC_INT32, size + 3, VC_COMM_WORLD, &rq) == VC_ERR_RANK, "ibcast root");
    CHECK(vc_barrier(VC_COMM_NULL) == VC_ERR_COMM, "barrier null comm");
    CHECK(vc_allreduce(s, r, 1, VC_INT32, VC_SUM, VC_COMM_NULL) == VC_ERR_COMM, "allreduce null comm");
    CHECK(vc_comm_dup(VC_COMM_WORLD, NULL) == VC_ERR_ARG, "dup null out");
    CHECK(vc_comm_split(VC_COMM_NULL, 0, 0, &(vc_comm_t){0}) == VC_ERR_COMM, "split null comm");
    /* a negative color (not VC_UNDEFINED) on every rank: agreed error */
    vc_comm_t nc = VC_COMM_WORLD;
    CHECK(vc_comm_split(VC_COMM_WORLD, -5, 0, &nc) == VC_ERR_ARG && nc == VC_COMM_NULL,
          "negative color");
    /* still usable */
    int32_t one = 1, tot = 0;
    OK(vc_allreduce(&one, &tot, 1, VC_INT32, VC_SUM, VC_COMM_WORLD));
    CHECK(tot == size, "allreduce after errors: %d", tot);
    OK(vc_barrier(VC_COMM_WORLD));
}

int main(int argc, char **argv)
{
    if (vc_init(&argc, &argv) != VC_SUCCESS) {
        fprintf(stderr, "FAIL: vc_init\n");
        return 1;
    }
    vc_comm_rank(VC_COMM_WORLD, &rank);
    vc_comm_size(VC_COMM_WORLD, &size);

    test_all(VC_COMM_WORLD);
    test_stream(VC_COMM_WORLD);
    test_nonblocking();
    test_comms();
    test_errors();

    /* everyone agrees on the outcome */
    int32_t f = fails, tf = 0;
    if (vc_allreduce(&f, &tf, 1, VC_INT32, VC_SUM, VC_COMM_WORLD) != VC_SUCCESS)
        tf = 1;
    vc_finalize();
    if (tf) {
        if (!fails)
            fprintf(stderr, "FAIL: rank %d: another rank failed\n", rank);
        return 1;
    }
    if (rank == 0)
        printf("mp_coll: OK (np=%d)\n", size);
    return 0;
}
