/*
 * bench_common.c -- options, iteration defaults, header/rows and the
 * statistics shared by the OSU-style benchmarks (both backends).
 */
#include <errno.h>
#include <getopt.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

#define SYNC_TAG 0x5e5e
#define STATS_TAG 0x5e5f

/* Under a launcher every rank parses the same options; only one should talk. */
static int launcher_rank0(void)
{
    static const char *const vars[] = { "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                  "SLURM_PROCID" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v) == 0;
    }
    return 1;
}

static const struct { const char *name; size_t size; } dtypes[] = {
    [BENCH_DT_CHAR] = {"MPI_CHAR", 1},
    [BENCH_DT_INT] = {"MPI_INT", sizeof(int)},
    [BENCH_DT_FLOAT] = {"MPI_FLOAT", sizeof(float)},
};

bk_dtype_t bench_dtype(const bench_t *b)
{
    return b->dtype == BENCH_DT_INT ? BK_INT : b->dtype == BENCH_DT_FLOAT ? BK_FLOAT : BK_CHAR;
}

size_t bench_dtype_size(const bench_t *b) { return dtypes[b->dtype].size; }

void bench_fill_ones(const bench_t *b, void *buf, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (b->dtype == BENCH_DT_INT)
            ((int *)buf)[i] = 1;
        else if (b->dtype == BENCH_DT_FLOAT)
            ((float *)buf)[i] = 1.0f;
        else
            ((char *)buf)[i] = 1;
    }
}

static const char *const thread_levels[] = {"single", "funneled", "serialized", "multiple"};

static void usage(FILE *f, const bench_t *b, const char *prog, size_t def_min, size_t def_max)
{
    fprintf(f,
            "Usage: %s [options]\n"
            "  -m [MIN:]MAX  message sizes in bytes, doubling from MIN (default %zu:%zu)\n"
            "  -i ITERS      timed iterations per size (default: by size, see README)\n"
            "  -x WARMUP     untimed warm-up iterations per size\n"
            "  -f            full statistics: min / max latency over ranks, iterations\n"
            "  -t LEVEL      initialise asking for a thread level: single, funneled,\n"
            "                serialized or multiple (default: plain init)\n"
            "%s"
            "  -h            this help\n",
            prog, def_min, def_max,
            b->reduces ? "  -T TYPE       mpi_char (default, as OSU 7), mpi_int or mpi_float\n" : "");
}

static int parse_dtype(const char *arg, bench_t *b)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcasecmp(arg, dtypes[i].name) == 0 || strcasecmp(arg, dtypes[i].name + 4) == 0) {
            b->dtype = (int)i;
            return 0;
        }
    return -1;
}

static int parse_thread_level(const char *arg, bench_t *b)
{
    for (int i = 0; i < (int)(sizeof thread_levels / sizeof thread_levels[0]); i++)
        if (strcasecmp(arg, thread_levels[i]) == 0) {
            b->thread_level = i;
            return 0;
        }
    return -1;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    /* K / M suffixes are handy for large sizes: -m 1K:4M */
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end != '\0' || v > (1ull << 30))
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_range(const char *arg, bench_t *b)
{
    char tmp[64];
    if (strlen(arg) >= sizeof tmp)
        return -1;
    strcpy(tmp, arg);
    char *colon = strchr(tmp, ':');
    if (colon) {
        *colon = '\0';
        if (parse_size(tmp, &b->min_size) || parse_size(colon + 1, &b->max_size))
            return -1;
    } else if (parse_size(tmp, &b->max_size)) {
        return -1;
    }
    return b->min_size <= b->max_size ? 0 : -1;
}

static int parse_count(const char *s, long *out, long min)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min)
        return -1;
    *out = v;
    return 0;
}

static void parse_options(bench_t *b, int argc, char **argv)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int talk = launcher_rank0();
    size_t def_min = b->min_size > b->size_floor ? b->min_size : b->size_floor;
    size_t def_max = b->max_size;
    int c;

    opterr = 0;
    while ((c = getopt(argc, argv, b->reduces ? "m:i:x:ft:T:h" : "m:i:x:ft:h")) != -1) {
        int bad = 0;
        switch (c) {
        case 'm': bad = parse_range(optarg, b); break;
        case 'i': bad = parse_count(optarg, &b->iters, 1); break;
        case 'x': bad = parse_count(optarg, &b->skip, 0); break;
        case 'f': b->full = 1; break;
        case 'T': bad = parse_dtype(optarg, b); break;
        case 't': bad = parse_thread_level(optarg, b); break;
        case 'h':
            if (talk)
                usage(stdout, b, prog, def_min, def_max);
            exit(0);
        default: bad = 1; break;
        }
        if (bad) {
            if (talk) {
                fprintf(stderr, "%s: invalid option or value: -%c %s\n", prog,
                        c == '?' ? optopt : c, (c != '?' && optarg) ? optarg : "");
                usage(stderr, b, prog, def_min, def_max);
            }
            exit(1);
        }
    }
    if (optind < argc) {
        if (talk) {
            fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
            usage(stderr, b, prog, def_min, def_max);
        }
        exit(1);
    }
    if (b->reduces)     /* at least one whole element */
        b->size_floor = bench_dtype_size(b);
    if (b->min_size < b->size_floor)
        b->min_size = b->size_floor;
    if (b->max_size < b->min_size)
        b->max_size = b->min_size;
}

void bench_start(bench_t *b, int *argc, char ***argv)
{
    b->iters = -1;
    b->skip = -1;
    b->full = 0;
    b->thread_level = -1;
    parse_options(b, *argc, *argv);

    bench_check(b, bk_init(argc, argv, b->thread_level, &b->thread_granted), "init");
    bench_check(b, bk_rank(&b->rank), "comm_rank");
    bench_check(b, bk_size(&b->nranks), "comm_size");

    if ((b->kind == BENCH_LATENCY || b->kind == BENCH_BW) && b->nranks != 2) {
        if (b->rank == 0)
            fprintf(stderr, "%s: this test needs exactly 2 ranks (got %d)\n", b->name,
                    b->nranks);
        bk_finalize();
        exit(1);
    }
}

void bench_check(const bench_t *b, int rc, const char *call)
{
    char buf[256];
    if (rc == BK_OK)
        return;
    if (rc == BK_UNSUPPORTED) {
        /* every rank gets the same answer from an unimplemented collective,
         * so all of them leave here; only rank 0 says why */
        if (b->rank == 0)
            fprintf(stderr, "%s: %s is not implemented in this %s build (%s); "
                    "no numbers\n", b->name, call, BK_PREFIX,
                    bk_strerror(rc, buf, sizeof buf));
        bk_finalize();
        exit(BENCH_EXIT_UNSUPPORTED);
    }
    fprintf(stderr, "%s: rank %d: %s failed: %s (%d)\n", b->name, b->rank, call,
            bk_strerror(rc, buf, sizeof buf), rc);
    fflush(stderr);
    if (strcmp(call, "init") == 0)
        exit(1);
    bk_abort(1);
    exit(1);
}

void bench_iters(const bench_t *b, size_t size, long *iters, long *skip)
{
    long it, sk;
    if (b->kind == BENCH_BW) {
        /* each iteration moves a window of 64 messages */
        if (size <= BENCH_LARGE)
            it = 100, sk = 10;
        else if (size < BENCH_HUGE)
            it = 20, sk = 2;
        else
            it = 10, sk = 2;
    } else {
        if (size <= BENCH_LARGE)
            it = 10000, sk = 100;
        else if (size < BENCH_HUGE)
            it = 1000, sk = 10;
        else
            it = 100, sk = 5;
    }
    *iters = b->iters > 0 ? b->iters : it;
    *skip = b->skip >= 0 ? b->skip : sk;
}

size_t bench_first_size(const bench_t *b) { return b->min_size; }

size_t bench_next_size(size_t size) { return size ? size * 2 : 1; }

void *bench_alloc(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;
    if (bytes == 0)
        bytes = 1;
    if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes) != 0) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
        exit(1);
    }
    memset(p, 'a', bytes);
    return p;
}

void bench_header(const bench_t *b)
{
    char lib[256];
    if (b->rank != 0)
        return;
    bk_library_name(lib, sizeof lib);
    const char *tp = bk_transport();
    if (tp)
        printf("# %s %s, transport: %s\n", lib, b->name, tp);
    else
        printf("# %s %s\n", lib, b->name);
    printf("# OSU-style %s, %d ranks\n", b->title, b->nranks);
    if (b->kind != BENCH_BARRIER)
        printf("# Datatype: %s.\n", dtypes[b->dtype].name);
    if (b->thread_level >= 0)
        printf("# Thread level: %s granted (%s asked).\n",
               b->thread_granted >= 0 ? thread_levels[b->thread_granted] : "unknown",
               thread_levels[b->thread_level]);

    switch (b->kind) {
    case BENCH_LATENCY:
        printf("%-10s%18s\n", "# Size", "Latency (us)");
        break;
    case BENCH_BW:
        printf("%-10s%18s\n", "# Size", "Bandwidth (MB/s)");
        break;
    case BENCH_COLL:
    case BENCH_BARRIER: /* barrier reports one row with size 0 */
        if (b->full)
            printf("%-10s%18s%18s%18s%12s\n", "# Size", "Avg Latency(us)",
                   "Min Latency(us)", "Max Latency(us)", "Iterations");
        else
            printf("%-10s%18s\n", "# Size", "Avg Latency(us)");
        break;
    }
    fflush(stdout);
}

void bench_row(const bench_t *b, size_t size, double value)
{
    if (b->rank != 0)
        return;
    printf("%-10zu%18.2f\n", size, value);
    fflush(stdout);
}

/* Per-rank averages -> rank 0 with plain p2p, for builds whose reduce is
 * not there yet (the collective under test may still work). */
static void gather_stats_p2p(const bench_t *b, double mine, double *mn, double *mx,
                             double *sum)
{
    if (b->rank != 0) {
        bench_check(b, bk_send(&mine, 1, BK_DOUBLE, 0, STATS_TAG), "send");
        return;
    }
    *mn = *mx = *sum = mine;
    for (int r = 1; r < b->nranks; r++) {
        double v;
        bench_check(b, bk_recv(&v, 1, BK_DOUBLE, r, STATS_TAG), "recv");
        if (v < *mn) *mn = v;
        if (v > *mx) *mx = v;
        *sum += v;
    }
}

void bench_coll_report(const bench_t *b, size_t size, double my_avg_us, long iters)
{
    double mn = my_avg_us, mx = my_avg_us, sum = my_avg_us;
    int rc = bk_reduce(&my_avg_us, &sum, 1, BK_DOUBLE, BK_SUM, 0);
    if (rc == BK_UNSUPPORTED) {
        gather_stats_p2p(b, my_avg_us, &mn, &mx, &sum);
    } else {
        bench_check(b, rc, "reduce");
        bench_check(b, bk_reduce(&my_avg_us, &mn, 1, BK_DOUBLE, BK_MIN, 0), "reduce");
        bench_check(b, bk_reduce(&my_avg_us, &mx, 1, BK_DOUBLE, BK_MAX, 0), "reduce");
    }
    if (b->rank != 0)
        return;
    double avg = sum / b->nranks;
    if (b->kind == BENCH_BARRIER && !b->full)
        printf("%-10d%18.2f\n", 0, avg);
    else if (b->kind == BENCH_BARRIER)
        printf("%-10d%18.2f%18.2f%18.2f%12ld\n", 0, avg, mn, mx, iters);
    else if (b->full)
        printf("%-10zu%18.2f%18.2f%18.2f%12ld\n", size, avg, mn, mx, iters);
    else
        printf("%-10zu%18.2f\n", size, avg);
    fflush(stdout);
}

void bench_coll_loop(const bench_t *b, const char *call, bench_coll_fn fn, void *arg)
{
    bench_check(b, fn(arg, bench_first_size(b)), call);
    bench_check(b, bk_barrier(), "barrier");
    bench_header(b);

    for (size_t size = bench_first_size(b); size <= b->max_size;
         size = bench_next_size(size)) {
        long iters, skip;
        double total = 0.0;
        bench_iters(b, size, &iters, &skip);
        bench_check(b, bk_barrier(), "barrier");
        for (long i = 0; i < iters + skip; i++) {
            double t0 = bk_wtime();
            int rc = fn(arg, size);
            double t1 = bk_wtime();
            bench_check(b, rc, call);
            if (i >= skip)
                total += t1 - t0;
            /* untimed: keeps a fast root from racing ahead of the others */
            bench_check(b, bk_barrier(), "barrier");
        }
        bench_coll_report(b, size, total * 1e6 / (double)iters, iters);
        if (b->kind == BENCH_BARRIER)
            break;
    }
}

void bench_pair_sync(const bench_t *b)
{
    char dummy = 0;
    if (b->rank == 0) {
        bench_check(b, bk_send(&dummy, 0, BK_BYTE, 1, SYNC_TAG), "send");
        bench_check(b, bk_recv(&dummy, 0, BK_BYTE, 1, SYNC_TAG), "recv");
    } else if (b->rank == 1) {
        bench_check(b, bk_recv(&dummy, 0, BK_BYTE, 0, SYNC_TAG), "recv");
        bench_check(b, bk_send(&dummy, 0, BK_BYTE, 0, SYNC_TAG), "send");
    }
}

int bench_finish(const bench_t *b)
{
    bench_check(b, bk_finalize(), "finalize");
    return 0;
}
