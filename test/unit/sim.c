/* sim.c -- the schedule simulator (see sim.h). */
#include <malloc.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "dtype/dtype.h"
#include <CUnit/Basic.h>

char failmsg[512];

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

/* Why an arena: under ASan every allocation above 128 KiB is its own
   mmap, faulted in and unmapped per case, and freed blocks sit in the
   quarantine, so most of the ASan stage's simulator time went to page
   faults (test_coll_hier 61 s, test_coll 43 s). The reserve is address
   space only (MAP_NORESERVE); a case uses at most ~100 MB of it. */
#define ARENA_SIZE ((size_t)1 << 31)
#define ARENA_GAP 64
static unsigned char *arena;
static size_t arena_used, arena_high;

void *sim_buf(size_t len)
{
    if (!arena) {
        void *m = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            perror("sim_buf: mmap of the test arena");
            abort();
        }
        arena = m;
        ASAN_POISON_MEMORY_REGION(arena, ARENA_SIZE);
    }
    size_t at = arena_used + ARENA_GAP;   /* a poisoned gap before each */
    if (len > ARENA_SIZE - at - ARENA_GAP) {
        fprintf(stderr, "sim_buf: a case needs more than %zu bytes\n", ARENA_SIZE);
        abort();
    }
    arena_used = (at + len + ARENA_GAP - 1) / ARENA_GAP * ARENA_GAP;
    if (arena_used > arena_high)
        arena_high = arena_used;
    ASAN_UNPOISON_MEMORY_REGION(arena + at, len);
    return arena + at;
}

void *sim_buf_zero(size_t len)
{
    return memset(sim_buf(len), 0, len);
}

void sim_buf_reset(void)
{
    if (arena)
        ASAN_POISON_MEMORY_REGION(arena, arena_high);
    arena_used = 0;
}

static void q_push(sim_q_t *q, int rank, int step)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 8;
        q->e = realloc(q->e, (size_t)q->cap * sizeof *q->e);
    }
    q->e[q->n].rank = rank;
    q->e[q->n].step = step;
    q->n++;
}

static int q_len(const sim_q_t *q) { return q->n - q->head; }

int sim_fail(sim_t *S, const char *fmt, int a, int b)
{
    if (!S->err)
        snprintf(failmsg, sizeof failmsg, fmt, a, b);
    S->err = 1;
    return 1;
}

static int in_bounds(sim_t *S, int rank, int buf, size_t off, size_t len)
{
    sim_rank_t *R = &S->r[rank];
    if (buf < 0 || buf >= COLL_NBUF)
        return !sim_fail(S, "rank %d: bad buffer id %d", rank, buf);
    if (off > R->len[buf] || len > R->len[buf] - off)
        return !sim_fail(S, "rank %d: out of bounds access on buffer %d", rank, buf);
    return 1;
}

static void sim_match(sim_t *S, int src, int sstep, int dst, int rstep)
{
    coll_step_t *ss = &S->r[src].s.steps[sstep];
    coll_step_t *rs = &S->r[dst].s.steps[rstep];
    if (ss->bytes != rs->bytes) {
        sim_fail(S, "message size mismatch %d -> %d", src, dst);
        return;
    }
    if (ss->bytes)
        memcpy(S->r[dst].buf[rs->dbuf] + rs->doff,
               S->r[src].buf[ss->abuf] + ss->aoff, ss->bytes);
    S->r[dst].know_next |= S->r[src].know;
    S->r[src].pending--;
    S->r[dst].pending--;
}

static int overlap(size_t a0, size_t al, size_t b0, size_t bl)
{
    return al && bl && a0 < b0 + bl && b0 < a0 + al;
}

/* checks on one round before posting it */
static void sim_check_round(sim_t *S, int rank, int b, int e)
{
    sim_rank_t *R = &S->r[rank];
    for (int i = b; i < e && !S->err; i++) {
        coll_step_t *st = &R->s.steps[i];
        if (st->kind == STEP_SEND || st->kind == STEP_RECV) {
            if (st->peer < 0 || st->peer >= S->p || st->peer == rank) {
                sim_fail(S, "rank %d: bad peer %d", rank, st->peer);
                return;
            }
        }
        switch (st->kind) {
        case STEP_SEND:
            in_bounds(S, rank, st->abuf, st->aoff, st->bytes);
            break;
        case STEP_RECV:
        case STEP_COPY:
        case STEP_REDUCE:
            if (st->dbuf == COLL_SBUF)
                sim_fail(S, "rank %d: step %d writes SBUF", rank, i);
            in_bounds(S, rank, st->dbuf, st->doff, st->bytes);
            if (st->kind != STEP_RECV)
                in_bounds(S, rank, st->abuf, st->aoff, st->bytes);
            if (st->kind == STEP_REDUCE) {
                in_bounds(S, rank, st->bbuf, st->boff, st->bytes);
                if (st->bytes % R->s.esize)
                    sim_fail(S, "rank %d: reduce of partial element, step %d", rank, i);
            }
            if (st->kind == STEP_COPY && st->dbuf == st->abuf &&
                overlap(st->doff, st->bytes, st->aoff, st->bytes))
                sim_fail(S, "rank %d: overlapping copy, step %d", rank, i);
            break;
        default:
            sim_fail(S, "rank %d: unknown step kind at %d", rank, i);
        }
        if (st->kind != STEP_RECV)
            continue;
        for (int j = b; j < e; j++) {
            coll_step_t *o = &R->s.steps[j];
            if (j == i)
                continue;
            if (o->kind == STEP_RECV && o->dbuf == st->dbuf &&
                overlap(st->doff, st->bytes, o->doff, o->bytes))
                sim_fail(S, "rank %d: receives overlap in round (step %d)", rank, i);
            if (o->kind == STEP_SEND && o->abuf == st->dbuf &&
                overlap(st->doff, st->bytes, o->aoff, o->bytes))
                sim_fail(S, "rank %d: receive overlaps a send in round (step %d)", rank, i);
        }
    }
}

static void sim_post(sim_t *S, int rank)
{
    sim_rank_t *R = &S->r[rank];
    int b = R->s.round[R->round], e = R->s.round[R->round + 1];
    sim_check_round(S, rank, b, e);
    if (S->err)
        return;
    R->know_next = R->know;
    /* receives first, then sends, each in schedule order (as exec.c) */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = b; i < e; i++) {
            coll_step_t *st = &R->s.steps[i];
            int want = pass == 0 ? STEP_RECV : STEP_SEND;
            if (st->kind != want)
                continue;
            R->pending++;
            if (want == STEP_RECV) {
                sim_q_t *q = &S->sendq[st->peer][rank];
                if (q_len(q)) {
                    sim_ent_t m = q->e[q->head++];
                    sim_match(S, m.rank, m.step, rank, i);
                } else {
                    q_push(&S->recvq[rank][st->peer], rank, i);
                }
            } else {
                sim_q_t *q = &S->recvq[st->peer][rank];
                if (q_len(q)) {
                    sim_ent_t m = q->e[q->head++];
                    sim_match(S, rank, i, st->peer, m.step);
                } else {
                    q_push(&S->sendq[rank][st->peer], rank, i);
                }
            }
        }
    }
}

static void sim_local(sim_t *S, int rank)
{
    sim_rank_t *R = &S->r[rank];
    int b = R->s.round[R->round], e = R->s.round[R->round + 1];
    for (int i = b; i < e; i++)
        sched_local_step(&R->s, &R->s.steps[i], R->buf);
    R->know = R->know_next;
}

/* Run all ranks to completion. Returns 0 on success. */
int sim_run(sim_t *S)
{
    int progress = 1;
    while (progress && !S->err) {
        progress = 0;
        for (int i = 0; i < S->p && !S->err; i++) {
            sim_rank_t *R = &S->r[i];
            if (R->finished)
                continue;
            if (R->round >= R->s.nrounds) {
                R->finished = 1;
                progress = 1;
                continue;
            }
            if (!R->posted) {
                sim_post(S, i);
                R->posted = 1;
                progress = 1;
            }
            if (R->posted && R->pending == 0 && !S->err) {
                sim_local(S, i);
                R->round++;
                R->posted = 0;
                progress = 1;
            }
        }
    }
    if (S->err)
        return 1;
    for (int i = 0; i < S->p; i++)
        if (!S->r[i].finished)
            return sim_fail(S, "deadlock: rank %d stuck in round %d", i, S->r[i].round);
    for (int i = 0; i < S->p; i++)
        for (int j = 0; j < S->p; j++)
            if (q_len(&S->sendq[i][j]) || q_len(&S->recvq[i][j]))
                return sim_fail(S, "unmatched messages between %d and %d", i, j);
    return 0;
}

void sim_free(sim_t *S)
{
    for (int i = 0; i < S->p; i++) {
        sched_free(&S->r[i].s);
        for (int j = 0; j < S->p; j++) {
            free(S->sendq[i][j].e);
            free(S->recvq[i][j].e);
        }
    }
    memset(S, 0, sizeof *S);
    sim_buf_reset();
}

void sim_summary(int ncases, int nfail)
{
    printf("\n  simulated cases: %d, failed: %d\n", ncases, nfail);
    CU_ASSERT(ncases > 0);
    CU_ASSERT_EQUAL(nfail, 0);
}

int sim_cunit_main(void)
{
    /* Tens of thousands of cases each allocate and free every rank's
       buffers. glibc hands the top of the heap back to the kernel after
       each case and faults it in again for the next: on a sandboxed box
       (costly page faults) that was 90 % of test_coll_hier's 105 s. Keep
       the heap and its big blocks instead (a test process, not the
       library: vcoll leaves the user's malloc settings alone). No-ops
       under ASan, whose allocator is its own. */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failures = (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
