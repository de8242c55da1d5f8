/*
 * mp_p2p.c -- every point-to-point call across the eager/rendezvous switch,
 * wildcards, ordering, truncation, bad arguments and deep queues.
 * Self-checking; exits non-zero on any mismatch. Run with any np >= 1.
 */
#include <unistd.h>
#include "mp_util.h"

static const size_t sizes[] = {0, 1, 7, 64, 1000, 4096, 8191, 8192, 8193, 12345,
                               65536, 65537, 262144, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* every pair, every size, both directions at once (isend/irecv/waitall) */
static void all_pairs(void)
{
    size_t max = sizes[NSIZES - 1];
    uint8_t **sb = calloc((size_t)mp_size, sizeof *sb), **rb = calloc((size_t)mp_size, sizeof *rb);
    vc_request_t *rq = calloc((size_t)mp_size * 2, sizeof *rq);
    vc_status_t *st = calloc((size_t)mp_size * 2, sizeof *st);
    for (int p = 0; p < mp_size; p++) {
        sb[p] = malloc(max);
        rb[p] = malloc(max);
    }
    for (size_t s = 0; s < NSIZES; s++) {
        size_t len = sizes[s];
        int n = 0;
        for (int p = 0; p < mp_size; p++) {
            memset(rb[p], 0xee, len);
            OK(vc_irecv(rb[p], len, VC_BYTE, p, (int)s, VC_COMM_WORLD, &rq[n++]));
        }
        for (int p = 0; p < mp_size; p++) {
            mp_fill(sb[p], mp_rank, p, len);
            OK(vc_isend(sb[p], len, VC_BYTE, p, (int)s, VC_COMM_WORLD, &rq[n++]));
        }
        OK(vc_waitall(n, rq, st));
        for (int p = 0; p < mp_size; p++) {
            size_t bad = mp_verify(rb[p], p, mp_rank, len);
            if (bad)
                FAIL("all_pairs: %zu bytes from %d: byte %zu wrong", len, p, bad - 1);
            if (st[p].source != p || st[p].tag != (int)s || st[p].bytes != len || st[p].error)
                FAIL("all_pairs: status {%d,%d,%zu,%d} for %zu bytes from %d", st[p].source,
                     st[p].tag, st[p].bytes, st[p].error, len, p);
            if (rq[p] != VC_REQUEST_NULL)
                FAIL("waitall did not reset the request");
        }
    }
    for (int p = 0; p < mp_size; p++) {
        free(sb[p]);
        free(rb[p]);
    }
    free(sb); free(rb); free(rq); free(st);
}

/* blocking send/recv in a ring, sendrecv, and vc_test polling */
static void ring(void)
{
    int next = (mp_rank + 1) % mp_size, prev = (mp_rank - 1 + mp_size) % mp_size;
    for (size_t s = 0; s < NSIZES; s++) {
        size_t len = sizes[s];
        uint8_t *a = malloc(len + 1), *b = malloc(len + 1);
        mp_fill(a, mp_rank, next, len);
        vc_status_t st;
        OK(vc_sendrecv(a, len, VC_BYTE, next, 5, b, len, VC_BYTE, prev, 5, VC_COMM_WORLD, &st));
        if (mp_verify(b, prev, mp_rank, len) || st.bytes != len || st.source != prev)
            FAIL("sendrecv ring %zu bytes", len);
        /* even ranks send first, odd receive first: blocking calls only
         * (not with one rank: a blocking rendezvous send to oneself before
         * the receive is posted deadlocks, as in MPI) */
        memset(b, 0, len);
        if (mp_size == 1) {
            OK(vc_sendrecv(a, len, VC_BYTE, next, 6, b, len, VC_BYTE, prev, 6, VC_COMM_WORLD, &st));
        } else if (mp_rank % 2 == 0) {
            OK(vc_send(a, len, VC_BYTE, next, 6, VC_COMM_WORLD));
            OK(vc_recv(b, len, VC_BYTE, prev, 6, VC_COMM_WORLD, &st));
        } else {
            OK(vc_recv(b, len, VC_BYTE, prev, 6, VC_COMM_WORLD, &st));
            OK(vc_send(a, len, VC_BYTE, next, 6, VC_COMM_WORLD));
        }
        if (mp_verify(b, prev, mp_rank, len))
            FAIL("send/recv ring %zu bytes", len);
        /* vc_test until done */
        vc_request_t r, s2;
        OK(vc_irecv(b, len, VC_BYTE, prev, 7, VC_COMM_WORLD, &r));
        OK(vc_isend(a, len, VC_BYTE, next, 7, VC_COMM_WORLD, &s2));
        int fr = 0, fs = 0;
        long spins = 0;
        while ((!fr || !fs) && spins < 200000000L) {
            if (!fr) OK(vc_test(&r, &fr, &st));
            if (!fs) OK(vc_test(&s2, &fs, NULL));
            spins++;
        }
        if (!fr || !fs || r != VC_REQUEST_NULL || mp_verify(b, prev, mp_rank, len))
            FAIL("vc_test ring %zu bytes", len);
        free(a);
        free(b);
    }
}

/* rank 0 receives one message from everyone with ANY_SOURCE / ANY_TAG */
static void wildcards(void)
{
    if (mp_rank == 0) {
        int *seen = calloc((size_t)mp_size, sizeof *seen);
        for (int i = 1; i < mp_size; i++) {
            int v[2];
            vc_status_t st;
            OK(vc_recv(v, 2, VC_INT32, VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &st));
            if (st.source < 1 || st.source >= mp_size || v[0] != st.source ||
                st.tag != 1000 + st.source || st.bytes != 2 * sizeof(int) || v[1] != -st.source)
                FAIL("wildcard: got {%d,%d} status src %d tag %d", v[0], v[1], st.source, st.tag);
            else
                seen[st.source]++;
        }
        for (int i = 1; i < mp_size; i++)
            if (seen[i] != 1)
                FAIL("wildcard: rank %d seen %d times", i, seen[i]);
        free(seen);
        /* release the others only now: their next messages would match too */
        for (int i = 1; i < mp_size; i++)
            OK(vc_send(NULL, 0, VC_BYTE, i, 1, VC_COMM_WORLD));
    } else {
        int v[2] = {mp_rank, -mp_rank};
        OK(vc_send(v, 2, VC_INT32, 0, 1000 + mp_rank, VC_COMM_WORLD));
        OK(vc_recv(NULL, 0, VC_BYTE, 0, 1, VC_COMM_WORLD, NULL));
    }
}

/* many messages on one tag, alternating eager and rendezvous sizes, sent
 * before the receiver posts: must arrive in order */
static void ordering(void)
{
    enum { N = 200 };
    int next = (mp_rank + 1) % mp_size, prev = (mp_rank - 1 + mp_size) % mp_size;
    size_t big = 40000;
    uint8_t *out = malloc(big * N / 10 + N * 8), *in = malloc(big);
    vc_request_t rq[N];
    size_t off = 0;
    for (int i = 0; i < N; i++) {
        size_t len = i % 10 == 3 ? big : 4;
        uint8_t *p = out + off;
        memset(p, 0, len);
        memcpy(p, &i, sizeof i);
        off += len;
        OK(vc_isend(p, len, VC_BYTE, next, 77, VC_COMM_WORLD, &rq[i]));
    }
    mp_sync();   /* the receiver has everything as unexpected or in flight */
    for (int i = 0; i < N; i++) {
        vc_status_t st;
        int tag = i % 2 ? VC_ANY_TAG : 77;
        OK(vc_recv(in, big, VC_BYTE, i % 3 ? prev : VC_ANY_SOURCE, tag, VC_COMM_WORLD, &st));
        int seq;
        memcpy(&seq, in, sizeof seq);
        if (seq != i || st.bytes != (i % 10 == 3 ? big : 4))
            FAIL("ordering: expected message %d, got %d (%zu bytes)", i, seq, st.bytes);
    }
    OK(vc_waitall(N, rq, NULL));
    free(out);
    free(in);
}

/* truncated receives: error reported, nothing written past the buffer, and
 * the next message still arrives */
static void truncation(void)
{
    if (mp_size < 2 || mp_rank > 1)
        return;
    /* 3 MiB into a third: a receive that big is copied by both ends on
       shm (split copies), and the part the sender would copy is cut short */
    size_t lens[] = {100, 8000, 300000, 3u << 20};
    uint8_t *b = malloc((3u << 20) + 64);
    for (size_t k = 0; k < 4; k++) {
        size_t len = lens[k];
        if (mp_rank == 1) {
            mp_fill(b, 1, 0, len);
            OK(vc_send(b, len, VC_BYTE, 0, 55, VC_COMM_WORLD));
            OK(vc_send(b, len, VC_BYTE, 0, 56, VC_COMM_WORLD));
        } else {
            size_t cap = len / 3;
            memset(b, 0xa5, len + 64);
            vc_status_t st;
            EXPECT_RC(vc_recv(b, cap, VC_BYTE, 1, 55, VC_COMM_WORLD, &st), VC_ERR_TRUNCATE);
            size_t badbyte = 0;
            for (size_t i = 0; i < cap && !badbyte; i++)
                if (b[i] != mp_pat(1, 0, len, i))
                    badbyte = i + 1;
            if (st.error != VC_ERR_TRUNCATE || st.bytes != cap || badbyte ||
                b[cap] != 0xa5 || b[len - 1] != 0xa5)
                FAIL("truncation of %zu into %zu: status %d/%zu, guard %02x", len, cap,
                     st.error, st.bytes, b[cap]);
            OK(vc_recv(b, len, VC_BYTE, 1, 56, VC_COMM_WORLD, &st));
            if (mp_verify(b, 1, 0, len))
                FAIL("message after truncation corrupted (%zu bytes)", len);
        }
    }
    free(b);
}

/* a deep queue: 256 outstanding sends per peer overflow the shm rings */
static void deep_queue(void)
{
    enum { N = 256 };
    int next = (mp_rank + 1) % mp_size, prev = (mp_rank - 1 + mp_size) % mp_size;
    static int out[N][64], in[N][64];
    vc_request_t sr[N], rr[N];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < 64; j++)
            out[i][j] = mp_rank * 100000 + i * 64 + j;
        OK(vc_isend(out[i], 64, VC_INT32, next, 9, VC_COMM_WORLD, &sr[i]));
    }
    for (int i = 0; i < N; i++)
        OK(vc_irecv(in[i], 64, VC_INT32, prev, 9, VC_COMM_WORLD, &rr[i]));
    OK(vc_waitall(N, rr, NULL));
    OK(vc_waitall(N, sr, NULL));
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 64; j++)
            if (in[i][j] != prev * 100000 + i * 64 + j) {
                FAIL("deep queue message %d word %d", i, j);
                return;
            }
}

static void bad_args(void)
{
    int x = 0;
    vc_request_t r;
    EXPECT_RC(vc_send(&x, 1, VC_INT32, mp_size, 0, VC_COMM_WORLD), VC_ERR_RANK);
    EXPECT_RC(vc_recv(&x, 1, VC_INT32, -3, 0, VC_COMM_WORLD, NULL), VC_ERR_RANK);
    EXPECT_RC(vc_isend(&x, 1, VC_INT32, 0, VC_TAG_UB + 1, VC_COMM_WORLD, &r), VC_ERR_TAG);
    EXPECT_RC(vc_irecv(NULL, 4, VC_INT32, 0, 0, VC_COMM_WORLD, &r), VC_ERR_BUFFER);
    EXPECT_RC(vc_send(&x, 1, (vc_dtype_t)-1, 0, 0, VC_COMM_WORLD), VC_ERR_DTYPE);
    EXPECT_RC(vc_send(&x, (size_t)-1, VC_DOUBLE, 0, 0, VC_COMM_WORLD), VC_ERR_COUNT);
    EXPECT_RC(vc_send(&x, 1, VC_INT32, 0, 0, (vc_comm_t)&x), VC_ERR_COMM);
    vc_request_t garbage = (vc_request_t)&x;
    EXPECT_RC(vc_wait(&garbage, NULL), VC_ERR_REQUEST);
}

/* a big message between the first and last rank */
static void huge(size_t len)
{
    if (mp_size < 2 || (mp_rank != 0 && mp_rank != mp_size - 1))
        return;
    uint8_t *b = malloc(len);
    if (!b) {
        FAIL("malloc %zu", len);
        return;
    }
    int peer = mp_rank == 0 ? mp_size - 1 : 0;
    if (mp_rank == 0) {
        mp_fill(b, 0, peer, len);
        OK(vc_send(b, len, VC_BYTE, peer, 3, VC_COMM_WORLD));
    } else {
        memset(b, 0, len);
        vc_status_t st;
        OK(vc_recv(b, len, VC_BYTE, 0, 3, VC_COMM_WORLD, &st));
        if (st.bytes != len || mp_verify(b, 0, mp_rank, len))
            FAIL("huge message of %zu bytes corrupted", len);
    }
    free(b);
}

/* A large message whose sender is away (computing, outside the library)
   right after posting it: the receive must finish whole. Where the
   receiver pulls the data (CMA on shm, RDMA READ on rc) it must also
   finish on its own, within MP_ABSENT_MAX_MS when that is set: on shm the
   receiver asks the sender to copy half (split copies) and must take that
   half back rather than wait for the sender's return. (Streamed
   transports -- ud, shm with CMA off -- need the sender: no bound.) */
static void absent_sender(void)
{
    const size_t len = 2u << 20;
    const double away = 0.3;
    const char *bound = getenv("MP_ABSENT_MAX_MS");
    if (mp_size < 2 || (mp_rank != 0 && mp_rank != mp_size - 1))
        return;
    uint8_t *b = malloc(len);
    if (!b) {
        FAIL("malloc %zu", len);
        return;
    }
    int peer = mp_rank == 0 ? mp_size - 1 : 0;
    if (mp_rank == 0) {
        vc_request_t rq;
        mp_fill(b, 0, peer, len);
        OK(vc_isend(b, len, VC_BYTE, peer, 4, VC_COMM_WORLD, &rq));
        usleep((useconds_t)(away * 1e6));
        OK(vc_wait(&rq, VC_STATUS_IGNORE));
    } else {
        memset(b, 0, len);
        vc_status_t st;
        double t0 = vc_wtime();
        OK(vc_recv(b, len, VC_BYTE, 0, 4, VC_COMM_WORLD, &st));
        double t = vc_wtime() - t0;
        if (st.bytes != len || mp_verify(b, 0, mp_rank, len))
            FAIL("message from an absent sender corrupted");
        if (bound && t * 1e3 > atof(bound))
            FAIL("receive of %zu bytes waited %.0f ms for its sender to come back", len,
                 t * 1e3);
    }
    free(b);
}

/* A window of rendezvous messages whose receives are all posted first
   (OSU's bw pattern): on shm their pulls are batched, one system call for
   the messages a burst of the ring announces (shm.c). Every length differs
   (the pattern depends on it), some pass the batch's size limit and go
   alone, every seventh receive is cut to a third; the buffers lie back to
   back with a guard byte after each, so a copy into the wrong place or
   past its end shows. */
static void rndv_window(void)
{
    enum { W = 48 };
    int next = (mp_rank + 1) % mp_size, prev = (mp_rank - 1 + mp_size) % mp_size;
    size_t len[W], cap[W], off[W + 1], total = 0;
    for (int i = 0; i < W; i++) {
        len[i] = 4097 + (size_t)i * 1361 + (i % 5 == 4 ? 70000 : 0);
        cap[i] = i % 7 == 6 ? len[i] / 3 : len[i];
        off[i] = total;
        total += len[i];
    }
    uint8_t *sb = malloc(total), *rb = malloc(total + W);
    vc_request_t sr[W], rr[W];
    if (!sb || !rb) {
        FAIL("malloc %zu", total);
        free(sb);
        free(rb);
        return;
    }
    memset(rb, 0xa5, total + W);
    for (int i = 0; i < W; i++)
        OK(vc_irecv(rb + off[i] + (size_t)i, cap[i], VC_BYTE, prev, 70 + i, VC_COMM_WORLD,
                    &rr[i]));
    /* filled first, then sent back to back: announcements spaced by a
       fill each would be read one per look, and no burst would carry
       several (VCOLL_FAULT_SHM_PULL=refuse@batch, p2p.list, needs some) */
    for (int i = 0; i < W; i++)
        mp_fill(sb + off[i], mp_rank, next, len[i]);
    mp_sync();
    for (int i = 0; i < W; i++)
        OK(vc_isend(sb + off[i], len[i], VC_BYTE, next, 70 + i, VC_COMM_WORLD, &sr[i]));
    for (int i = 0; i < W; i++) {
        vc_status_t st;
        const uint8_t *b = rb + off[i] + (size_t)i;
        int want = cap[i] < len[i] ? VC_ERR_TRUNCATE : VC_SUCCESS;
        EXPECT_RC(vc_wait(&rr[i], &st), want);
        size_t bad = 0;
        for (size_t k = 0; k < cap[i] && !bad; k++)
            if (b[k] != mp_pat(prev, mp_rank, len[i], k))
                bad = k + 1;
        if (bad || b[cap[i]] != 0xa5 || st.bytes != cap[i] || st.error != want)
            FAIL("window message %d (%zu bytes into %zu): byte %zu wrong, guard %02x, "
                 "status %d/%zu", i, len[i], cap[i], bad - 1, b[cap[i]], st.error, st.bytes);
    }
    OK(vc_waitall(W, sr, NULL));
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    size_t huge_len = 64u << 20;
    const char *h = getenv("MP_HUGE");
    if (h)
        huge_len = strtoull(h, NULL, 0);
    all_pairs();
    mp_sync();
    ring();
    mp_sync();
    wildcards();
    mp_sync();
    ordering();
    mp_sync();
    truncation();
    mp_sync();
    deep_queue();
    mp_sync();
    rndv_window();
    mp_sync();
    bad_args();
    huge(huge_len);
    mp_sync();
    absent_sender();
    mp_sync();
    return mp_finish("mp_p2p");
}
