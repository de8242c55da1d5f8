/*
 * mp_probe.c -- vc_probe / vc_iprobe and the multi-request completions
 * (vc_waitany, vc_testany, vc_testall): sizes on both sides of the eager
 * limit, wildcards, MPI's order between two messages of one pair, probed
 * messages received into exactly-sized buffers, collective traffic never
 * visible to a probe, null requests, completion order, bad arguments.
 * Self-checking; exits non-zero on any mismatch. Run with any np >= 1.
 */
#include "mp_util.h"

#define LIMIT_S 60.0    /* no loop here may spin longer than this */

static const size_t sizes[] = {0, 1, 100, 8191, 8192, 8193, 65536, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int next_of(void) { return (mp_rank + 1) % mp_size; }
static int prev_of(void) { return (mp_rank - 1 + mp_size) % mp_size; }

static void check_status(const char *what, const vc_status_t *st, int src, int tag, size_t bytes)
{
    if (st->source != src || st->tag != tag || st->bytes != bytes || st->error != VC_SUCCESS)
        FAIL("%s: status {src %d, tag %d, %zu bytes, err %d}, expected {%d, %d, %zu, 0}",
             what, st->source, st->tag, st->bytes, st->error, src, tag, bytes);
}

/* receive the probed message into a buffer of exactly its size, check it */
static void recv_probed(const char *what, const vc_status_t *pst, int dst_pattern)
{
    uint8_t *b = malloc(pst->bytes + 1);
    vc_status_t st;
    b[pst->bytes] = 0x77;
    OK(vc_recv(b, pst->bytes, VC_BYTE, pst->source, pst->tag, VC_COMM_WORLD, &st));
    check_status(what, &st, pst->source, pst->tag, pst->bytes);
    if (mp_verify(b, pst->source, dst_pattern, pst->bytes))
        FAIL("%s: %zu bytes from %d corrupted", what, pst->bytes, pst->source);
    if (b[pst->bytes] != 0x77)
        FAIL("%s: wrote past the probed size", what);
    free(b);
}

/* ring: probe (blocking, by source or ANY_SOURCE) reports every size */
static void probe_sizes(void)
{
    uint8_t *sb = malloc(sizes[NSIZES - 1]);
    for (size_t s = 0; s < NSIZES; s++) {
        size_t len = sizes[s];
        int tag = 100 + (int)s;
        vc_request_t r;
        vc_status_t st;
        mp_fill(sb, mp_rank, next_of(), len);
        OK(vc_isend(sb, len, VC_BYTE, next_of(), tag, VC_COMM_WORLD, &r));
        OK(vc_probe(s & 1 ? VC_ANY_SOURCE : prev_of(), s & 2 ? VC_ANY_TAG : tag,
                    VC_COMM_WORLD, &st));
        check_status("probe", &st, prev_of(), tag, len);
        /* probing again does not consume it */
        vc_status_t again;
        int flag = 0;
        OK(vc_iprobe(prev_of(), tag, VC_COMM_WORLD, &flag, &again));
        if (!flag)
            FAIL("iprobe after probe lost the message");
        else
            check_status("iprobe after probe", &again, prev_of(), tag, len);
        recv_probed("probe_sizes", &st, mp_rank);
        OK(vc_wait(&r, NULL));
    }
    free(sb);
    OK(vc_barrier(VC_COMM_WORLD));
}

/* two messages of one pair with one tag: the probe sees the older one,
   whatever the protocols (small then large, large then small) */
static void probe_order(void)
{
    static const size_t pairs[2][2] = {{100, 20000}, {300000, 5}};
    for (int k = 0; k < 2; k++) {
        uint8_t *a = malloc(pairs[k][0]), *b = malloc(pairs[k][1]);
        vc_request_t r[2];
        mp_fill(a, mp_rank, next_of(), pairs[k][0]);
        mp_fill(b, mp_rank, next_of(), pairs[k][1]);
        OK(vc_isend(a, pairs[k][0], VC_BYTE, next_of(), 7, VC_COMM_WORLD, &r[0]));
        OK(vc_isend(b, pairs[k][1], VC_BYTE, next_of(), 7, VC_COMM_WORLD, &r[1]));
        for (int m = 0; m < 2; m++) {
            vc_status_t st;
            OK(vc_probe(VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &st));
            check_status("probe_order", &st, prev_of(), 7, pairs[k][m]);
            recv_probed("probe_order", &st, mp_rank);
        }
        OK(vc_waitall(2, r, NULL));
        free(a);
        free(b);
    }
    OK(vc_barrier(VC_COMM_WORLD));
}

/* fan-in with ANY_SOURCE / ANY_TAG: the size tells the source */
static void probe_fan_in(void)
{
    if (mp_rank) {
        size_t len = (size_t)mp_rank * 5000 + 1;   /* eager and rendezvous */
        uint8_t *b = malloc(len);
        mp_fill(b, mp_rank, 0, len);
        OK(vc_send(b, len, VC_BYTE, 0, 1000 + mp_rank, VC_COMM_WORLD));
        free(b);
    } else {
        int *seen = calloc((size_t)mp_size, sizeof *seen);
        for (int k = 1; k < mp_size; k++) {
            vc_status_t st;
            OK(vc_probe(VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &st));
            if (st.source < 1 || st.source >= mp_size || seen[st.source]++) {
                FAIL("fan-in: probe reported source %d", st.source);
                break;
            }
            check_status("fan-in", &st, st.source, 1000 + st.source, (size_t)st.source * 5000 + 1);
            recv_probed("fan-in", &st, 0);
        }
        free(seen);
    }
    OK(vc_barrier(VC_COMM_WORLD));
}

/* iprobe: nothing before the message can exist, then poll until it is there */
static void iprobe_poll(void)
{
    int flag = 1, go = 0;
    vc_status_t st;
    OK(vc_iprobe(prev_of(), 55, VC_COMM_WORLD, &flag, &st));
    if (flag)
        FAIL("iprobe found a message that was never sent");
    /* prev sends only after this rank's iprobe above */
    OK(vc_sendrecv(&go, 1, VC_INT32, prev_of(), 56, &go, 1, VC_INT32, next_of(), 56,
                   VC_COMM_WORLD, VC_STATUS_IGNORE));
    uint8_t b[9000];
    mp_fill(b, mp_rank, next_of(), sizeof b);
    vc_request_t r;
    OK(vc_isend(b, sizeof b, VC_BYTE, next_of(), 55, VC_COMM_WORLD, &r));
    double end = vc_wtime() + LIMIT_S;
    flag = 0;
    while (!flag && vc_wtime() < end)
        OK(vc_iprobe(VC_ANY_SOURCE, 55, VC_COMM_WORLD, &flag, &st));
    if (!flag)
        FAIL("iprobe never saw the message");
    else {
        check_status("iprobe", &st, prev_of(), 55, sizeof b);
        recv_probed("iprobe", &st, mp_rank);
    }
    OK(vc_wait(&r, NULL));
    /* status may be ignored */
    flag = 1;
    OK(vc_iprobe(VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &flag, VC_STATUS_IGNORE));
    if (flag)
        FAIL("iprobe found a message after all were received");
    OK(vc_barrier(VC_COMM_WORLD));
}

/* Collective messages travel on the communicator's second context: a
   probe must never report one. Rank 0 roots a one-element bcast, whose
   first round goes out at once (at np=2 it is the one message, to rank 1),
   then sends rank 1 a p2p message; the pair's order puts the bcast message
   (eager or RTS) ahead of it in rank 1's unexpected queue. */
static void probe_skips_collectives(void)
{
    if (mp_size < 2)
        return;
    int v = mp_rank == 0 ? 4242 : 0, msg[3] = {1, 2, 3};
    if (mp_rank == 0) {
        /* not waiting for the bcast first: over rendezvous it would wait
           for rank 1, which probes for the p2p message */
        vc_request_t r[2];
        OK(vc_ibcast(&v, 1, VC_INT32, 0, VC_COMM_WORLD, &r[0]));
        OK(vc_isend(msg, 3, VC_INT32, 1, 9, VC_COMM_WORLD, &r[1]));
        OK(vc_waitall(2, r, NULL));
    } else if (mp_rank == 1) {
        vc_status_t st;
        int flag = 1;
        OK(vc_probe(0, VC_ANY_TAG, VC_COMM_WORLD, &st));
        check_status("probe beside a bcast", &st, 0, 9, sizeof msg);
        OK(vc_recv(msg, 3, VC_INT32, 0, 9, VC_COMM_WORLD, NULL));
        OK(vc_iprobe(VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &flag, &st));
        if (flag)
            FAIL("iprobe reported collective traffic (tag %d, %zu bytes)", st.tag, st.bytes);
    }
    /* non-blocking on every rank: as in MPI, a blocking collective does
       not match a non-blocking one (the blocking bcast may go through the
       node's shared segment instead of messages) */
    if (mp_rank != 0) {
        vc_request_t b;
        OK(vc_ibcast(&v, 1, VC_INT32, 0, VC_COMM_WORLD, &b));
        OK(vc_wait(&b, VC_STATUS_IGNORE));
    }
    if (v != 4242)
        FAIL("bcast beside probes gave %d", v);
    OK(vc_barrier(VC_COMM_WORLD));
}

static void expect_empty(const char *what, const vc_status_t *st)
{
    if (st->source != VC_ANY_SOURCE || st->tag != VC_ANY_TAG || st->bytes || st->error)
        FAIL("%s: status of nothing is {%d, %d, %zu, %d}", what, st->source, st->tag,
             st->bytes, st->error);
}

static void all_null(void)
{
    vc_request_t r[3] = {VC_REQUEST_NULL, VC_REQUEST_NULL, VC_REQUEST_NULL};
    vc_status_t st, sts[3];
    int idx = 5, flag = 0;
    OK(vc_waitany(3, r, &idx, &st));
    if (idx != VC_UNDEFINED)
        FAIL("waitany on nulls: index %d", idx);
    expect_empty("waitany on nulls", &st);
    OK(vc_waitany(0, NULL, &idx, NULL));
    if (idx != VC_UNDEFINED)
        FAIL("waitany of none: index %d", idx);
    idx = 5;
    OK(vc_testany(3, r, &idx, &flag, &st));
    if (!flag || idx != VC_UNDEFINED)
        FAIL("testany on nulls: flag %d index %d", flag, idx);
    expect_empty("testany on nulls", &st);
    flag = 0;
    OK(vc_testall(3, r, &flag, sts));
    if (!flag)
        FAIL("testall on nulls: flag 0");
    for (int i = 0; i < 3; i++)
        expect_empty("testall on nulls", &sts[i]);
    flag = 0;
    OK(vc_testall(0, NULL, &flag, NULL));
    if (!flag)
        FAIL("testall of none: flag 0");
}

/* waitany returns exactly the request that completed: prev sends tag k
   only after this rank has taken tag k-1 */
static void waitany_order(void)
{
    static const size_t len[4] = {0, 10, 20000, 0};   /* by tag 1..3 */
    static uint8_t in[4][20000], out[4][20000];
    vc_request_t r[5] = {VC_REQUEST_NULL};
    const int slot[4] = {-1, 3, 4, 1};                  /* tag -> array index */
    for (int t = 1; t <= 3; t++)
        OK(vc_irecv(in[t], len[t], VC_BYTE, prev_of(), t, VC_COMM_WORLD, &r[slot[t]]));
    for (int t = 1; t <= 3; t++) {
        vc_request_t s;
        int idx = -1, ack = 0;
        vc_status_t st;
        mp_fill(out[t], mp_rank, next_of(), len[t]);
        OK(vc_isend(out[t], len[t], VC_BYTE, next_of(), t, VC_COMM_WORLD, &s));
        OK(vc_waitany(5, r, &idx, &st));
        if (idx != slot[t])
            FAIL("waitany step %d: index %d, expected %d", t, idx, slot[t]);
        else if (r[idx] != VC_REQUEST_NULL)
            FAIL("waitany did not reset the request");
        check_status("waitany", &st, prev_of(), t, len[t]);
        if (mp_verify(in[t], prev_of(), mp_rank, len[t]))
            FAIL("waitany step %d: data", t);
        OK(vc_sendrecv(&ack, 1, VC_INT32, prev_of(), 60, &ack, 1, VC_INT32, next_of(), 60,
                       VC_COMM_WORLD, VC_STATUS_IGNORE));
        OK(vc_wait(&s, NULL));
    }
    int idx = 0;
    OK(vc_waitany(5, r, &idx, NULL));
    if (idx != VC_UNDEFINED)
        FAIL("waitany after all done: index %d", idx);
    OK(vc_barrier(VC_COMM_WORLD));
}

/* testany: nothing before the go, then the one posted receive */
static void testany_poll(void)
{
    int data = -1, go = 0, idx = 0, flag = 1;
    vc_request_t r[3] = {VC_REQUEST_NULL};
    vc_status_t st;
    OK(vc_irecv(&data, 1, VC_INT32, prev_of(), 70, VC_COMM_WORLD, &r[2]));
    OK(vc_testany(3, r, &idx, &flag, &st));
    if (flag || idx != VC_UNDEFINED)
        FAIL("testany before the send: flag %d index %d", flag, idx);
    OK(vc_sendrecv(&go, 1, VC_INT32, prev_of(), 71, &go, 1, VC_INT32, next_of(), 71,
                   VC_COMM_WORLD, VC_STATUS_IGNORE));
    int mine = mp_rank * 3 + 1;
    OK(vc_send(&mine, 1, VC_INT32, next_of(), 70, VC_COMM_WORLD));
    double end = vc_wtime() + LIMIT_S;
    flag = 0;
    while (!flag && vc_wtime() < end)
        OK(vc_testany(3, r, &idx, &flag, &st));
    if (!flag || idx != 2 || r[2] != VC_REQUEST_NULL)
        FAIL("testany: flag %d index %d", flag, idx);
    else
        check_status("testany", &st, prev_of(), 70, sizeof(int));
    if (data != prev_of() * 3 + 1)
        FAIL("testany: data %d", data);
    OK(vc_barrier(VC_COMM_WORLD));
}

/* testall is all or nothing: with one of two receives satisfied it frees
   nothing; tag 82 (probed) is sent after tag 80, so once it is visible tag
   80's receive has its data */
static void testall_partial(void)
{
    int a = -1, b = -1, go = 0, flag = 1, c;
    vc_request_t r[3] = {VC_REQUEST_NULL};
    vc_status_t sts[3];
    OK(vc_irecv(&a, 1, VC_INT32, prev_of(), 80, VC_COMM_WORLD, &r[0]));
    OK(vc_irecv(&b, 1, VC_INT32, prev_of(), 81, VC_COMM_WORLD, &r[2]));
    int x = mp_rank + 10, y = mp_rank + 20, z = mp_rank + 30;
    vc_request_t zr;   /* nobody receives tag 82 before the end */
    OK(vc_send(&x, 1, VC_INT32, next_of(), 80, VC_COMM_WORLD));
    OK(vc_isend(&z, 1, VC_INT32, next_of(), 82, VC_COMM_WORLD, &zr));
    vc_status_t pst;
    OK(vc_probe(prev_of(), 82, VC_COMM_WORLD, &pst));
    vc_request_t keep0 = r[0], keep2 = r[2];
    OK(vc_testall(3, r, &flag, sts));
    if (flag || r[0] != keep0 || r[2] != keep2)
        FAIL("testall with one receive open: flag %d, requests changed", flag);
    if (a != prev_of() + 10)
        FAIL("testall_partial: tag 80 not delivered before tag 82 (%d)", a);
    /* next sends tag 81 only after this rank's testall above */
    OK(vc_sendrecv(&go, 1, VC_INT32, prev_of(), 83, &go, 1, VC_INT32, next_of(), 83,
                   VC_COMM_WORLD, VC_STATUS_IGNORE));
    OK(vc_send(&y, 1, VC_INT32, next_of(), 81, VC_COMM_WORLD));
    double end = vc_wtime() + LIMIT_S;
    flag = 0;
    while (!flag && vc_wtime() < end)
        OK(vc_testall(3, r, &flag, sts));
    if (!flag || r[0] || r[2])
        FAIL("testall never completed");
    else {
        check_status("testall[0]", &sts[0], prev_of(), 80, sizeof(int));
        expect_empty("testall[1]", &sts[1]);
        check_status("testall[2]", &sts[2], prev_of(), 81, sizeof(int));
    }
    if (b != prev_of() + 20)
        FAIL("testall: data %d", b);
    OK(vc_recv(&c, 1, VC_INT32, prev_of(), 82, VC_COMM_WORLD, NULL));
    if (c != prev_of() + 30)
        FAIL("probed tag 82: data %d", c);
    OK(vc_wait(&zr, NULL));
    OK(vc_barrier(VC_COMM_WORLD));
}

/* an error of the completed request comes back from waitany / testany */
static void any_errors(void)
{
    char big[64], small[8];
    vc_request_t r[2] = {VC_REQUEST_NULL};
    vc_status_t st;
    int idx = -1;
    memset(big, 'x', sizeof big);
    OK(vc_irecv(small, sizeof small, VC_BYTE, prev_of(), 90, VC_COMM_WORLD, &r[1]));
    OK(vc_send(big, sizeof big, VC_BYTE, next_of(), 90, VC_COMM_WORLD));
    EXPECT_RC(vc_waitany(2, r, &idx, &st), VC_ERR_TRUNCATE);
    if (idx != 1 || st.error != VC_ERR_TRUNCATE || st.bytes != sizeof small || r[1])
        FAIL("waitany truncation: index %d error %d bytes %zu", idx, st.error, st.bytes);
    OK(vc_barrier(VC_COMM_WORLD));
}

static void bad_args(void)
{
    int x = 0, idx, flag;
    vc_status_t st;
    vc_request_t r[2] = {VC_REQUEST_NULL, VC_REQUEST_NULL};
    EXPECT_RC(vc_probe(mp_size, 0, VC_COMM_WORLD, &st), VC_ERR_RANK);
    EXPECT_RC(vc_probe(-2, 0, VC_COMM_WORLD, &st), VC_ERR_RANK);
    EXPECT_RC(vc_probe(0, -5, VC_COMM_WORLD, &st), VC_ERR_TAG);
    EXPECT_RC(vc_probe(0, VC_TAG_UB + 1, VC_COMM_WORLD, &st), VC_ERR_TAG);
    EXPECT_RC(vc_probe(0, 0, VC_COMM_NULL, &st), VC_ERR_COMM);
    EXPECT_RC(vc_iprobe(0, 0, VC_COMM_WORLD, NULL, &st), VC_ERR_ARG);
    EXPECT_RC(vc_iprobe(0, 0, (vc_comm_t)&x, &flag, &st), VC_ERR_COMM);
    EXPECT_RC(vc_iprobe(mp_size, VC_ANY_TAG, VC_COMM_WORLD, &flag, &st), VC_ERR_RANK);
    EXPECT_RC(vc_waitany(-1, r, &idx, &st), VC_ERR_ARG);
    EXPECT_RC(vc_waitany(2, NULL, &idx, &st), VC_ERR_ARG);
    EXPECT_RC(vc_waitany(2, r, NULL, &st), VC_ERR_ARG);
    EXPECT_RC(vc_testany(-1, r, &idx, &flag, &st), VC_ERR_ARG);
    EXPECT_RC(vc_testany(1, NULL, &idx, &flag, &st), VC_ERR_ARG);
    EXPECT_RC(vc_testany(2, r, NULL, &flag, &st), VC_ERR_ARG);
    EXPECT_RC(vc_testany(2, r, &idx, NULL, &st), VC_ERR_ARG);
    EXPECT_RC(vc_testall(-3, r, &flag, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_testall(4, NULL, &flag, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_testall(2, r, NULL, NULL), VC_ERR_ARG);
    /* an invalid entry, or one request given twice: refused before anything
       completes, and the live request is left intact */
    int v = 0;
    OK(vc_irecv(&v, 1, VC_INT32, mp_rank, 95, VC_COMM_WORLD, &r[0]));
    r[1] = (vc_request_t)&x;
    EXPECT_RC(vc_waitany(2, r, &idx, &st), VC_ERR_REQUEST);
    EXPECT_RC(vc_testany(2, r, &idx, &flag, &st), VC_ERR_REQUEST);
    EXPECT_RC(vc_testall(2, r, &flag, NULL), VC_ERR_REQUEST);
    EXPECT_RC(vc_waitall(2, r, NULL), VC_ERR_REQUEST);
    r[1] = r[0];
    EXPECT_RC(vc_testall(2, r, &flag, NULL), VC_ERR_REQUEST);
    EXPECT_RC(vc_waitany(2, r, &idx, &st), VC_ERR_REQUEST);
    EXPECT_RC(vc_waitall(2, r, NULL), VC_ERR_REQUEST);
    r[1] = VC_REQUEST_NULL;
    int w = 123;
    OK(vc_send(&w, 1, VC_INT32, mp_rank, 95, VC_COMM_WORLD));
    OK(vc_waitany(2, r, &idx, &st));
    if (idx != 0 || v != 123)
        FAIL("request after refused calls: index %d value %d", idx, v);
    /* a freed request is stale */
    vc_request_t stale[1], rr;
    OK(vc_irecv(&v, 1, VC_INT32, mp_rank, 96, VC_COMM_WORLD, &rr));
    OK(vc_isend(&w, 1, VC_INT32, mp_rank, 96, VC_COMM_WORLD, &stale[0]));
    vc_request_t copy = stale[0];
    OK(vc_waitany(1, stale, &idx, NULL));
    OK(vc_wait(&rr, NULL));
    stale[0] = copy;
    EXPECT_RC(vc_testany(1, stale, &idx, &flag, NULL), VC_ERR_REQUEST);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    probe_sizes();
    probe_order();
    probe_fan_in();
    iprobe_poll();
    probe_skips_collectives();
    all_null();
    waitany_order();
    testany_poll();
    testall_partial();
    any_errors();
    bad_args();
    return mp_finish("mp_probe");
}
