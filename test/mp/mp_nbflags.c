/*
 * mp_nbflags.c -- small non-blocking collectives of a world on one node,
 * which go through the node's flag slots (shm_flags_nb.c), any np.
 *
 * Waves of calls of every kind the slots serve (ibarrier, ibcast, ireduce,
 * iallreduce, igather, iscatter, iallgather, ialltoall), with rotating
 * roots, in place or not, sizes up to what a slot holds, are started back
 * to back (more than the two slots, so later ones queue behind earlier
 * ones), with a blocking allreduce between some of the starts. Even ranks
 * complete a wave first to last, odd ranks last to first, by vc_wait, a
 * vc_test loop or vc_waitall; rank 0 starts late in every other wave. Every
 * element is checked against values computed here from (source,
 * destination, wave, call, index). On one node with two or more ranks and
 * the shared-memory transport the library's counter must show every call
 * took the slots (over rc or ud alone the same program checks the
 * schedules). Then a call that
 * does not fit a slot must go on as messages, alike on every rank.
 * Run under mpirun; exit 0 on success.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "mp_util.h"
#include "coll/coll.h"
#include "coll/shm_run.h"

#define P mp_size
#define ME mp_rank
#define U32 VC_UINT32
#define WAVES 12
#define CALLS 10    /* per wave: more than the two slots */

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_SCATTER, K_ALLGATHER,
       K_ALLTOALL, NK };
static const char *const names[NK] = {"ibarrier", "ibcast", "ireduce", "iallreduce",
                                      "igather", "iscatter", "iallgather", "ialltoall"};

static uint32_t val(int src, int dst, int w, int c, size_t i)
{
    uint32_t h = (uint32_t)src * 2654435761u + (uint32_t)(dst + 1) * 40503u +
                 (uint32_t)w * 97u + (uint32_t)c * 131u + (uint32_t)i * 7919u;
    return h ^ (h >> 13);
}

#define UNTOUCHED 0xdeadbeefu

typedef struct call {
    int kind, root, inplace;
    size_t n;               /* elements per block */
    uint32_t *s, *r;
} call_t;

/* a size that fits a slot for this kind and np: 2 KiB less the header,
   divided by the blocks a line holds (allgather: by np too, as selection
   sizes the blocking one's whole result) */
static size_t pick_n(int kind, int w, int c)
{
    size_t line = (2104 - 16) / 4;
    size_t per = kind == K_ALLTOALL || kind == K_SCATTER || kind == K_ALLGATHER ? (size_t)P : 1;
    size_t most = line / per;
    size_t sizes[] = {1, 2, 7, 33, most};
    size_t n = sizes[(w + c) % 5];
    return n > most ? most : n;
}

static void setup(call_t *k, int kind, int w, int c)
{
    k->kind = kind;
    k->root = (w + c) % P;
    k->n = kind == K_BARRIER ? 0 : pick_n(kind, w, c);
    k->inplace = kind != K_BCAST && kind != K_BARRIER && (w + c) % 3 == 0;
    size_t n = k->n, sl = n, rl = n;
    switch (kind) {
    case K_GATHER: rl = n * (size_t)P; break;
    case K_SCATTER: sl = n * (size_t)P; break;
    case K_ALLGATHER: rl = n * (size_t)P; break;
    case K_ALLTOALL: sl = rl = n * (size_t)P; break;
    default: break;
    }
    k->s = malloc((sl + 1) * 4);
    k->r = malloc((rl + 1) * 4);
    for (size_t i = 0; i <= sl; i++)
        k->s[i] = UNTOUCHED;
    for (size_t i = 0; i <= rl; i++)
        k->r[i] = UNTOUCHED;
    switch (kind) {
    case K_BCAST:
        for (size_t i = 0; i < n; i++)
            k->r[i] = ME == k->root ? val(ME, -1, w, c, i) : UNTOUCHED;
        break;
    case K_REDUCE:
    case K_ALLREDUCE:
        for (size_t i = 0; i < n; i++)
            (k->inplace && (kind == K_ALLREDUCE || ME == k->root) ? k->r : k->s)[i] =
                val(ME, -1, w, c, i);
        break;
    case K_GATHER:
    case K_ALLGATHER:
        for (size_t i = 0; i < n; i++) {
            uint32_t v = val(ME, -1, w, c, i);
            if (k->inplace && (kind == K_ALLGATHER || ME == k->root))
                k->r[(size_t)ME * n + i] = v;
            else
                k->s[i] = v;
        }
        break;
    case K_SCATTER:
        if (ME == k->root)
            for (int d = 0; d < P; d++)
                for (size_t i = 0; i < n; i++)
                    k->s[(size_t)d * n + i] = val(ME, d, w, c, i);
        break;
    case K_ALLTOALL:
        for (int d = 0; d < P; d++)
            for (size_t i = 0; i < n; i++)
                (k->inplace ? k->r : k->s)[(size_t)d * n + i] = val(ME, d, w, c, i);
        break;
    default: break;
    }
}

static int start(call_t *k, vc_request_t *q)
{
    const void *s = k->s;
    size_t n = k->n;
    switch (k->kind) {
    case K_BARRIER: return vc_ibarrier(VC_COMM_WORLD, q);
    case K_BCAST: return vc_ibcast(k->r, n, U32, k->root, VC_COMM_WORLD, q);
    case K_REDUCE:
        if (k->inplace && ME == k->root)
            s = VC_IN_PLACE;
        return vc_ireduce(s, ME == k->root ? k->r : NULL, n, U32, VC_SUM, k->root,
                          VC_COMM_WORLD, q);
    case K_ALLREDUCE:
        return vc_iallreduce(k->inplace ? VC_IN_PLACE : s, k->r, n, U32, VC_SUM,
                             VC_COMM_WORLD, q);
    case K_GATHER:
        if (k->inplace && ME == k->root)
            s = VC_IN_PLACE;
        return vc_igather(s, ME == k->root ? k->r : NULL, n, U32, k->root, VC_COMM_WORLD, q);
    case K_SCATTER:
        return vc_iscatter(ME == k->root ? s : NULL,
                           k->inplace && ME == k->root ? VC_IN_PLACE : k->r, n, U32, k->root,
                           VC_COMM_WORLD, q);
    case K_ALLGATHER:
        return vc_iallgather(k->inplace ? VC_IN_PLACE : s, k->r, n, U32, VC_COMM_WORLD, q);
    default:
        return vc_ialltoall(k->inplace ? VC_IN_PLACE : s, k->r, n, U32, VC_COMM_WORLD, q);
    }
}

static void expect(const call_t *k, int w, int c, size_t i, uint32_t got, uint32_t want)
{
    if (got != want)
        FAIL("wave %d call %d: %s n=%zu root %d%s: element %zu is %#x, expected %#x", w, c,
             names[k->kind], k->n, k->root, k->inplace ? " in place" : "", i,
             (unsigned)got, (unsigned)want);
}

static void check(call_t *k, int w, int c)
{
    size_t n = k->n;
    switch (k->kind) {
    case K_BCAST:
        for (size_t i = 0; i < n; i++)
            expect(k, w, c, i, k->r[i], val(k->root, -1, w, c, i));
        expect(k, w, c, n, k->r[n], UNTOUCHED);
        break;
    case K_REDUCE:
    case K_ALLREDUCE:
        if (k->kind == K_REDUCE && ME != k->root)
            break;
        for (size_t i = 0; i < n; i++) {
            uint32_t sum = 0;
            for (int r = 0; r < P; r++)
                sum += val(r, -1, w, c, i);
            expect(k, w, c, i, k->r[i], sum);
        }
        expect(k, w, c, n, k->r[n], UNTOUCHED);
        break;
    case K_GATHER:
    case K_ALLGATHER:
        if (k->kind == K_GATHER && ME != k->root)
            break;
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < n; i++)
                expect(k, w, c, (size_t)r * n + i, k->r[(size_t)r * n + i], val(r, -1, w, c, i));
        expect(k, w, c, (size_t)P * n, k->r[(size_t)P * n], UNTOUCHED);
        break;
    case K_SCATTER: {
        const uint32_t *b = k->inplace && ME == k->root ? k->s + (size_t)ME * n : k->r;
        for (size_t i = 0; i < n; i++)
            expect(k, w, c, i, b[i], val(k->root, ME, w, c, i));
        if (!(k->inplace && ME == k->root))
            expect(k, w, c, n, k->r[n], UNTOUCHED);
        break;
    }
    case K_ALLTOALL:
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < n; i++)
                expect(k, w, c, (size_t)r * n + i, k->r[(size_t)r * n + i], val(r, ME, w, c, i));
        expect(k, w, c, (size_t)P * n, k->r[(size_t)P * n], UNTOUCHED);
        break;
    default: break;
    }
    free(k->s);
    free(k->r);
}

/* a blocking allreduce between starts: the blocking calls' own ring */
static void blocking_between(int w, int c)
{
    uint32_t in = val(ME, -1, w, c + 100, 0), out = 0, want = 0;
    for (int r = 0; r < P; r++)
        want += val(r, -1, w, c + 100, 0);
    OK(vc_allreduce(&in, &out, 1, U32, VC_SUM, VC_COMM_WORLD));
    if (out != want)
        FAIL("wave %d: blocking allreduce between starts: %#x, expected %#x", w,
             (unsigned)out, (unsigned)want);
}

static void wave(int w)
{
    call_t k[CALLS];
    vc_request_t q[CALLS];
    if (ME == 0 && (w & 1))
        usleep(2000);   /* the others start, queue and wait on a late rank */
    for (int c = 0; c < CALLS; c++) {
        setup(&k[c], (w * 3 + c) % NK, w, c);
        OK(start(&k[c], &q[c]));
        if (c == 4)
            blocking_between(w, c);
    }
    int how = w % 3;
    if (how == 2) {
        OK(vc_waitall(CALLS, q, NULL));
    } else {
        for (int j = 0; j < CALLS; j++) {
            int c = ME & 1 ? CALLS - 1 - j : j;
            if (how == 0) {
                OK(vc_wait(&q[c], VC_STATUS_IGNORE));
            } else {
                int flag = 0;
                while (!flag)
                    OK(vc_test(&q[c], &flag, VC_STATUS_IGNORE));
            }
        }
    }
    for (int c = 0; c < CALLS; c++)
        check(&k[c], w, c);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    /* the slots live in the shared-memory transport's segment: not there
       when the job is forced onto rc or ud (the guest's runs) */
    const char *net = getenv("VCOLL_NET");
    int slots = P > 1 && mp_on_one_node() &&
                (!net || !strcmp(net, "auto") || !strcmp(net, "shm"));
    uint64_t c0 = coll_flags_nb_calls(VC_COMM_WORLD);
    for (int w = 0; w < WAVES; w++)
        wave(w);
    uint64_t got = coll_flags_nb_calls(VC_COMM_WORLD) - c0;
    if (slots && !getenv("VCOLL_BARRIER_ALG") && got != (uint64_t)WAVES * CALLS)
        FAIL("%llu of %d non-blocking calls went through the node's slots",
             (unsigned long long)got, WAVES * CALLS);
    /* too big for a slot: messages, on every rank alike, right all the same */
    size_t n = 4096;
    uint32_t *s = malloc(n * 4), *r = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        s[i] = val(ME, -1, 99, 0, i);
    vc_request_t q;
    uint64_t c1 = coll_flags_nb_calls(VC_COMM_WORLD);
    OK(vc_iallreduce(s, r, n, U32, VC_SUM, VC_COMM_WORLD, &q));
    OK(vc_wait(&q, VC_STATUS_IGNORE));
    for (size_t i = 0; i < n; i++) {
        uint32_t want = 0;
        for (int p = 0; p < P; p++)
            want += val(p, -1, 99, 0, i);
        if (r[i] != want) {
            FAIL("iallreduce of %zu elements: element %zu is %#x, expected %#x", n, i,
                 (unsigned)r[i], (unsigned)want);
            break;
        }
    }
    if (coll_flags_nb_calls(VC_COMM_WORLD) != c1)
        FAIL("an iallreduce of %zu bytes went through the node's slots", n * 4);
    free(s);
    free(r);
    return mp_finish("mp_nbflags");
}
