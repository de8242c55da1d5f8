/*
 * mp_coll_gather.c -- gather, gatherv, scatter, scatterv and allgatherv
 * across processes, blocking and non-blocking (run under mpirun, any np).
 *
 * Each element is a function of (comm rank of its owner, index), so every
 * rank can compute what it must receive on its own. Every call runs with
 * every root, in place and not, with counts 0/1/odd/rendezvous-sized; the
 * v-forms get zero blocks and reversed displacements with gaps (the gaps
 * must come back untouched), and non-roots pass NULL count arrays as MPI
 * allows. The same runs on a vc_comm_split sub-communicator, non-blocking
 * calls overlap each other, and bad arguments return the documented codes
 * with the job still working afterwards.
 *
 * With VCOLL_ALLGATHERV_ALG=shm on one node, every blocking allgatherv on a
 * communicator of two or more must have gone through its segment (the
 * library's counter says so), so the test cannot pass on another algorithm.
 * With VCOLL_{GATHER,GATHERV,SCATTER,SCATTERV}_ALG=flags on one node, every
 * blocking call of those on the world that the node's slots can hold (the
 * vector forms: any, big blocks go by message) must have gone through them.
 * Counts that disagree between ranks must end in VC_ERR_TRUNCATE on the
 * receiving side, with nothing written past its block (test_mismatch).
 */
#include "mp_util.h"
#include "coll/coll.h"
#include "coll/shm_run.h"
#include "net/net.h"

#define GAP (-7)    /* never a value: marks slots nobody may write */

static int32_t val(int owner, size_t i) { return (int32_t)(owner * 100003 + (int)i * 3 + 1); }

static int agv_shm;     /* VCOLL_ALLGATHERV_ALG=shm and the job on one node */
static int agv_flags;   /* VCOLL_ALLGATHERV_ALG=flags and the job on one node */
static int rooted_flags;    /* VCOLL_GATHERV_ALG=flags (the test forces all four) */

/* a blocking rooted call of kind and count int32 per rank just ran (the
   library's counter was `before`): forced to flags, it must have taken
   the node's slots wherever they can serve it */
static void check_flags(vc_comm_t comm, int kind, size_t count, uint64_t before,
                        const char *what)
{
    int p;
    vc_comm_size(comm, &p);
    if (count == 0 && !coll_kind_vector(kind)) {
        /* nothing to move: the blocking call returns at once on every rank */
        if (coll_shm_calls(comm, kind) != before)
            FAIL("%s of count 0 ran through the node's slots: it has nothing to move", what);
        return;
    }
    int fits = coll_flags_need(kind, count * 4, 0, p) <= NET_SHM_SLOT_BYTES - 8;
    if (rooted_flags && comm == VC_COMM_WORLD && p > 1 && fits &&
        coll_shm_calls(comm, kind) != before + 1)
        FAIL("%s forced to flags did not run through the node's slots", what);
}


/* a blocking allgatherv, checked to have taken the segment when forced */
static int allgatherv_b(const void *s, size_t n, void *r, const size_t *cnt, const size_t *dsp,
                        vc_comm_t comm)
{
    int p;
    vc_comm_size(comm, &p);
    uint64_t before = coll_shm_calls(comm, COLL_ALLGATHERV);
    int rc = vc_allgatherv(s, n, r, cnt, dsp, VC_INT32, comm);
    if (!rc && agv_shm && p > 1 && coll_shm_calls(comm, COLL_ALLGATHERV) != before + 1)
        FAIL("allgatherv forced to shm did not run through the segment");
    /* forced to flags: through the node's slots wherever the result fits
       one (the world only) */
    size_t total = 0;
    for (int q = 0; q < p; q++)
        total += cnt[q] * 4;
    if (!rc && agv_flags && p > 1 && comm == VC_COMM_WORLD && total <= NET_SHM_SLOT_BYTES - 8 &&
        coll_shm_calls(comm, COLL_ALLGATHERV) != before + 1)
        FAIL("allgatherv forced to flags did not run through the node's slots");
    return rc;
}

/* blocking or non-blocking (started and waited at once) by it's parity */
static int done(int rc, vc_request_t *rq, int nb)
{
    if (rc || !nb)
        return rc;
    return vc_wait(rq, VC_STATUS_IGNORE);
}

static void check_block(const int32_t *b, int owner, size_t n, const char *what, int root,
                        int nb)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != val(owner, i)) {
            FAIL("%s root %d nb %d: block of %d elem %zu = %d want %d", what, root, nb,
                 owner, i, b[i], val(owner, i));
            return;
        }
}

static void check_gap(const int32_t *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != GAP) {
            FAIL("%s: gap element %zu written (%d)", what, i, b[i]);
            return;
        }
}

static void test_gather_scatter(vc_comm_t comm, size_t count, int nb)
{
    int me, p;
    vc_request_t rq;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t all = count * (size_t)p;
    int32_t *s = malloc((count + 1) * sizeof *s), *r = malloc((all + 1) * sizeof *r);
    for (int root = 0; root < p; root++) {
        for (int ip = 0; ip < 2; ip++) {
            /* gather */
            for (size_t i = 0; i < count; i++)
                s[i] = val(me, i);
            for (size_t i = 0; i < all; i++)
                r[i] = me == root && ip && i / count == (size_t)me ? val(me, i % count) : GAP;
            const void *sb = me == root && ip ? VC_IN_PLACE : s;
            uint64_t before = coll_shm_calls(comm, COLL_GATHER);
            OK(done(nb ? vc_igather(sb, me == root ? r : NULL, count, VC_INT32, root, comm, &rq)
                       : vc_gather(sb, me == root ? r : NULL, count, VC_INT32, root, comm),
                    &rq, nb));
            if (!nb)
                check_flags(comm, COLL_GATHER, count, before, "gather");
            for (int q = 0; q < p && me == root; q++)
                check_block(r + (size_t)q * count, q, count, ip ? "gather in place" : "gather",
                            root, nb);
            /* scatter: the root's blocks are what each rank must get */
            for (size_t i = 0; i < all; i++)
                r[i] = val((int)(i / count), i % count);
            for (size_t i = 0; i < count; i++)
                s[i] = GAP;
            void *rb = me == root && ip ? VC_IN_PLACE : s;
            before = coll_shm_calls(comm, COLL_SCATTER);
            OK(done(nb ? vc_iscatter(me == root ? r : NULL, rb, count, VC_INT32, root, comm, &rq)
                       : vc_scatter(me == root ? r : NULL, rb, count, VC_INT32, root, comm),
                    &rq, nb));
            if (!nb)
                check_flags(comm, COLL_SCATTER, count, before, "scatter");
            if (!(me == root && ip))
                check_block(s, me, count, "scatter", root, nb);
            if (me == root)   /* the send buffer is read only */
                for (int q = 0; q < p; q++)
                    check_block(r + (size_t)q * count, q, count, "scatter sbuf", root, nb);
        }
    }
    free(s);
    free(r);
}

/* counts with zeros (big: one rendezvous-sized block), reversed displs with
   gaps; returns the extent */
static size_t layout(int p, int shape, size_t *cnt, size_t *dsp)
{
    size_t off = 1;
    for (int j = 0; j < p; j++)
        cnt[j] = shape == 0 ? 0 : shape == 1 ? (size_t)((j * 5 + 1) % 4)
                                             : (j == p / 2 ? 30000 : (size_t)(j % 3));
    for (int j = p - 1; j >= 0; j--) {
        dsp[j] = off;
        off += cnt[j] + (size_t)(j % 2);
    }
    return off + 1;
}

/* expected content of a big v-buffer: blocks at their displacements, GAP elsewhere */
static void check_vbuf(const int32_t *b, int p, const size_t *cnt, const size_t *dsp,
                       size_t ext, const char *what, int root, int nb)
{
    int32_t *want = malloc(ext * sizeof *want);
    for (size_t i = 0; i < ext; i++)
        want[i] = GAP;
    for (int q = 0; q < p; q++)
        for (size_t i = 0; i < cnt[q]; i++)
            want[dsp[q] + i] = val(q, i);
    for (size_t i = 0; i < ext; i++)
        if (b[i] != want[i]) {
            FAIL("%s root %d nb %d: element %zu = %d want %d", what, root, nb, i, b[i], want[i]);
            break;
        }
    free(want);
}

static void test_v(vc_comm_t comm, int shape, int nb)
{
    int me, p;
    vc_request_t rq;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t *cnt = malloc((size_t)p * sizeof *cnt), *dsp = malloc((size_t)p * sizeof *dsp);
    size_t ext = layout(p, shape, cnt, dsp), mine = cnt[me];
    int32_t *big = malloc(ext * sizeof *big), *s = malloc((mine + 1) * sizeof *s);

    for (int root = 0; root < p; root++)
        for (int ip = 0; ip < 2; ip++) {
            int rip = ip && me == root;
            /* gatherv: non-roots pass no arrays */
            for (size_t i = 0; i < mine; i++)
                s[i] = val(me, i);
            for (size_t i = 0; i < ext; i++)
                big[i] = GAP;
            if (rip)
                memcpy(big + dsp[me], s, mine * sizeof *s);
            const size_t *rc = me == root ? cnt : NULL, *rd = me == root ? dsp : NULL;
            const void *sb = rip ? VC_IN_PLACE : s;
            uint64_t before = coll_shm_calls(comm, COLL_GATHERV);
            OK(done(nb ? vc_igatherv(sb, mine, me == root ? big : NULL, rc, rd, VC_INT32, root,
                                     comm, &rq)
                       : vc_gatherv(sb, mine, me == root ? big : NULL, rc, rd, VC_INT32, root,
                                    comm), &rq, nb));
            if (!nb)
                check_flags(comm, COLL_GATHERV, 0, before, "gatherv");
            if (me == root)
                check_vbuf(big, p, cnt, dsp, ext, "gatherv", root, nb);
            /* scatterv from the buffer just gathered (gaps stay GAP) */
            for (size_t i = 0; i < mine; i++)
                s[i] = GAP;
            if (me != root)
                for (size_t i = 0; i < ext; i++)
                    big[i] = GAP;
            void *rb = rip ? VC_IN_PLACE : s;
            before = coll_shm_calls(comm, COLL_SCATTERV);
            OK(done(nb ? vc_iscatterv(me == root ? big : NULL, rc, rd, rb, mine, VC_INT32, root,
                                      comm, &rq)
                       : vc_scatterv(me == root ? big : NULL, rc, rd, rb, mine, VC_INT32, root,
                                     comm), &rq, nb));
            if (!nb)
                check_flags(comm, COLL_SCATTERV, 0, before, "scatterv");
            if (!rip)
                check_block(s, me, mine, "scatterv", root, nb);
            if (me == root)
                check_vbuf(big, p, cnt, dsp, ext, "scatterv sbuf", root, nb);
            else
                check_gap(big, ext, "scatterv non-root sbuf");
        }
    /* allgatherv, in place and not */
    for (int ip = 0; ip < 2; ip++) {
        for (size_t i = 0; i < mine; i++)
            s[i] = val(me, i);
        for (size_t i = 0; i < ext; i++)
            big[i] = GAP;
        if (ip)
            memcpy(big + dsp[me], s, mine * sizeof *s);
        OK(done(nb ? vc_iallgatherv(ip ? VC_IN_PLACE : s, mine, big, cnt, dsp, VC_INT32, comm,
                                    &rq)
                   : allgatherv_b(ip ? VC_IN_PLACE : s, mine, big, cnt, dsp, comm),
                &rq, nb));
        check_vbuf(big, p, cnt, dsp, ext, ip ? "allgatherv in place" : "allgatherv", -1, nb);
    }
    free(cnt);
    free(dsp);
    free(big);
    free(s);
}

/* The same count and displacement arrays, rewritten in place between
   blocking calls: each round keeps every rank's count (so a non-root's own
   arguments never change) but moves the blocks (round 1 reverses their
   order, round 2 adds gaps, round 3 swaps two counts). A blocking v-call
   may reuse a schedule only when the arrays' contents match, not their
   address. */
static void test_v_rewritten(vc_comm_t comm)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t *cnt = malloc((size_t)p * sizeof *cnt), *dsp = malloc((size_t)p * sizeof *dsp);
    size_t ext = 0, cap = (size_t)p * 8 + 16;
    int32_t *big = malloc(cap * sizeof *big), s[8];
    for (int round = 0; round < 4; round++) {
        size_t off = 0;
        for (int j = 0; j < p; j++)
            cnt[j] = (size_t)(j % 3) + 1;
        if (round == 3 && p > 1) {      /* the last two ranks' counts swap */
            size_t t = cnt[p - 1];
            cnt[p - 1] = cnt[p - 2];
            cnt[p - 2] = t;
        }
        for (int i = 0; i < p; i++) {
            int j = round == 1 ? p - 1 - i : i;
            dsp[j] = off;
            off += cnt[j] + (round >= 2 ? (size_t)(j % 2) + 1 : 0);
        }
        ext = off;
        size_t mine = cnt[me];
        int root = round % p;
        for (size_t i = 0; i < mine; i++)
            s[i] = val(me, i);
        for (size_t i = 0; i < cap; i++)
            big[i] = GAP;
        int rt = me == root;
        OK(vc_gatherv(s, mine, rt ? big : NULL, rt ? cnt : NULL, rt ? dsp : NULL, VC_INT32,
                      root, comm));
        if (rt)
            check_vbuf(big, p, cnt, dsp, ext, "gatherv, arrays rewritten", root, round);
        for (size_t i = 0; i < mine; i++)
            s[i] = GAP;
        OK(vc_scatterv(rt ? big : NULL, rt ? cnt : NULL, rt ? dsp : NULL, s, mine, VC_INT32,
                       root, comm));
        check_block(s, me, mine, "scatterv, arrays rewritten", root, round);
        for (size_t i = 0; i < mine; i++)
            s[i] = val(me, i);
        for (size_t i = 0; i < cap; i++)
            big[i] = GAP;
        OK(allgatherv_b(s, mine, big, cnt, dsp, comm));
        check_vbuf(big, p, cnt, dsp, ext, "allgatherv, arrays rewritten", -1, round);
    }
    free(cnt);
    free(dsp);
    free(big);
}

static void test_comm(vc_comm_t comm)
{
    /* 6000 and 16384: fan-in eager sizes, 24000 bytes (non-blocking) and
       64 KiB (blocking), where ranks outnumber the cores on shm */
    size_t counts[] = {0, 1, 7, 1001, 20000, 6000, 16384};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
        test_gather_scatter(comm, counts[c], (int)c % 2);
    for (int shape = 0; shape < 3; shape++)
        for (int nb = 0; nb < 2; nb++)
            test_v(comm, shape, nb);
    test_v_rewritten(comm);
}

/* three non-blocking calls in flight at once, completed in reverse order */
static void test_overlap(void)
{
    int p = mp_size, me = mp_rank;
    size_t n = 333;
    int32_t *s = malloc(n * sizeof *s), *g = malloc(n * (size_t)p * sizeof *g);
    int32_t *sc = malloc(n * (size_t)p * sizeof *sc), *sr = malloc(n * sizeof *sr);
    int32_t *ag = malloc(n * (size_t)p * sizeof *ag);
    size_t *cnt = malloc((size_t)p * sizeof *cnt), *dsp = malloc((size_t)p * sizeof *dsp);
    vc_request_t rq[3];
    for (size_t i = 0; i < n; i++)
        s[i] = val(me, i);
    for (size_t i = 0; i < n * (size_t)p; i++)
        sc[i] = val((int)(i / n), i % n);
    for (int q = 0; q < p; q++) {
        cnt[q] = n;
        dsp[q] = (size_t)(p - 1 - q) * n;
    }
    OK(vc_igather(s, g, n, VC_INT32, p - 1, VC_COMM_WORLD, &rq[0]));
    OK(vc_iscatter(sc, sr, n, VC_INT32, 0, VC_COMM_WORLD, &rq[1]));
    OK(vc_iallgatherv(s, n, ag, cnt, dsp, VC_INT32, VC_COMM_WORLD, &rq[2]));
    for (int k = 2; k >= 0; k--)
        OK(vc_wait(&rq[k], VC_STATUS_IGNORE));
    for (int q = 0; q < p; q++) {
        if (me == p - 1)
            check_block(g + (size_t)q * n, q, n, "overlapped igather", p - 1, 1);
        check_block(ag + dsp[q], q, n, "overlapped iallgatherv", -1, 1);
    }
    check_block(sr, me, n, "overlapped iscatter", 0, 1);
    free(s); free(g); free(sc); free(sr); free(ag); free(cnt); free(dsp);
}

/* Bad arguments every caller sees the same way (so nobody is left waiting),
   and root-only checks on a one-rank communicator, where I am the root. */
/* Counts that disagree between ranks (erroneous, but must end in an
   error, not a hang or a write past a block): the root of a scatterv
   sends rank 1 twice what rank 1 expects, and rank 1 sends the root of a
   gatherv twice what it expects; small (eager) and big (rendezvous); a
   small bcast likewise. The receiver gets VC_ERR_TRUNCATE. */
static void test_mismatch(void)
{
    int p = mp_size, me = mp_rank;
    if (p < 2)
        return;
    /* small (eager), fan-in eager where ranks outnumber cores on shm (rank
       1's 48000 bytes), big (rendezvous) */
    for (int size = 0; size < 3; size++) {
        int big = size > 0;
        const char *sz = size == 2 ? "a big" : size ? "a fan-in sized" : "a small";
        size_t n = size == 2 ? 30000 : size ? 6000 : 2, stride = 2 * n + 1;
        size_t *cnt = malloc((size_t)p * sizeof *cnt), *dsp = malloc((size_t)p * sizeof *dsp);
        int32_t *all = malloc((size_t)p * stride * sizeof *all), *one = malloc(stride * 4);
        for (int j = 0; j < p; j++) {
            cnt[j] = j == 1 ? 2 * n : n;
            dsp[j] = (size_t)j * stride;
        }
        for (size_t i = 0; i < (size_t)p * stride; i++)
            all[i] = val((int)(i / stride), i % stride);
        for (size_t i = 0; i < stride; i++)
            one[i] = GAP;
        int got = vc_scatterv(me == 0 ? all : NULL, me == 0 ? cnt : NULL, me == 0 ? dsp : NULL,
                              one, n, VC_INT32, 0, VC_COMM_WORLD);
        if (got != (me == 1 ? VC_ERR_TRUNCATE : VC_SUCCESS))
            FAIL("scatterv, %s block longer than rank 1 expects: rank %d got %d", sz, me, got);
        if (me == 1 && one[n] != GAP)
            FAIL("scatterv wrote past the block rank 1 expects");
        /* gatherv: the root expects n from everyone, rank 1 sends 2n */
        for (int j = 0; j < p; j++)
            cnt[j] = n;
        for (size_t i = 0; i < (size_t)p * stride; i++)
            all[i] = GAP;
        for (size_t i = 0; i < 2 * n; i++)
            one[i] = val(me, i);
        got = vc_gatherv(one, me == 1 ? 2 * n : n, me == 0 ? all : NULL, me == 0 ? cnt : NULL,
                         me == 0 ? dsp : NULL, VC_INT32, 0, VC_COMM_WORLD);
        if (got != (me == 0 ? VC_ERR_TRUNCATE : VC_SUCCESS))
            FAIL("gatherv, rank 1 sending %s block longer than the root expects: rank %d got %d",
                 sz, me, got);
        if (me == 0 && all[stride + n] != GAP)
            FAIL("gatherv wrote past the block the root expects from rank 1");
        /* bcast: the root sends 2n, rank 1 expects n (a leaf of every
           bcast tree rooted at 0, so nobody waits on what it forwards);
           where the slots (flags) or the binomial tree carry it. The
           segment ("shm") and scatter_allgather do not check yet: the
           first truncates in silence, the second waits for blocks that
           never come. */
        const char *alg = "";
        OK(vc_coll_which(VC_COMM_WORLD, "bcast", 2 * n, VC_INT32, &alg));
        if (!big && (!strcmp(alg, "flags") || !strcmp(alg, "binomial"))) {
            for (size_t i = 0; i < stride; i++)
                one[i] = me == 0 ? val(0, i) : GAP;
            got = vc_bcast(one, me == 1 ? n : 2 * n, VC_INT32, 0, VC_COMM_WORLD);
            if (got != (me == 1 ? VC_ERR_TRUNCATE : VC_SUCCESS))
                FAIL("bcast, a block longer than rank 1 expects: rank %d got %d", me, got);
            if (me == 1 && (one[n] != GAP || one[0] != val(0, 0) || one[n - 1] != val(0, n - 1)))
                FAIL("bcast truncated on rank 1: its %zu elements wrong or written past", n);
        }
        free(cnt); free(dsp); free(all); free(one);
    }
}

static void test_errors(void)
{
    int32_t s[8] = {0}, r[8 * 64];
    size_t cnt[64], dsp[64];
    vc_request_t rq;
    int p = mp_size, me = mp_rank;
    for (int q = 0; q < p; q++) {
        cnt[q] = 1;
        dsp[q] = (size_t)q;
    }
    EXPECT_RC(vc_gather(s, r, 1, VC_INT32, p, VC_COMM_WORLD), VC_ERR_RANK);
    EXPECT_RC(vc_scatter(s, r, 1, VC_INT32, -1, VC_COMM_WORLD), VC_ERR_RANK);
    EXPECT_RC(vc_gatherv(s, 1, r, cnt, dsp, VC_INT32, p + 2, VC_COMM_WORLD), VC_ERR_RANK);
    EXPECT_RC(vc_iscatterv(s, cnt, dsp, r, 1, VC_INT32, -3, VC_COMM_WORLD, &rq), VC_ERR_RANK);
    EXPECT_RC(vc_gather(s, r, SIZE_MAX / 2, VC_INT32, 0, VC_COMM_WORLD), VC_ERR_COUNT);
    EXPECT_RC(vc_scatter(s, r, 1, (vc_dtype_t)99, 0, VC_COMM_WORLD), VC_ERR_DTYPE);
    EXPECT_RC(vc_gather(NULL, r, 2, VC_INT32, 0, VC_COMM_WORLD), VC_ERR_BUFFER);
    EXPECT_RC(vc_gather(s, r, 1, VC_INT32, 0, VC_COMM_NULL), VC_ERR_COMM);
    EXPECT_RC(vc_allgatherv(s, 1, r, cnt, dsp, VC_INT32, VC_COMM_NULL), VC_ERR_COMM);
    EXPECT_RC(vc_igather(s, r, 1, VC_INT32, 0, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_igatherv(s, 1, r, cnt, dsp, VC_INT32, 0, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_iscatter(s, r, 1, VC_INT32, 0, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_iscatterv(s, cnt, dsp, r, 1, VC_INT32, 0, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_iallgatherv(s, 1, r, cnt, dsp, VC_INT32, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    /* allgatherv: every rank has the arrays, so every rank sees these */
    EXPECT_RC(vc_allgatherv(s, 1, r, NULL, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_ARG);
    EXPECT_RC(vc_allgatherv(s, 1, r, cnt, NULL, VC_INT32, VC_COMM_WORLD), VC_ERR_ARG);
    EXPECT_RC(vc_allgatherv(s, 1, VC_IN_PLACE, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_BUFFER);
    EXPECT_RC(vc_allgatherv(s, 1, NULL, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_BUFFER);
    EXPECT_RC(vc_allgatherv(NULL, 1, r, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_BUFFER);
    EXPECT_RC(vc_allgatherv(s, 2, r, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_TRUNCATE);
    if (p > 1) {   /* two blocks on the same slot */
        dsp[p - 1] = 0;
        EXPECT_RC(vc_allgatherv(s, 1, r, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_ARG);
        dsp[p - 1] = (size_t)p - 1;
    }
    cnt[0] = SIZE_MAX / 2;
    EXPECT_RC(vc_allgatherv(s, 1, r, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_COUNT);
    cnt[0] = 1;
    dsp[0] = SIZE_MAX;
    EXPECT_RC(vc_allgatherv(s, 1, r, cnt, dsp, VC_INT32, VC_COMM_WORLD), VC_ERR_COUNT);
    dsp[0] = 0;
    /* VC_IN_PLACE where MPI does not allow it: non-roots only (the root
       does not call, so nobody waits) */
    if (me != 0) {
        EXPECT_RC(vc_gather(VC_IN_PLACE, r, 1, VC_INT32, 0, VC_COMM_WORLD), VC_ERR_BUFFER);
        EXPECT_RC(vc_gatherv(VC_IN_PLACE, 1, r, NULL, NULL, VC_INT32, 0, VC_COMM_WORLD),
                  VC_ERR_BUFFER);
        EXPECT_RC(vc_scatter(s, VC_IN_PLACE, 1, VC_INT32, 0, VC_COMM_WORLD), VC_ERR_BUFFER);
        EXPECT_RC(vc_scatterv(s, NULL, NULL, VC_IN_PLACE, 1, VC_INT32, 0, VC_COMM_WORLD),
                  VC_ERR_BUFFER);
        EXPECT_RC(vc_scatterv(s, NULL, NULL, NULL, 1, VC_INT32, 0, VC_COMM_WORLD),
                  VC_ERR_BUFFER);
    }
    /* root-only checks on a one-rank communicator */
    vc_comm_t self;
    OK(vc_comm_split(VC_COMM_WORLD, me, 0, &self));
    size_t one = 1, zero = 0;
    EXPECT_RC(vc_gatherv(s, 1, r, NULL, &zero, VC_INT32, 0, self), VC_ERR_ARG);
    EXPECT_RC(vc_gatherv(s, 1, r, &one, NULL, VC_INT32, 0, self), VC_ERR_ARG);
    EXPECT_RC(vc_scatterv(s, NULL, &zero, r, 1, VC_INT32, 0, self), VC_ERR_ARG);
    EXPECT_RC(vc_scatterv(s, &one, NULL, r, 1, VC_INT32, 0, self), VC_ERR_ARG);
    EXPECT_RC(vc_gather(s, VC_IN_PLACE, 1, VC_INT32, 0, self), VC_ERR_BUFFER);
    EXPECT_RC(vc_gather(s, NULL, 1, VC_INT32, 0, self), VC_ERR_BUFFER);
    EXPECT_RC(vc_scatter(VC_IN_PLACE, r, 1, VC_INT32, 0, self), VC_ERR_BUFFER);
    EXPECT_RC(vc_scatter(NULL, r, 1, VC_INT32, 0, self), VC_ERR_BUFFER);
    EXPECT_RC(vc_gatherv(s, 2, r, &one, &zero, VC_INT32, 0, self), VC_ERR_TRUNCATE);
    EXPECT_RC(vc_scatterv(s, &one, &zero, r, 0, VC_INT32, 0, self), VC_ERR_TRUNCATE);
    size_t huge = SIZE_MAX / 2;
    EXPECT_RC(vc_gatherv(s, 1, r, &huge, &zero, VC_INT32, 0, self), VC_ERR_COUNT);
    EXPECT_RC(vc_scatterv(s, &huge, &zero, r, 1, VC_INT32, 0, self), VC_ERR_COUNT);
    EXPECT_RC(vc_gatherv(s, 1, NULL, &one, &zero, VC_INT32, 0, self), VC_ERR_BUFFER);
    /* allowed on one rank: in place, and a gather into my own slot */
    r[0] = 42;
    OK(vc_gatherv(VC_IN_PLACE, 0, r, &one, &zero, VC_INT32, 0, self));
    OK(vc_scatter(r, VC_IN_PLACE, 1, VC_INT32, 0, self));
    if (r[0] != 42)
        FAIL("in-place gatherv/scatter on one rank changed the data: %d", r[0]);
    OK(vc_comm_free(&self));
    /* still working: an empty block may share a displacement with another */
    int32_t x = val(me, 0);
    cnt[p - 1] = p > 1 ? 0 : 1;
    dsp[p - 1] = 0;
    OK(allgatherv_b(&x, cnt[me], r, cnt, dsp, VC_COMM_WORLD));
    for (int q = 0; q < p; q++)
        if (cnt[q] && r[q] != val(q, 0))
            FAIL("allgatherv after errors: slot %d = %d", q, r[q]);
}

/* Rooted calls back to back with nothing between them but other small
   collectives, roots moving (gather, scatterv, bcast, reduce): through
   the node's slots a rank that only writes its line (gather) or reads one
   (scatter) may run calls ahead of the others, and must never overwrite a line someone still reads. Every
   value depends on the round, so a line reused too early shows. */
static void test_stream(void)
{
    int me = mp_rank, p = mp_size;
    int32_t blk[4], all[4 * 64], x, sum;
    size_t cnt[64], dsp[64];
    if (p > 64)
        return;
    for (int q = 0; q < p; q++) {
        cnt[q] = (size_t)(q % 3) + 1;
        dsp[q] = (size_t)q * 4;
    }
    for (int it = 0; it < 400; it++) {
        int root = it % p, root2 = (it * 7 + 3) % p;
        for (int i = 0; i < 4; i++)
            blk[i] = val(me, (size_t)(it * 4 + i));
        OK(vc_gather(blk, all, 4, VC_INT32, root, VC_COMM_WORLD));
        if (me == root)
            for (int q = 0; q < p; q++)
                for (int i = 0; i < 4; i++)
                    if (all[q * 4 + i] != val(q, (size_t)(it * 4 + i))) {
                        FAIL("stream round %d gather: rank %d elem %d", it, q, i);
                        return;
                    }
        if (me == root2)
            for (int q = 0; q < p; q++)
                for (int i = 0; i < 4; i++)
                    all[q * 4 + i] = val(q, (size_t)(it * 4 + i + 1));
        OK(vc_scatterv(me == root2 ? all : NULL, me == root2 ? cnt : NULL,
                       me == root2 ? dsp : NULL, blk, cnt[me], VC_INT32, root2, VC_COMM_WORLD));
        for (size_t i = 0; i < cnt[me]; i++)
            if (blk[i] != val(me, (size_t)it * 4 + i + 1)) {
                FAIL("stream round %d scatterv from %d: elem %zu", it, root2, i);
                return;
            }
        /* a bcast and a reduce from other moving roots: the bcast's
           non-roots and the reduce's root publish an empty line, the
           others a full one (shm_flags_rooted.c, shm_flags_reduce.c) */
        int root3 = (it * 5 + 1) % p, root4 = (it * 3 + 2) % p;
        int32_t b[3] = {0, 0, 0}, r[3];
        if (me == root3)
            for (int i = 0; i < 3; i++)
                b[i] = val(root3, (size_t)(it * 3 + i));
        OK(vc_bcast(b, 3, VC_INT32, root3, VC_COMM_WORLD));
        for (int i = 0; i < 3; i++)
            if (b[i] != val(root3, (size_t)(it * 3 + i))) {
                FAIL("stream round %d bcast from %d: elem %d", it, root3, i);
                return;
            }
        for (int i = 0; i < 3; i++)
            b[i] = it * (i + 1) + me;
        OK(vc_reduce(b, r, 3, VC_INT32, VC_SUM, root4, VC_COMM_WORLD));
        if (me == root4)
            for (int i = 0; i < 3; i++)
                if (r[i] != p * it * (i + 1) + p * (p - 1) / 2) {
                    FAIL("stream round %d reduce to %d: elem %d", it, root4, i);
                    return;
                }
        if (it % 13 == me % 13)
            usleep(200);    /* one rank late now and then: other orders */
        if (it % 5 == 0) {
            x = it + me;
            OK(vc_allreduce(&x, &sum, 1, VC_INT32, VC_SUM, VC_COMM_WORLD));
            if (sum != p * it + p * (p - 1) / 2) {
                FAIL("stream round %d allreduce: %d", it, sum);
                return;
            }
        }
        if (it % 7 == 0)
            OK(vc_barrier(VC_COMM_WORLD));
    }
}

/* Gathers of 64 KiB blocks back to back to a root that comes late: where
   ranks outnumber the cores on shm, each block goes eagerly into the
   root's ring (a packet of its own, two fit a ring), so the rings fill and
   the later blocks go by rendezvous behind the eager ones, from the
   executor (linear) and through the node's slots (gatherv's flags). Every
   call's values are its own: a block taken by the wrong call shows. */
static void test_fanin_burst(void)
{
    int me = mp_rank, p = mp_size, root = p - 1, calls = 6;
    size_t n = 16384;
    int32_t *s = malloc(n * sizeof *s), *g = malloc(n * (size_t)p * calls * sizeof *g);
    size_t *cnt = malloc((size_t)p * sizeof *cnt), *dsp = malloc((size_t)p * sizeof *dsp);
    for (int q = 0; q < p; q++) {
        cnt[q] = n;
        dsp[q] = (size_t)q * n;
    }
    for (int v = 0; v < 2; v++) {
        if (me == root)
            usleep(20000);
        for (int c = 0; c < calls; c++) {
            int32_t *at = me == root ? g + (size_t)c * n * (size_t)p : NULL;
            for (size_t i = 0; i < n; i++)
                s[i] = val(me + (c + v * calls) * p, i);
            OK(v ? vc_gatherv(s, n, at, me == root ? cnt : NULL, me == root ? dsp : NULL,
                              VC_INT32, root, VC_COMM_WORLD)
                 : vc_gather(s, at, n, VC_INT32, root, VC_COMM_WORLD));
        }
        for (int c = 0; me == root && c < calls; c++)
            for (int q = 0; q < p; q++)
                check_block(g + ((size_t)c * (size_t)p + (size_t)q) * n,
                            q + (c + v * calls) * p, n,
                            v ? "fan-in burst gatherv" : "fan-in burst gather", root, c);
    }
    free(s); free(g); free(cnt); free(dsp);
}

/* Bursts of one rooted call from one root while one other rank comes
   late: a writer that leaves as soon as its line is out (a bcast's or
   scatter's root, a gather's or reduce's non-roots) must not reuse that
   line before the late rank has read it. Each call's values are its own, so a line
   overwritten two calls early shows as the wrong round. */
static void test_burst(void)
{
    int me = mp_rank, p = mp_size, root = 0, late = p - 1;
    int32_t v[2], all[2 * 64];
    if (p < 2 || p > 64)
        return;
    for (int kind = 0; kind < 4; kind++) {
        if (me == late)
            usleep(3000);
        for (int it = 0; it < 24; it++) {
            int tag = kind * 1000 + it;
            switch (kind) {
            case 0:     /* bcast: the root writes */
                v[0] = me == root ? tag : -1;
                v[1] = me == root ? -tag : -1;
                OK(vc_bcast(v, 2, VC_INT32, root, VC_COMM_WORLD));
                if (v[0] != tag || v[1] != -tag)
                    FAIL("burst bcast %d: got %d,%d", it, v[0], v[1]);
                break;
            case 1:     /* scatter: the root writes */
                if (me == root)
                    for (int q = 0; q < p; q++) {
                        all[2 * q] = tag + q;
                        all[2 * q + 1] = -tag;
                    }
                OK(vc_scatter(all, v, 2, VC_INT32, root, VC_COMM_WORLD));
                if (v[0] != tag + me || v[1] != -tag)
                    FAIL("burst scatter %d: got %d,%d", it, v[0], v[1]);
                break;
            case 2:     /* gather: the non-roots write */
                v[0] = tag + me;
                v[1] = -tag;
                OK(vc_gather(v, all, 2, VC_INT32, root, VC_COMM_WORLD));
                for (int q = 0; me == root && q < p; q++)
                    if (all[2 * q] != tag + q || all[2 * q + 1] != -tag) {
                        FAIL("burst gather %d: rank %d's block %d,%d", it, q, all[2 * q],
                             all[2 * q + 1]);
                        break;
                    }
                break;
            default:    /* reduce: the non-roots write */
                v[0] = tag;
                v[1] = me;
                OK(vc_reduce(v, all, 2, VC_INT32, VC_SUM, root, VC_COMM_WORLD));
                if (me == root && (all[0] != p * tag || all[1] != p * (p - 1) / 2))
                    FAIL("burst reduce %d: got %d,%d", it, all[0], all[1]);
                break;
            }
        }
    }
}

/* Through the slots a rooted call's writers run ahead of a late reader
   (shm_flags.c's ring): a bcast's root and a gather's non-roots, and the
   readers that are not late, finish 3 calls while one rank (a bcast's
   last, a gather's root) sleeps 400 ms, as a message root runs ahead on
   eager sends (the ring has 4 slots: 3 calls ahead). With two slots a
   rank waited for the late one from its second call on. Checked only
   where flags is forced, on one node; the values are checked after. */
static void test_runahead(void)
{
    int me = mp_rank, p = mp_size;
    int32_t v[3][2], all[3][2 * 64];
    if (!rooted_flags || p < 2 || p > 64)
        return;
    for (int kind = 0; kind < 2; kind++) {
        int late = kind ? 0 : p - 1;
        OK(vc_barrier(VC_COMM_WORLD));
        if (me == late)
            usleep(400000);
        double t0 = vc_wtime();
        for (int it = 0; it < 3; it++) {
            int tag = 100 * kind + it;
            v[it][0] = kind || me == 0 ? tag + me : -1;
            v[it][1] = -tag;
            if (kind == 0)
                OK(vc_bcast(v[it], 2, VC_INT32, 0, VC_COMM_WORLD));
            else
                OK(vc_gather(v[it], all[it], 2, VC_INT32, 0, VC_COMM_WORLD));
        }
        double dt = vc_wtime() - t0;
        if (me != late && dt > 0.2)
            FAIL("%s: 3 calls took %.0f ms on rank %d, waiting for the late rank",
                 kind ? "gather" : "bcast", dt * 1e3, me);
        for (int it = 0; it < 3; it++) {
            int tag = 100 * kind + it;
            if (kind == 0 && (v[it][0] != tag || v[it][1] != -tag))
                FAIL("run-ahead bcast %d: got %d,%d", it, v[it][0], v[it][1]);
            for (int q = 0; kind == 1 && me == 0 && q < p; q++)
                if (all[it][2 * q] != tag + q || all[it][2 * q + 1] != -tag)
                    FAIL("run-ahead gather %d: rank %d's block %d,%d", it, q, all[it][2 * q],
                         all[it][2 * q + 1]);
        }
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    agv_shm = mp_forced_on_one_node("VCOLL_ALLGATHERV_ALG", "shm");
    agv_flags = mp_forced_on_one_node("VCOLL_ALLGATHERV_ALG", "flags");
    rooted_flags = mp_forced_on_one_node("VCOLL_GATHERV_ALG", "flags");
    test_comm(VC_COMM_WORLD);
    test_overlap();
    /* a sub-communicator: halves by parity, reversed order */
    vc_comm_t half;
    OK(vc_comm_split(VC_COMM_WORLD, mp_rank % 2, mp_size - mp_rank, &half));
    test_comm(half);
    OK(vc_comm_free(&half));
    test_stream();
    test_burst();
    test_fanin_burst();
    test_runahead();
    test_errors();
    test_mismatch();
    /* everyone agrees on the outcome */
    int32_t nf = mp_fails, tf = 0;
    if (vc_allreduce(&nf, &tf, 1, VC_INT32, VC_SUM, VC_COMM_WORLD) != VC_SUCCESS || (tf && !nf))
        FAIL("another rank failed");
    return mp_finish("mp_coll_gather");
}
