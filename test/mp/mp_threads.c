/*
 * mp_threads.c -- thread levels, and VC_THREAD_MULTIPLE really used.
 *
 * Checks the level API (bad levels refused with *provided untouched, query
 * before init, what vc_init grants), then runs MP_THREADS threads per rank
 * (default 4), each on its own duplicate of the world, all at once: ring
 * exchanges blocking and non-blocking, eager and above VCOLL_EAGER_LIMIT,
 * plus allreduce, bcast, barrier and an iallreduce left in flight across
 * p2p traffic. Every thread also exchanges on VC_COMM_WORLD with its own
 * tag, so concurrent matching on one communicator is exercised too, and
 * duplicates and splits its communicator while the others do the same, and
 * on every iteration makes a group from the world with its own tag. All
 * threads use the same tags on their own communicators and every payload
 * names its thread, so a message delivered to the wrong communicator or
 * thread shows up as a wrong value.
 *
 * MP_THREAD_LEVEL=single|funneled|serialized|multiple (default multiple)
 * picks what is requested; below multiple the threads run one at a time
 * (serialized) or the work runs in the main thread (single, funneled).
 */
#include <pthread.h>
#include "mp_util.h"

#define MAX_THREADS 16
#define NSIZES 5
#define TAG_WORLD 100
#define TAG_GROUP 200

static int nthreads = 4, iters = 20;
static size_t eager = 8192;
static vc_comm_t comms[MAX_THREADS];

static uint8_t pat(int t, int it, int src, size_t len, size_t i)
{
    return (uint8_t)(t * 59 + it * 7 + src * 31 + len * 3 + i * 13 + (i >> 9));
}

static void fill(uint8_t *b, int t, int it, int src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        b[i] = pat(t, it, src, len, i);
}

static void check(const uint8_t *b, int t, int it, int src, size_t len, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pat(t, it, src, len, i)) {
            FAIL("thread %d iter %d %s from %d: %zu bytes, byte %zu is %u, expected %u",
                 t, it, what, src, len, i, b[i], pat(t, it, src, len, i));
            return;
        }
}

/* contribution of `rank` to element i of thread t's allreduce at iteration it */
static int64_t contrib(int t, int it, int rank, size_t i)
{
    return (int64_t)(rank + 1) * 1000003 + (int64_t)t * 7919 + it * 131 + (int64_t)i;
}

typedef struct {
    int t, rank, size, left, right;
    vc_comm_t comm;
    vc_comm_t sub, half;        /* created by the thread, while the others do too */
    uint8_t *sbuf, *rbuf;
    int64_t *ain, *aout, *iin, *iout;
    size_t sizes[NSIZES], acount;
} worker_t;

/* blocking: ordered send/recv where the ring has a partner, else sendrecv */
static void ring_blocking(worker_t *w, int it, size_t len, int tag)
{
    fill(w->sbuf, w->t, it, w->rank, len);
    memset(w->rbuf, 0xee, len);
    vc_status_t st;
    if (w->size > 1 && (w->rank & 1)) {
        OK(vc_recv(w->rbuf, len, VC_BYTE, w->left, tag, w->comm, &st));
        OK(vc_send(w->sbuf, len, VC_BYTE, w->right, tag, w->comm));
    } else if (w->size > 1 && w->rank != w->size - 1) {
        OK(vc_send(w->sbuf, len, VC_BYTE, w->right, tag, w->comm));
        OK(vc_recv(w->rbuf, len, VC_BYTE, w->left, tag, w->comm, &st));
    } else {
        OK(vc_sendrecv(w->sbuf, len, VC_BYTE, w->right, tag, w->rbuf, len, VC_BYTE,
                       w->left, tag, w->comm, &st));
    }
    if (st.source != w->left || st.tag != tag || st.bytes != len)
        FAIL("thread %d: blocking status source %d tag %d bytes %zu, expected %d %d %zu",
             w->t, st.source, st.tag, st.bytes, w->left, tag, len);
    check(w->rbuf, w->t, it, w->left, len, "blocking ring");
}

/* non-blocking, completed with vc_test polling (odd iterations) or vc_waitall */
static void ring_nonblocking(worker_t *w, int it, size_t len, int tag, vc_comm_t comm,
                             int left, int right, int me)
{
    vc_request_t r[2];
    vc_status_t st[2];
    fill(w->sbuf, w->t, it, me, len);
    memset(w->rbuf, 0xee, len);
    OK(vc_irecv(w->rbuf, len, VC_BYTE, VC_ANY_SOURCE, tag, comm, &r[0]));
    OK(vc_isend(w->sbuf, len, VC_BYTE, right, tag, comm, &r[1]));
    if (it & 1) {
        for (int i = 0; i < 2; i++) {
            int flag = 0;
            while (!flag)
                OK(vc_test(&r[i], &flag, &st[i]));
        }
    } else {
        OK(vc_waitall(2, r, st));
    }
    if (st[0].source != left || st[0].bytes != len)
        FAIL("thread %d: non-blocking status source %d bytes %zu, expected %d %zu", w->t,
             st[0].source, st[0].bytes, left, len);
    check(w->rbuf, w->t, it, left, len, comm == VC_COMM_WORLD ? "world ring" : "ring");
}

static void collectives(worker_t *w, int it)
{
    size_t n = it % 3 == 2 ? w->acount : (size_t)(1 + it % 7);
    vc_request_t req;

    /* an iallreduce left in flight over the p2p below: other threads'
       progress may be what completes it */
    for (size_t i = 0; i < n; i++)
        w->iin[i] = contrib(w->t, it + 1000, w->rank, i);
    OK(vc_iallreduce(w->iin, w->iout, n, VC_INT64, VC_SUM, w->comm, &req));

    for (size_t i = 0; i < n; i++)
        w->ain[i] = contrib(w->t, it, w->rank, i);
    OK(vc_allreduce(w->ain, w->aout, n, VC_INT64, VC_SUM, w->comm));
    for (size_t i = 0; i < n; i++) {
        int64_t want = 0;
        for (int r = 0; r < w->size; r++)
            want += contrib(w->t, it, r, i);
        if (w->aout[i] != want) {
            FAIL("thread %d iter %d: allreduce[%zu] = %lld, expected %lld", w->t, it, i,
                 (long long)w->aout[i], (long long)want);
            break;
        }
    }

    int root = it % w->size;
    size_t blen = w->sizes[it % NSIZES];
    if (w->rank == root)
        fill(w->rbuf, w->t, it, root, blen);
    else
        memset(w->rbuf, 0xee, blen);
    OK(vc_bcast(w->rbuf, blen, VC_BYTE, root, w->comm));
    check(w->rbuf, w->t, it, root, blen, "bcast");

    OK(vc_barrier(w->comm));

    OK(vc_wait(&req, VC_STATUS_IGNORE));
    for (size_t i = 0; i < n; i++) {
        int64_t want = 0;
        for (int r = 0; r < w->size; r++)
            want += contrib(w->t, it + 1000, r, i);
        if (w->iout[i] != want) {
            FAIL("thread %d iter %d: iallreduce[%zu] = %lld, expected %lld", w->t, it, i,
                 (long long)w->iout[i], (long long)want);
            break;
        }
    }
}

/* Communicators made by every thread at once from its own parent: their
   context ids must still differ, or traffic crosses between them. Checked
   with an allreduce whose inputs name the thread and the communicator. */
static void sub_comms(worker_t *w, int it)
{
    int64_t in = contrib(w->t, it, w->rank, 0), out = 0, want = 0;
    OK(vc_allreduce(&in, &out, 1, VC_INT64, VC_SUM, w->sub));
    for (int r = 0; r < w->size; r++)
        want += contrib(w->t, it, r, 0);
    if (out != want)
        FAIL("thread %d iter %d: allreduce on its dup = %lld, expected %lld", w->t, it,
             (long long)out, (long long)want);
    /* a group made by every thread at once from the world, each with its
       own tag (the MPI drop-in makes its twins so), ranked backwards: the
       creations' context ids must differ too */
    int ranks[w->size], g_rank = -1;
    vc_comm_t g;
    for (int r = 0; r < w->size; r++)
        ranks[r] = w->size - 1 - r;
    OK(vc_comm_create_group(VC_COMM_WORLD, w->size, ranks, TAG_GROUP + w->t, &g));
    OK(vc_comm_rank(g, &g_rank));
    if (g_rank != w->size - 1 - w->rank)
        FAIL("thread %d iter %d: group rank %d, expected %d", w->t, it, g_rank,
             w->size - 1 - w->rank);
    in = contrib(w->t + 200, it, w->rank, 0);
    OK(vc_allreduce(&in, &out, 1, VC_INT64, VC_SUM, g));
    want = 0;
    for (int r = 0; r < w->size; r++)
        want += contrib(w->t + 200, it, r, 0);
    if (out != want)
        FAIL("thread %d iter %d: allreduce on its group = %lld, expected %lld", w->t, it,
             (long long)out, (long long)want);
    OK(vc_comm_free(&g));
    in = contrib(w->t + 100, it, w->rank, 0);
    OK(vc_allreduce(&in, &out, 1, VC_INT64, VC_MAX, w->half));
    want = 0;
    for (int r = w->rank & 1; r < w->size; r += 2)   /* my half: same parity */
        if (contrib(w->t + 100, it, r, 0) > want)
            want = contrib(w->t + 100, it, r, 0);
    if (out != want)
        FAIL("thread %d iter %d: allreduce on its half = %lld, expected %lld", w->t, it,
             (long long)out, (long long)want);
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    OK(vc_comm_rank(w->comm, &w->rank));
    OK(vc_comm_size(w->comm, &w->size));
    w->left = (w->rank + w->size - 1) % w->size;
    w->right = (w->rank + 1) % w->size;
    OK(vc_comm_dup(w->comm, &w->sub));
    OK(vc_comm_split(w->comm, w->rank & 1, w->size - w->rank, &w->half));
    int hrank = -1, hsize = -1;
    OK(vc_comm_rank(w->half, &hrank));
    OK(vc_comm_size(w->half, &hsize));
    if (hsize != (w->size + 1 - (w->rank & 1)) / 2 || hrank != (hsize - 1 - w->rank / 2))
        FAIL("thread %d: split gave rank %d of %d", w->t, hrank, hsize);
    for (int it = 0; it < iters; it++) {
        sub_comms(w, it);
        size_t len = w->sizes[it % NSIZES];
        int tag = it % 5;           /* the same tags on every thread's communicator */
        ring_blocking(w, it, len, tag);
        collectives(w, it);
        ring_nonblocking(w, it, w->sizes[(it + 2) % NSIZES], tag, w->comm, w->left,
                         w->right, w->rank);
        ring_nonblocking(w, it, w->sizes[(it + 3) % NSIZES], TAG_WORLD + w->t,
                         VC_COMM_WORLD, (mp_rank + mp_size - 1) % mp_size,
                         (mp_rank + 1) % mp_size, mp_rank);
    }
    OK(vc_comm_free(&w->sub));
    OK(vc_comm_free(&w->half));
    return NULL;
}

static void level_api(int *level)
{
    int provided = 12345, rc;
    EXPECT_RC(vc_query_thread(&provided), VC_ERR_NOT_INITIALIZED);
    EXPECT_RC(vc_init_thread(NULL, NULL, -1, &provided), VC_ERR_ARG);
    EXPECT_RC(vc_init_thread(NULL, NULL, VC_THREAD_MULTIPLE + 1, &provided), VC_ERR_ARG);
    EXPECT_RC(vc_init_thread(NULL, NULL, VC_THREAD_MULTIPLE, NULL), VC_ERR_ARG);
    if (provided != 12345)
        FAIL("a refused vc_init_thread wrote *provided = %d", provided);

    const char *l = getenv("MP_THREAD_LEVEL");
    int want = !l || !strcmp(l, "multiple") ? VC_THREAD_MULTIPLE
               : !strcmp(l, "serialized") ? VC_THREAD_SERIALIZED
               : !strcmp(l, "funneled")   ? VC_THREAD_FUNNELED
                                          : VC_THREAD_SINGLE;
    if (want == VC_THREAD_SINGLE) {
        rc = vc_init(NULL, NULL);
    } else {
        rc = vc_init_thread(NULL, NULL, want, &provided);
        if (!rc && provided != want)
            FAIL("vc_init_thread(%d) granted %d", want, provided);
    }
    if (rc) {
        fprintf(stderr, "FAIL: init: %s\n", vc_strerror(rc));
        exit(1);
    }
    vc_comm_rank(VC_COMM_WORLD, &mp_rank);
    vc_comm_size(VC_COMM_WORLD, &mp_size);
    provided = -1;
    OK(vc_query_thread(&provided));
    if (provided != want)
        FAIL("vc_query_thread says %d, expected %d", provided, want);
    EXPECT_RC(vc_query_thread(NULL), VC_ERR_ARG);
    provided = 12345;
    EXPECT_RC(vc_init_thread(NULL, NULL, VC_THREAD_SINGLE, &provided), VC_ERR_ARG);
    if (provided != 12345)
        FAIL("vc_init_thread after init wrote *provided = %d", provided);
    *level = want;
}

static void setup(worker_t *w, int t)
{
    memset(w, 0, sizeof *w);
    w->t = t;
    w->comm = comms[t];
    size_t sz[NSIZES] = {1, 200, eager, eager + 1 + 4096 * (size_t)t, 4 * eager + 333};
    memcpy(w->sizes, sz, sizeof sz);
    size_t big = 4 * eager + 333 + 4096 * MAX_THREADS;
    w->acount = (eager + 2048) / sizeof(int64_t);   /* above the eager limit */
    w->sbuf = malloc(big);
    w->rbuf = malloc(big);
    w->ain = malloc(w->acount * sizeof(int64_t));
    w->aout = malloc(w->acount * sizeof(int64_t));
    w->iin = malloc(w->acount * sizeof(int64_t));
    w->iout = malloc(w->acount * sizeof(int64_t));
    if (!w->sbuf || !w->rbuf || !w->ain || !w->aout || !w->iin || !w->iout) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
}

static void teardown(worker_t *w)
{
    free(w->sbuf);
    free(w->rbuf);
    free(w->ain);
    free(w->aout);
    free(w->iin);
    free(w->iout);
}

int main(void)
{
    const char *e;
    if ((e = getenv("MP_THREADS")))
        nthreads = atoi(e);
    if ((e = getenv("MP_ITERS")))
        iters = atoi(e);
    if ((e = getenv("VCOLL_EAGER_LIMIT")))
        eager = strtoull(e, NULL, 0);
    if (eager < 64)
        eager = 64;
    if (nthreads < 1 || nthreads > MAX_THREADS || iters < 1) {
        fprintf(stderr, "FAIL: MP_THREADS must be 1..%d, MP_ITERS >= 1\n", MAX_THREADS);
        return 1;
    }
    int level;
    level_api(&level);

    /* duplicating is collective on the world: done here, one after another */
    for (int t = 0; t < nthreads; t++)
        OK(vc_comm_dup(VC_COMM_WORLD, &comms[t]));
    worker_t w[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < nthreads; t++)
        setup(&w[t], t);

    if (level >= VC_THREAD_SERIALIZED) {
        /* all at once, or one thread after the other */
        int serial = level == VC_THREAD_SERIALIZED;
        for (int t = 0; t < nthreads; t++) {
            if (pthread_create(&th[t], NULL, worker, &w[t])) {
                fprintf(stderr, "FAIL: pthread_create\n");
                return 1;
            }
            if (serial)
                pthread_join(th[t], NULL);
        }
        for (int t = 0; t < nthreads && !serial; t++)
            pthread_join(th[t], NULL);
    } else {
        for (int t = 0; t < nthreads; t++)
            worker(&w[t]);
    }

    for (int t = 0; t < nthreads; t++) {
        OK(vc_comm_free(&comms[t]));
        teardown(&w[t]);
    }
    OK(vc_barrier(VC_COMM_WORLD));
    if (mp_rank == 0)
        printf("mp_threads: level %d, %d threads x %d iterations\n", level, nthreads, iters);
    return mp_finish("mp_threads");
}
