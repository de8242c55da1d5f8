/*
 * mp_coll_a2a.c -- alltoall, alltoallv, reduce_scatter_block,
 * reduce_scatter, scan and exscan across processes (any np), blocking and
 * non-blocking, in place and not, on the world and on a split
 * communicator; user ops from vc_op_create, commutative and not, through
 * those and through vc_allreduce / vc_reduce; bad arguments.
 *
 * Every expected value is computed here from (source, destination, index)
 * with plain loops; reductions are folded in rank order, so the
 * non-commutative op (composition of affine maps mod 2^16) fails any
 * reordering. Run under mpirun; exit 0 on success.
 *
 * With VCOLL_ALLTOALL_ALG=shm / VCOLL_ALLTOALLV_ALG=shm on one node, every
 * blocking alltoall(v) of two or more ranks must have gone through the
 * segment (the library's counter) -- but for alltoallv after one that
 * averaged more than 32 KiB per pair, which must not have; big blocks wrap
 * its rings several times, and alltoallv's blocks past 32 KiB go as
 * messages beside it. With VCOLL_ALLTOALLV_ALG=flags, every blocking
 * alltoallv on the world (not in place) must have gone through the node's
 * slots, blocks past their share of a line as messages. With
 * VCOLL_REDUCE_SCATTER(_BLOCK)_ALG=flags, every blocking reduce_scatter(_block)
 * on the world with a built-in op whose whole vector fits a line must have
 * gone through the slots (past a line, or a user op, it falls back), and
 * a rank with no block of a reduce_scatter must not wait there for a late
 * rank that has one (test_rs_blockless).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mp_util.h"
#include "coll/coll.h"
#include "coll/shm_run.h"
#include "net/net.h"

static vc_op_t op_affine, op_add;
static int a2a_shm;     /* VCOLL_ALLTOALL(V)_ALG=shm, the job on one node */
static int a2av_flags;  /* VCOLL_ALLTOALLV_ALG=flags, the job on one node */
static int rs_flags[2]; /* VCOLL_REDUCE_SCATTER(_BLOCK)_ALG=flags ([1]: _BLOCK), one node */

/* ---- values and ops ---- */

static uint32_t a2a_val(int src, int dst, size_t i)
{
    return (uint32_t)src * 1000003u + (uint32_t)dst * 1009u + (uint32_t)i;
}

/* x -> a*x + b mod 2^16 (a high half): "f then g" is g(f(x)) */
static uint32_t affine_then(uint32_t f, uint32_t g)
{
    uint32_t a1 = f >> 16, b1 = f & 0xffff, a2 = g >> 16, b2 = g & 0xffff;
    return ((a1 * a2) & 0xffff) << 16 | ((a2 * b1 + b2) & 0xffff);
}

static void affine_fn(const void *in, void *inout, size_t n, vc_dtype_t dt)
{
    (void)dt;
    for (size_t i = 0; i < n; i++)
        ((uint32_t *)inout)[i] = affine_then(((const uint32_t *)in)[i], ((uint32_t *)inout)[i]);
}

static void add_fn(const void *in, void *inout, size_t n, vc_dtype_t dt)
{
    (void)dt;
    for (size_t i = 0; i < n; i++)
        ((uint32_t *)inout)[i] += ((const uint32_t *)in)[i];
}

enum { R_SUM, R_ADD, R_AFFINE };   /* built-in int32 sum, user add, user affine */

static vc_dtype_t r_dt(int k) { return k == R_SUM ? VC_INT32 : VC_UINT32; }
static vc_op_t r_op(int k) { return k == R_SUM ? VC_SUM : k == R_ADD ? op_add : op_affine; }

/* element e of rank r's reduction input */
static uint32_t rval(int k, int r, size_t e)
{
    uint32_t h = (uint32_t)(r * 2654435761u) ^ (uint32_t)(e * 40503u + 7u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return k == R_AFFINE ? ((h >> 16) | 1) << 16 | (h & 0xffff) : h;
}

/* ranks [0, hi) folded in order */
static uint32_t rfold(int k, int hi, size_t e)
{
    uint32_t acc = rval(k, 0, e);
    for (int q = 1; q < hi; q++)
        acc = k == R_AFFINE ? affine_then(acc, rval(k, q, e)) : acc + rval(k, q, e);
    return acc;
}

static int wait_if(vc_request_t *rq, int nb, int rc)
{
    if (rc == VC_SUCCESS && nb)
        rc = vc_wait(rq, VC_STATUS_IGNORE);
    return rc;
}

/* ---- alltoall ---- */

static void test_alltoall(vc_comm_t comm, size_t count, int nb, int ip)
{
    int me, p;
    vc_request_t rq;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t n = count * (size_t)p;
    uint32_t *s = malloc((n + 1) * 4), *r = malloc((n + 1) * 4);
    uint32_t *in = ip ? r : s;
    for (int j = 0; j < p; j++)
        for (size_t i = 0; i < count; i++)
            in[(size_t)j * count + i] = a2a_val(me, j, i);
    if (!ip)
        memset(r, 0xee, n * 4);
    const void *sb = ip ? VC_IN_PLACE : s;
    uint64_t before = coll_shm_calls(comm, COLL_ALLTOALL);
    int rc = nb ? vc_ialltoall(sb, r, count, VC_UINT32, comm, &rq)
                : vc_alltoall(sb, r, count, VC_UINT32, comm);
    OK(wait_if(&rq, nb, rc));
    uint64_t after = coll_shm_calls(comm, COLL_ALLTOALL);
    if (!nb && count == 0 && after != before)
        FAIL("alltoall count 0 ip %d ran through the segment: it has nothing to move", ip);
    else if (a2a_shm && !nb && p > 1 && count > 0 && after != before + 1)
        FAIL("alltoall count %zu ip %d forced to shm did not run through the segment",
             count, ip);
    for (int j = 0; j < p; j++)
        for (size_t i = 0; i < count; i++)
            if (r[(size_t)j * count + i] != a2a_val(j, me, i)) {
                FAIL("alltoall count %zu nb %d ip %d: block %d elem %zu", count, nb, ip, j, i);
                j = p;
                break;
            }
    free(s);
    free(r);
}

/* ---- alltoallv: counts c(s,d) with zeros; symmetric for in place ---- */

static size_t vcnt(int src, int dst, int sym, size_t k)
{
    int a = sym && src > dst ? dst : src, b = sym && src > dst ? src : dst;
    return (size_t)((a * 3 + b * 5) % 4) * k;
}

/* the library's rule for forced shm alltoallv, per communicator: after a
   call through the segment that averaged more than 32 KiB per pair, the
   next ones go to messages (fewer than 32 of them in this test) */
static struct { vc_comm_t c; int big; } a2av_seen[4];

static int *a2av_big(vc_comm_t c)
{
    for (int i = 0; i < 4; i++)
        if (a2av_seen[i].c == c || !a2av_seen[i].c) {
            a2av_seen[i].c = c;
            return &a2av_seen[i].big;
        }
    return &a2av_seen[3].big;
}

static void test_alltoallv(vc_comm_t comm, size_t k, int nb, int ip)
{
    int me, p;
    vc_request_t rq;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t *sc = malloc((size_t)p * sizeof *sc), *sd = malloc((size_t)p * sizeof *sd);
    size_t *rc = malloc((size_t)p * sizeof *rc), *rd = malloc((size_t)p * sizeof *rd);
    size_t spos = 0, rpos = 1;
    for (int j = p - 1; j >= 0; j--) {        /* sends in reverse order */
        sc[j] = vcnt(me, j, ip, k);
        sd[j] = spos;
        spos += sc[j];
    }
    for (int j = 0; j < p; j++) {             /* receives with gaps */
        rc[j] = vcnt(j, me, ip, k);
        rd[j] = rpos;
        rpos += rc[j] + 3;
    }
    uint32_t *s = malloc((spos + 1) * 4), *r = malloc((rpos + 1) * 4);
    memset(r, 0xee, rpos * 4);
    for (int j = 0; j < p; j++) {
        uint32_t *blk = ip ? r + rd[j] : s + sd[j];
        for (size_t i = 0; i < (ip ? rc[j] : sc[j]); i++)
            blk[i] = a2a_val(me, j, i);
    }
    const void *sb = ip ? VC_IN_PLACE : s;
    uint64_t before = coll_shm_calls(comm, COLL_ALLTOALLV), all = 0;
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++)
            all += a != b ? vcnt(a, b, ip, k) * 4 : 0;
    int *big = a2av_big(comm), want = a2a_shm && !nb && p > 1 && !*big;
    int rcode = nb ? vc_ialltoallv(sb, ip ? NULL : sc, ip ? NULL : sd, r, rc, rd, VC_UINT32,
                                   comm, &rq)
                   : vc_alltoallv(sb, ip ? NULL : sc, ip ? NULL : sd, r, rc, rd, VC_UINT32, comm);
    OK(wait_if(&rq, nb, rcode));
    if (a2a_shm && coll_shm_calls(comm, COLL_ALLTOALLV) != before + (uint64_t)want)
        FAIL("alltoallv k %zu ip %d forced to shm: %s the segment", k, ip,
             want ? "did not run through" : "ran through (after a big one)");
    /* the slots serve the world's blocking calls, not in place (another
       communicator's forced call runs the rules' choice, which may count
       through its segment) */
    int slots = !nb && !ip && p > 1;
    if (a2av_flags && comm == VC_COMM_WORLD &&
        coll_shm_calls(comm, COLL_ALLTOALLV) != before + (uint64_t)slots)
        FAIL("alltoallv k %zu nb %d ip %d forced to flags: %s the slots", k, nb, ip,
             slots ? "did not run through" : "ran through");
    if (want)
        *big = all > (uint64_t)p * (uint64_t)(p - 1) * 32768;
    size_t next = 0;
    for (int j = 0; j < p; j++) {
        for (; next < rd[j]; next++)
            if (r[next] != 0xeeeeeeeeu) {
                FAIL("alltoallv wrote a gap at %zu", next);
                break;
            }
        for (size_t i = 0; i < rc[j]; i++)
            if (r[rd[j] + i] != a2a_val(j, me, i)) {
                FAIL("alltoallv k %zu nb %d ip %d: block from %d elem %zu", k, nb, ip, j, i);
                break;
            }
        next = rd[j] + rc[j];
    }
    free(s); free(r); free(sc); free(sd); free(rc); free(rd);
}

/* ---- reduce_scatter(_block): block j of rank r's input = elements
   [off_j, off_j + cnt_j) of rval(k, r, .) ---- */

static void test_reduce_scatter(vc_comm_t comm, size_t scale, int block, int k, int nb, int ip)
{
    int me, p;
    vc_request_t rq;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t *cnt = malloc((size_t)p * sizeof *cnt), total = 0, off = 0;
    for (int j = 0; j < p; j++) {
        cnt[j] = block ? scale : (size_t)((j * 7 + 3) % 5) * scale;   /* some zero */
        if (j < me)
            off += cnt[j];
        total += cnt[j];
    }
    uint32_t *s = malloc((total + 1) * 4), *r = malloc((total + 1) * 4);
    uint32_t *in = ip ? r : s;
    for (size_t e = 0; e < total; e++)
        in[e] = rval(k, me, e);
    const void *sb = ip ? VC_IN_PLACE : s;
    int rc, kind = block ? COLL_REDUCE_SCATTER_BLOCK : COLL_REDUCE_SCATTER;
    uint64_t before = coll_shm_calls(comm, kind);
    if (block)
        rc = nb ? vc_ireduce_scatter_block(sb, r, scale, r_dt(k), r_op(k), comm, &rq)
                : vc_reduce_scatter_block(sb, r, scale, r_dt(k), r_op(k), comm);
    else
        rc = nb ? vc_ireduce_scatter(sb, r, cnt, r_dt(k), r_op(k), comm, &rq)
                : vc_reduce_scatter(sb, r, cnt, r_dt(k), r_op(k), comm);
    OK(wait_if(&rq, nb, rc));
    /* (a blocking reduce_scatter_block of count 0 returns at once) */
    if (rs_flags[block] && !nb && comm == VC_COMM_WORLD && p > 1 && k == R_SUM && total &&
        total * 4 <= NET_SHM_SLOT_BYTES - 8 && coll_shm_calls(comm, kind) != before + 1)
        FAIL("reduce_scatter%s scale %zu ip %d forced to flags did not run through the "
             "node's slots", block ? "_block" : "", scale, ip);
    for (size_t i = 0; i < cnt[me]; i++)
        if (r[i] != rfold(k, p, off + i)) {
            FAIL("reduce_scatter%s op %d scale %zu nb %d ip %d: elem %zu", block ? "_block" : "",
                 k, scale, nb, ip, i);
            break;
        }
    free(s); free(r); free(cnt);
}

/* ---- the same arrays rewritten in place between blocking calls: the
   counts per pair stay, the send blocks move (round 1 reverses them,
   round 2 leaves gaps); reduce_scatter keeps its total but rotates the
   counts. A blocking v-call may reuse a schedule only when the arrays'
   contents match, not their address. ---- */

static void test_rewritten(vc_comm_t comm)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    size_t n = (size_t)p;
    size_t *sc = malloc(n * sizeof *sc), *sd = malloc(n * sizeof *sd);
    size_t *rc = malloc(n * sizeof *rc), *rd = malloc(n * sizeof *rd);
    size_t cap = (n * 9 > n * (n + 1) / 2 ? n * 9 : n * (n + 1) / 2) + 1;
    uint32_t *s = malloc(cap * 4), *r = malloc(cap * 4);
    for (int round = 0; round < 3; round++) {
        size_t spos = 0;
        for (size_t i = 0; i < n; i++) {
            int j = round == 1 ? p - 1 - (int)i : (int)i;
            sc[j] = vcnt(me, j, 0, 2);
            sd[j] = spos;
            spos += sc[j] + (round == 2 ? 1 : 0);
        }
        size_t rpos = 0;
        for (int j = 0; j < p; j++) {
            rc[j] = vcnt(j, me, 0, 2);
            rd[j] = rpos;
            rpos += rc[j];
        }
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < sc[j]; i++)
                s[sd[j] + i] = a2a_val(me, j, i);
        OK(vc_alltoallv(s, sc, sd, r, rc, rd, VC_UINT32, comm));
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < rc[j]; i++)
                if (r[rd[j] + i] != a2a_val(j, me, i)) {
                    FAIL("alltoallv, arrays rewritten, round %d: block from %d elem %zu",
                         round, j, i);
                    j = p;
                    break;
                }
        /* reduce_scatter: counts 1..p rotated by the round, total fixed */
        size_t total = 0, off = 0;
        for (int j = 0; j < p; j++) {
            sc[j] = (size_t)((j + round) % p) + 1;
            if (j < me)
                off += sc[j];
            total += sc[j];
        }
        for (size_t e = 0; e < total; e++)
            s[e] = rval(R_SUM, me, e);
        OK(vc_reduce_scatter(s, r, sc, VC_UINT32, VC_SUM, comm));
        for (size_t i = 0; i < sc[me]; i++)
            if (r[i] != rfold(R_SUM, p, off + i)) {
                FAIL("reduce_scatter, counts rewritten, round %d: elem %zu", round, i);
                break;
            }
    }
    free(s); free(r); free(sc); free(sd); free(rc); free(rd);
}

/* ---- reduce_scatter where only rank 0 gets a block, and it comes late:
   forced through the node's slots, a rank with no block publishes its
   vector and leaves, so its first call returns long before rank 0
   arrives (300 ms later); the calls after it run ahead only as far as the
   slots allow, so every one of rank 0's results must be its own call's ---- */

static void test_rs_blockless(void)
{
    int me = mp_rank, p = mp_size, calls = 12;
    size_t cnt[64];
    uint32_t s[3], r[3];
    if (p < 2 || p > 64)
        return;
    for (int j = 0; j < p; j++)
        cnt[j] = j == 0 ? 3 : 0;
    OK(vc_barrier(VC_COMM_WORLD));
    double t0 = vc_wtime();
    if (me == 0)
        usleep(300000);
    for (int c = 0; c < calls; c++) {
        for (int e = 0; e < 3; e++)
            s[e] = (uint32_t)(c * 1000 + me * 10 + e);
        OK(vc_reduce_scatter(s, r, cnt, VC_UINT32, VC_SUM, VC_COMM_WORLD));
        double dt = vc_wtime() - t0;
        if (c == 0 && me != 0 && rs_flags[0] && dt > 0.15)
            FAIL("reduce_scatter through the slots: a rank with no block waited %.0f ms for "
                 "the late rank 0", dt * 1e3);
        for (int e = 0; me == 0 && e < 3; e++) {
            uint32_t want = (uint32_t)(p * (c * 1000 + e) + 10 * p * (p - 1) / 2);
            if (r[e] != want) {
                FAIL("reduce_scatter, blockless ranks ahead, call %d: elem %d = %u want %u", c,
                     e, r[e], want);
                break;
            }
        }
    }
}

/* ---- scan / exscan ---- */

static void test_scan(vc_comm_t comm, size_t count, int ex, int k, int nb, int ip)
{
    int me, p;
    vc_request_t rq;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    uint32_t *s = malloc((count + 1) * 4), *r = malloc((count + 1) * 4);
    uint32_t *in = ip ? r : s;
    for (size_t e = 0; e < count; e++) {
        in[e] = rval(k, me, e);
        if (!ip)
            r[e] = 0x5a5a5a5au;
    }
    const void *sb = ip ? VC_IN_PLACE : s;
    int rc;
    if (ex)
        rc = nb ? vc_iexscan(sb, r, count, r_dt(k), r_op(k), comm, &rq)
                : vc_exscan(sb, r, count, r_dt(k), r_op(k), comm);
    else
        rc = nb ? vc_iscan(sb, r, count, r_dt(k), r_op(k), comm, &rq)
                : vc_scan(sb, r, count, r_dt(k), r_op(k), comm);
    OK(wait_if(&rq, nb, rc));
    for (size_t e = 0; e < count; e++) {
        uint32_t want = ex && me == 0 ? (ip ? rval(k, 0, e) : 0x5a5a5a5au)   /* untouched */
                                      : rfold(k, ex ? me : me + 1, e);
        if (r[e] != want) {
            FAIL("%s op %d count %zu nb %d ip %d: elem %zu", ex ? "exscan" : "scan", k, count,
                 nb, ip, e);
            break;
        }
    }
    free(s);
    free(r);
}

/* ---- user ops through allreduce and reduce ---- */

static void test_user_allreduce(vc_comm_t comm, size_t count, int k)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    uint32_t *s = malloc((count + 1) * 4), *r = malloc((count + 1) * 4);
    for (size_t e = 0; e < count; e++)
        s[e] = rval(k, me, e);
    OK(vc_allreduce(s, r, count, VC_UINT32, r_op(k), comm));
    for (size_t e = 0; e < count; e++)
        if (r[e] != rfold(k, p, e)) {
            FAIL("allreduce user op %d count %zu: elem %zu", k, count, e);
            break;
        }
    vc_request_t rq;
    OK(vc_iallreduce(VC_IN_PLACE, s, count, VC_UINT32, r_op(k), comm, &rq));
    OK(vc_wait(&rq, VC_STATUS_IGNORE));
    if (count && memcmp(s, r, count * 4))
        FAIL("iallreduce in place user op %d count %zu", k, count);
    for (int root = 0; root < p; root++) {
        for (size_t e = 0; e < count; e++) {
            s[e] = rval(k, me, e);
            r[e] = 0;
        }
        OK(vc_reduce(s, me == root ? r : NULL, count, VC_UINT32, r_op(k), root, comm));
        for (size_t e = 0; e < count && me == root; e++)
            if (r[e] != rfold(k, p, e)) {
                FAIL("reduce user op %d count %zu root %d: elem %zu", k, count, root, e);
                break;
            }
    }
    free(s);
    free(r);
}

static void test_all(vc_comm_t comm)
{
    size_t counts[] = {0, 1, 5, 3000};   /* 3000 x 4 B per block: rendezvous */
    for (int c = 0; c < 4; c++)
        for (int nb = 0; nb < 2; nb++)
            for (int ip = 0; ip < 2; ip++) {
                test_alltoall(comm, counts[c], nb, ip);
                test_alltoallv(comm, counts[c], nb, ip);
                for (int k = R_SUM; k <= R_AFFINE; k++) {
                    test_reduce_scatter(comm, counts[c], 1, k, nb, ip);
                    test_reduce_scatter(comm, counts[c], 0, k, nb, ip);
                    test_scan(comm, counts[c], 0, k, nb, ip);
                    test_scan(comm, counts[c], 1, k, nb, ip);
                }
            }
    for (int c = 0; c < 4; c++)
        for (int k = R_ADD; k <= R_AFFINE; k++)
            test_user_allreduce(comm, counts[c], k);
    test_rewritten(comm);
    if (a2a_shm)
        for (int ip = 0; ip < 2; ip++) {
            test_alltoall(comm, 20000, 0, ip);
            test_alltoallv(comm, 8000, 0, ip);      /* wraps the rings */
            test_alltoallv(comm, 20000, 0, ip);     /* blocks to 240 KB: some as messages */
        }
}

/* several non-blocking ones in flight at once */
static void test_overlap(void)
{
    enum { N = 33 };
    uint32_t s[4][N * 8], r[4][N * 8];
    vc_request_t rq[4];
    int p = mp_size, me = mp_rank;
    if (p > 8)
        return;
    for (size_t e = 0; e < (size_t)N * (size_t)p; e++) {
        s[0][e] = a2a_val(me, (int)(e / N), e % N);
        s[1][e] = rval(R_AFFINE, me, e);
    }
    for (size_t e = 0; e < N; e++)
        s[2][e] = s[3][e] = rval(R_AFFINE, me, e);
    OK(vc_ialltoall(s[0], r[0], N, VC_UINT32, VC_COMM_WORLD, &rq[0]));
    OK(vc_ireduce_scatter_block(s[1], r[1], N, VC_UINT32, op_affine, VC_COMM_WORLD, &rq[1]));
    OK(vc_iscan(s[2], r[2], N, VC_UINT32, op_affine, VC_COMM_WORLD, &rq[2]));
    OK(vc_iexscan(s[3], r[3], N, VC_UINT32, op_affine, VC_COMM_WORLD, &rq[3]));
    OK(vc_waitall(4, rq, NULL));
    for (size_t i = 0; i < N; i++) {
        for (int j = 0; j < p; j++)
            if (r[0][(size_t)j * N + i] != a2a_val(j, me, i))
                FAIL("overlapped ialltoall");
        if (r[1][i] != rfold(R_AFFINE, p, (size_t)me * N + i))
            FAIL("overlapped ireduce_scatter_block elem %zu", i);
        if (r[2][i] != rfold(R_AFFINE, me + 1, i))
            FAIL("overlapped iscan elem %zu", i);
        if (me && r[3][i] != rfold(R_AFFINE, me, i))
            FAIL("overlapped iexscan elem %zu", i);
    }
}

/* every rank passes the same bad argument: all get the error, none hangs */
/* Counts that do not match across ranks (erroneous, but must end with an
   error, not a hang or a write past the block): rank 0 sends rank 1 more
   than rank 1 expects, once streamed (small) and once as a message (big);
   rank 1 gets VC_ERR_TRUNCATE, everyone else completes. */
static void test_mismatch(void)
{
    int p = mp_size, me = mp_rank;
    if (p < 2)
        return;
    for (int big = 0; big < 2; big++) {
        size_t n = big ? 40000 : 2;
        size_t *sc = calloc((size_t)p, sizeof *sc), *sd = calloc((size_t)p, sizeof *sd);
        size_t *rc = calloc((size_t)p, sizeof *rc), *rd = calloc((size_t)p, sizeof *rd);
        for (int j = 0; j < p; j++) {
            sc[j] = me == 0 && j == 1 ? 2 * n : n;
            sd[j] = (size_t)j * 2 * n;
            rc[j] = n;
            rd[j] = (size_t)j * 2 * n;
        }
        uint32_t *s = calloc((size_t)p * 2 * n, 4), *r = malloc((size_t)p * 2 * n * 4);
        memset(r, 0xee, (size_t)p * 2 * n * 4);
        int got = vc_alltoallv(s, sc, sd, r, rc, rd, VC_UINT32, VC_COMM_WORLD);
        if (me == 1 && got != VC_ERR_TRUNCATE)
            FAIL("alltoallv, %s block longer than expected: %d, want VC_ERR_TRUNCATE",
                 big ? "a message" : "a streamed", got);
        if (me != 1 && got != VC_SUCCESS)
            FAIL("alltoallv with rank 1's counts short: rank %d got %d", me, got);
        if (me == 1 && r[n] != 0xeeeeeeeeu)
            FAIL("alltoallv wrote past the block rank 1 expected from rank 0");
        free(s); free(r); free(sc); free(sd); free(rc); free(rd);
    }
}

static void test_errors(void)
{
    int p = mp_size;
    uint32_t s[64] = {0}, r[64] = {0};
    size_t *c = calloc((size_t)p, sizeof *c), *d = calloc((size_t)p, sizeof *d);
    vc_request_t rq;
    vc_comm_t W = VC_COMM_WORLD;
    EXPECT_RC(vc_alltoall(s, NULL, 1, VC_UINT32, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_alltoall(NULL, r, 1, VC_UINT32, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_alltoall(s, VC_IN_PLACE, 1, VC_UINT32, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_alltoall(s, r, SIZE_MAX / 2, VC_UINT32, W), VC_ERR_COUNT);
    EXPECT_RC(vc_alltoall(s, r, 1, (vc_dtype_t)99, W), VC_ERR_DTYPE);
    EXPECT_RC(vc_alltoall(s, r, 1, VC_UINT32, VC_COMM_NULL), VC_ERR_COMM);
    EXPECT_RC(vc_ialltoall(s, r, 1, VC_UINT32, W, NULL), VC_ERR_ARG);
    for (int j = 0; j < p; j++) {
        c[j] = 1;
        d[j] = (size_t)j;
    }
    EXPECT_RC(vc_alltoallv(s, c, d, r, NULL, d, VC_UINT32, W), VC_ERR_ARG);
    EXPECT_RC(vc_alltoallv(s, c, d, r, c, NULL, VC_UINT32, W), VC_ERR_ARG);
    EXPECT_RC(vc_alltoallv(s, c, NULL, r, c, d, VC_UINT32, W), VC_ERR_ARG);
    EXPECT_RC(vc_alltoallv(s, NULL, d, r, c, d, VC_UINT32, W), VC_ERR_ARG);
    EXPECT_RC(vc_alltoallv(s, c, d, NULL, c, d, VC_UINT32, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_ialltoallv(s, c, d, r, c, d, VC_UINT32, W, NULL), VC_ERR_ARG);
    if (p > 1) {
        d[p - 1] = 0;   /* two peers' blocks on the same element */
        EXPECT_RC(vc_alltoallv(s, c, d, r, c, d, VC_UINT32, W), VC_ERR_ARG);
        d[p - 1] = SIZE_MAX;
        EXPECT_RC(vc_alltoallv(s, c, d, r, c, d, VC_UINT32, W), VC_ERR_COUNT);
        d[p - 1] = (size_t)p - 1;
        /* blocks in rank order, the first one long enough to run into the
           second: the check that needs no sorting must see it too */
        size_t *rc2 = calloc((size_t)p, sizeof *rc2);
        memcpy(rc2, c, (size_t)p * sizeof *rc2);
        rc2[0] = 2;
        EXPECT_RC(vc_alltoallv(s, c, d, r, rc2, d, VC_UINT32, W), VC_ERR_ARG);
        free(rc2);
    }
    EXPECT_RC(vc_reduce_scatter(s, r, NULL, VC_UINT32, VC_SUM, W), VC_ERR_ARG);
    c[0] = SIZE_MAX;
    EXPECT_RC(vc_reduce_scatter(s, r, c, VC_UINT32, VC_SUM, W), VC_ERR_COUNT);
    c[0] = 1;
    EXPECT_RC(vc_reduce_scatter(s, r, c, VC_FLOAT, VC_BXOR, W), VC_ERR_OP);
    EXPECT_RC(vc_reduce_scatter(NULL, r, c, VC_UINT32, VC_SUM, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_ireduce_scatter(s, r, c, VC_UINT32, VC_SUM, W, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_reduce_scatter_block(s, NULL, 1, VC_UINT32, VC_SUM, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_reduce_scatter_block(s, r, SIZE_MAX / 2, VC_UINT32, VC_SUM, W), VC_ERR_COUNT);
    EXPECT_RC(vc_reduce_scatter_block(s, r, 1, VC_UINT32, (vc_op_t)99, W), VC_ERR_OP);
    EXPECT_RC(vc_ireduce_scatter_block(s, r, 1, VC_UINT32, VC_SUM, W, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_scan(NULL, r, 1, VC_INT32, VC_SUM, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_scan(s, r, 1, VC_DOUBLE, VC_BAND, W), VC_ERR_OP);
    EXPECT_RC(vc_scan(s, r, SIZE_MAX / 2, VC_INT32, VC_SUM, W), VC_ERR_COUNT);
    EXPECT_RC(vc_iscan(s, r, 1, VC_INT32, VC_SUM, W, NULL), VC_ERR_ARG);
    EXPECT_RC(vc_exscan(s, VC_IN_PLACE, 1, VC_INT32, VC_SUM, W), VC_ERR_BUFFER);
    EXPECT_RC(vc_iexscan(s, r, 1, VC_INT32, VC_SUM, VC_COMM_NULL, &rq), VC_ERR_COMM);
    /* a freed user op is refused */
    vc_op_t gone;
    OK(vc_op_create(add_fn, 1, &gone));
    vc_op_t stale = gone;
    OK(vc_op_free(&gone));
    EXPECT_RC(vc_scan(s, r, 1, VC_UINT32, stale, W), VC_ERR_OP);
    EXPECT_RC(vc_reduce_scatter_block(s, r, 1, VC_UINT32, stale, W), VC_ERR_OP);
    /* and the job still works */
    test_alltoall(W, 2, 0, 0);
    free(c);
    free(d);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    OK(vc_op_create(affine_fn, 0, &op_affine));
    OK(vc_op_create(add_fn, 1, &op_add));
    a2a_shm = mp_forced_on_one_node("VCOLL_ALLTOALL_ALG", "shm") &&
              mp_forced_on_one_node("VCOLL_ALLTOALLV_ALG", "shm");
    a2av_flags = mp_forced_on_one_node("VCOLL_ALLTOALLV_ALG", "flags");
    rs_flags[0] = mp_forced_on_one_node("VCOLL_REDUCE_SCATTER_ALG", "flags");
    rs_flags[1] = mp_forced_on_one_node("VCOLL_REDUCE_SCATTER_BLOCK_ALG", "flags");
    test_all(VC_COMM_WORLD);
    test_overlap();
    /* halves by parity, reversed order: comm ranks differ from world ranks */
    vc_comm_t half;
    OK(vc_comm_split(VC_COMM_WORLD, mp_rank % 2, mp_size - mp_rank, &half));
    test_all(half);
    OK(vc_comm_free(&half));
    test_rs_blockless();
    test_errors();
    if (a2a_shm || a2av_flags)
        test_mismatch();
    OK(vc_op_free(&op_affine));
    OK(vc_op_free(&op_add));
    return mp_finish("mp_coll_a2a");
}
