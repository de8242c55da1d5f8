/*
 * vcoll_tune -- measure every algorithm of every collective at every size
 * on this machine, and write the winners as a rules file (doc/collectives.md,
 * "Selection"). Run it under the launcher, in the shape the jobs will have:
 *
 *   mpirun -np 16 vcoll_tune [-o FILE] [-c COLL,...] [-m MIN:MAX] [-t SECONDS]
 *
 * Each (collective, size) measures the candidates interleaved, REPS rounds
 * (median of the rounds), every candidate forced through vc_coll_set_alg
 * (the supported interface: vcoll cannot be re-initialised in one process),
 * each round timing as many calls as the time budget allows (-t; 0.02 s,
 * 0.2 s where a node has more ranks than cores), a barrier
 * after each (as OSU does); the mean over ranks counts, as in OSU's
 * "Avg Latency", so a table tuned here serves the benchmarks users run.
 * "auto" (the table in force) is measured beside them, and its choice
 * stays unless another candidate is faster by more than the -k factor
 * (default 1.05) and in every round (its slowest round beats the
 * table's fastest), and then again in REPS more rounds of the two alone.
 * Rows are written for this job's shape only (ranks, most
 * ranks per node, nodes): other shapes, and what the file does not cover,
 * keep the built-in rows. One progress line per
 * collective goes to stderr on rank 0.
 *
 * Default FILE: the first default location ($XDG_CONFIG_HOME/vcoll/
 * tune.rules or ~/.config/vcoll/tune.rules), which vc_init then uses
 * without VCOLL_TUNE_FILE; set VCOLL_TUNE_FILE=builtin while tuning so an
 * older file does not decide "auto".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "vcoll.h"
#include "coll/rules.h"
#include "tune_pick.h"

#define MAXALG 16
#define REPS 3
/* how much faster than the table in force's choice a candidate must be to
   replace it (-k): more than this box's spread between rounds of one
   algorithm */
static double keep = 1.05;

typedef struct {
    const char *name;
    int sized;          /* 0: barrier */
} coll_t;

static const coll_t colls[] = {
    {"barrier", 0},   {"bcast", 1},   {"reduce", 1},    {"allreduce", 1},
    {"allgather", 1}, {"gather", 1},  {"scatter", 1},   {"allgatherv", 1},
    {"alltoall", 1},  {"reduce_scatter_block", 1},      {"reduce_scatter", 1},
};
#define NCOLLS (int)(sizeof colls / sizeof colls[0])

static int rank, size;
static char *sbuf, *rbuf;
static size_t *counts, *displs;

/* one call of collective c with n bytes per rank (reductions: n / 4 floats) */
static int call(const char *c, size_t n)
{
    vc_comm_t w = VC_COMM_WORLD;
    size_t f = n / 4;
    if (!strcmp(c, "barrier"))
        return vc_barrier(w);
    if (!strcmp(c, "bcast"))
        return vc_bcast(sbuf, n, VC_BYTE, 0, w);
    if (!strcmp(c, "reduce"))
        return vc_reduce(sbuf, rbuf, f, VC_FLOAT, VC_SUM, 0, w);
    if (!strcmp(c, "allreduce"))
        return vc_allreduce(sbuf, rbuf, f, VC_FLOAT, VC_SUM, w);
    if (!strcmp(c, "allgather"))
        return vc_allgather(sbuf, rbuf, n, VC_BYTE, w);
    if (!strcmp(c, "gather"))
        return vc_gather(sbuf, rbuf, n, VC_BYTE, 0, w);
    if (!strcmp(c, "scatter"))
        return vc_scatter(sbuf, rbuf, n, VC_BYTE, 0, w);
    if (!strcmp(c, "alltoall"))
        return vc_alltoall(sbuf, rbuf, n, VC_BYTE, w);
    if (!strcmp(c, "reduce_scatter_block"))
        return vc_reduce_scatter_block(sbuf, rbuf, f, VC_FLOAT, VC_SUM, w);
    for (int i = 0; i < size; i++) {
        counts[i] = !strcmp(c, "allgatherv") ? n : f;
        displs[i] = (size_t)i * counts[i];
    }
    if (!strcmp(c, "allgatherv"))
        return vc_allgatherv(sbuf, n, rbuf, counts, displs, VC_BYTE, w);
    return vc_reduce_scatter(sbuf, rbuf, counts, VC_FLOAT, VC_SUM, w);
}

/* The mean time of one call over all ranks, in us, the way OSU measures
   collectives: each call timed alone, a barrier after it (so a root cannot
   run ahead of its receivers into the next call), the count fixed
   beforehand from three calls (rank 0's clock, told to all) so every rank
   makes the same calls. */
static double timed(const char *c, size_t n, int iters, int *rc)
{
    /* A barrier's worth is also the order ranks leave it in: where they
       share cores, a rooted call timed right after it (OSU times every
       call after a barrier) waits while its root is not running, or does
       not. So a barrier counts as its own time plus that of an 8-byte
       bcast from rank 0 timed alone right after it. Timed alone, the
       symmetric flag barrier beat the one rank 0 releases (np 4 on 2
       cores: 2.57 against 3.10 us), and a table with it made small bcasts
       and scatters 3-6 times slower (2.84 against 0.49 us). Timing the two
       as one does not see this: the wait moves between them. */
    int bar = !strcmp(c, "barrier");
    double t = 0;
    for (int i = 0; i < iters; i++) {
        double t0 = vc_wtime();
        *rc |= call(c, n);
        t += vc_wtime() - t0;
        if (bar) {
            *rc |= call(c, n);
            t0 = vc_wtime();
            *rc |= vc_bcast(sbuf, 8, VC_BYTE, 0, VC_COMM_WORLD);
            t += vc_wtime() - t0;
        }
        *rc |= vc_barrier(VC_COMM_WORLD);
    }
    return t;
}

static double measure(const char *c, size_t n, double budget)
{
    int rc = call(c, n) | call(c, n);    /* warm: connections, caches, segments */
    rc |= vc_barrier(VC_COMM_WORLD);
    double probe = timed(c, n, 3, &rc) / 3;
    int iters = probe > 0 ? (int)(budget / probe) : 10000;
    iters = iters < 3 ? 3 : iters > 10000 ? 10000 : iters;
    vc_bcast(&iters, 1, VC_INT32, 0, VC_COMM_WORLD);
    rc |= vc_barrier(VC_COMM_WORLD);
    double us = timed(c, n, iters, &rc) * 1e6 / iters, sum = 0;
    vc_allreduce(&us, &sum, 1, VC_DOUBLE, VC_SUM, VC_COMM_WORLD);
    int bad = 0;
    vc_allreduce(&rc, &bad, 1, VC_INT32, VC_MAX, VC_COMM_WORLD);
    return bad ? 1e30 : sum / size;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one candidate's REPS rounds (sorted in place) as tune_pick takes them */
static tune_cand_t cand_of(double *t)
{
    qsort(t, REPS, sizeof t[0], cmp_double);
    return (tune_cand_t){1, t[0], t[REPS / 2], t[REPS - 1]};
}

/* ranks per node at most and nodes, from host names (the launcher's
   node), and whether any node has more ranks than online cores (as
   vc_init judges it, so the tuner and the table's oversub= rows agree) */
static void shape(int *ppn, int *nodes, int *oversub)
{
    char me[64] = {0}, *all = calloc((size_t)size, sizeof me);
    gethostname(me, sizeof me - 1);
    vc_allgather(me, all, sizeof me, VC_BYTE, VC_COMM_WORLD);
    *ppn = 0;
    *nodes = 0;
    for (int i = 0; i < size; i++) {
        int first = 1, same = 0;
        for (int j = 0; j < size; j++) {
            if (!strcmp(all + (size_t)i * sizeof me, all + (size_t)j * sizeof me)) {
                same++;
                if (j < i)
                    first = 0;
            }
        }
        *nodes += first;
        if (same > *ppn)
            *ppn = same;
        if (i == rank) {
            long online = sysconf(_SC_NPROCESSORS_ONLN);
            *oversub = online > 0 && same > online;
        }
    }
    free(all);
    vc_allreduce(VC_IN_PLACE, oversub, 1, VC_INT32, VC_MAX, VC_COMM_WORLD);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np N vcoll_tune [-o FILE] [-c COLL,...] [-m MIN:MAX] "
               "[-t SECONDS] [-k FACTOR]\n"
               "  -o  rules file to write (default ~/.config/vcoll/tune.rules)\n"
               "  -c  collectives to tune (default all with more than one algorithm)\n"
               "  -m  message sizes in bytes per rank, powers of two (default 8:1048576)\n"
               "  -t  seconds per candidate and size (default 0.02; 0.2 where a node\n"
               "      has more ranks than cores)\n"
               "  -k  keep the choice of the table in force unless another algorithm\n"
               "      is FACTOR times faster in the median and faster in every round\n"
               "      (default 1.05)\n");
}

/* every name -c lists must be one this tunes: a typo would otherwise
   write a file with no rules and say nothing */
static int check_only(const char *only)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int ok = 0;
        for (int i = 0; i < NCOLLS && !ok; i++)
            ok = !strcmp(t, colls[i].name);
        if (ok)
            continue;
        fprintf(stderr, "vcoll_tune: -c names \"%s\", which it does not tune; it tunes", t);
        for (int i = 0; i < NCOLLS; i++)
            fprintf(stderr, "%s%s", i ? "," : " ", colls[i].name);
        fprintf(stderr, "%s\n", !strcmp(t, "gatherv") || !strcmp(t, "scatterv") ||
                                         !strcmp(t, "alltoallv")
                                     ? " (gatherv, scatterv and alltoallv are chosen without"
                                       " sizes, which the ranks do not all know)"
                                     : "");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char out[512] = "", only[512] = "";
    size_t lo = 8, hi = 1 << 20;
    double budget = 0;      /* -t, else the default that fits the job (below) */
    int opt;
    while ((opt = getopt(argc, argv, "o:c:m:t:k:h")) != -1) {
        switch (opt) {
        case 'o': snprintf(out, sizeof out, "%s", optarg); break;
        case 'c': snprintf(only, sizeof only, ",%s,", optarg); break;
        case 'm':
            if (sscanf(optarg, "%zu:%zu", &lo, &hi) != 2 || !lo || lo > hi || hi > (1u << 28)) {
                fprintf(stderr, "vcoll_tune: -m wants MIN:MAX bytes, 1 <= MIN <= MAX <= 256m\n");
                return 2;
            }
            break;
        case 't':
            budget = atof(optarg);
            if (!(budget > 0 && budget <= 10)) {
                fprintf(stderr, "vcoll_tune: -t wants seconds in (0, 10]\n");
                return 2;
            }
            break;
        case 'k':
            keep = atof(optarg);
            if (!(keep >= 1 && keep <= 1e6)) {
                fprintf(stderr, "vcoll_tune: -k wants a factor >= 1\n");
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (*only && check_only(only))
        return 2;
    if (vc_init(&argc, &argv)) {
        fprintf(stderr, "vcoll_tune: vc_init failed (start it under mpirun or srun)\n");
        return 1;
    }
    vc_comm_rank(VC_COMM_WORLD, &rank);
    vc_comm_size(VC_COMM_WORLD, &size);
    if (!*out && coll_rules_default_path(0, out, sizeof out)) {
        fprintf(stderr, "vcoll_tune: no HOME or XDG_CONFIG_HOME: give -o FILE\n");
        vc_finalize();
        return 2;
    }
    int ppn, nodes, oversub = 0;
    shape(&ppn, &nodes, &oversub);
    /* Where ranks share cores a call's time depends on which of them the
       scheduler runs, and a round of 0.02 s spans only a few of its time
       slices: np 4 on 2 cores, the default rounds put alltoall at 1-512 B
       on linear, 1.01-1.29x slower under OSU than the node's slots, which
       rounds of 0.2 s kept (doc/collectives.md) */
    if (!budget)
        budget = oversub ? 0.2 : 0.02;
    size_t per = hi * (size_t)size + 64;
    /* page-aligned, as OSU's and most applications' large buffers are (a
       calloc block of this size starts 16 bytes into a page): copies and
       reductions may run at other speeds off the cache line */
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign((void **)&sbuf, page > 0 ? (size_t)page : 4096, per))
        sbuf = NULL;
    if (posix_memalign((void **)&rbuf, page > 0 ? (size_t)page : 4096, per))
        rbuf = NULL;
    counts = calloc((size_t)size, sizeof *counts);
    displs = calloc((size_t)size, sizeof *displs);
    if (!sbuf || !rbuf || !counts || !displs) {
        fprintf(stderr, "vcoll_tune: rank %d: no memory for %zu-byte buffers\n", rank, per);
        vc_abort(VC_COMM_WORLD, 1);
    }
    /* Touch every page, as an application's data is (and OSU's): an
       untouched block reads as the kernel's one zero page, which stays in
       the cache and would flatter whatever reads the send buffer most */
    for (size_t i = 0; i + sizeof(float) <= per; i += sizeof(float))
        memcpy(sbuf + i, &(float){1.0f}, sizeof(float));
    memset(rbuf, 0, per);
    char *text = NULL;
    size_t tlen = 0;
    FILE *mem = open_memstream(&text, &tlen);
    fprintf(mem, "# vcoll_tune: %d ranks, %d per node at most, %d node%s%s; sizes %zu..%zu B,"
                 " %.3f s per candidate, median of %d rounds; the table in force's"
                 " choice kept unless %.2fx slower and slower in every round\n",
            size, ppn, nodes, nodes > 1 ? "s" : "",
            oversub ? " (more ranks than cores)" : "", lo, hi, budget, REPS, keep);
    double t_start = vc_wtime();
    for (int ci = 0; ci < NCOLLS; ci++) {
        const coll_t *c = &colls[ci];
        char key[64];
        snprintf(key, sizeof key, ",%s,", c->name);
        const char *names[MAXALG + 1];
        int na = 0;
        while (na < MAXALG && !vc_coll_alg_name(c->name, na, &names[na]))
            na++;
        if (na < 2 || (*only && !strstr(only, key)))
            continue;
        names[na] = "auto";
        double t0 = vc_wtime();
        int rows = 0, prev = -1, nsz = 0;
        size_t sz[64];
        int win[64];
        fprintf(mem, "# %s, us per call%s (mean over ranks, median of %d):", c->name,
                c->sized ? "" : " plus an 8-byte bcast timed after it", REPS);
        for (size_t n = c->sized ? lo : 0; nsz < 64; n = n ? n * 2 : 1) {
            double t[MAXALG + 1][REPS];
            int runs[MAXALG + 1], tab = -1;
            /* reductions time n / 4 floats, the rest n bytes */
            int red = strstr(c->name, "reduce") != NULL;
            size_t cnt = red ? n / 4 : n;
            for (int a = 0; a <= na; a++) {
                const char *got = NULL;
                if (vc_coll_set_alg(VC_COMM_WORLD, c->name, names[a]) ||
                    vc_coll_which(VC_COMM_WORLD, c->name, cnt, red ? VC_FLOAT : VC_BYTE, &got)) {
                    fprintf(stderr, "vcoll_tune: cannot force %s %s\n", c->name, names[a]);
                    vc_abort(VC_COMM_WORLD, 1);
                }
                /* a candidate that cannot serve this call gives way to the
                   table: measuring that would credit it with another's time */
                runs[a] = a == na || !strcmp(got, names[a]);
                if (a == na)
                    for (int k = 0; k < na; k++)
                        if (!strcmp(got, names[k]))
                            tab = k;    /* the table in force's choice */
            }
            for (int r = 0; r < REPS; r++)
                for (int a = 0; a <= na; a++)
                    if (runs[a]) {
                        vc_coll_set_alg(VC_COMM_WORLD, c->name, names[a]);
                        t[a][r] = measure(c->name, n, budget);
                    }
            vc_coll_set_alg(VC_COMM_WORLD, c->name, "auto");
            /* [na] is "auto": printed, not a candidate */
            tune_cand_t cand[MAXALG + 1];
            fprintf(mem, "\n#   %7zu B:", n);
            for (int a = 0; a <= na; a++) {
                cand[a] = runs[a] ? cand_of(t[a]) : (tune_cand_t){0, 0, 0, 0};
                if (runs[a])
                    fprintf(mem, " %s %.2f", names[a], cand[a].med);
            }
            int best = tune_pick(cand, na, tab, prev, keep);
            if (best >= 0 && tab >= 0 && best != tab) {
                /* Overturning the table takes a second, later head-to-head
                   win: with 3 rounds a candidate as fast as the table's
                   beats it in every one about 1 time in 20, and the best
                   of five or six candidates more often, so a whole tune
                   overturned a dozen rows that OSU then ran up to 15 %
                   slower, and a burst of load during one size's rounds
                   made the segment's reduce at 4 KiB look 40 % slower
                   than it is (session 45) */
                double t2[2][REPS];
                int who[2] = {tab, best};
                for (int r = 0; r < REPS; r++)
                    for (int k = 0; k < 2; k++) {
                        vc_coll_set_alg(VC_COMM_WORLD, c->name, names[who[k]]);
                        t2[k][r] = measure(c->name, n, budget);
                    }
                vc_coll_set_alg(VC_COMM_WORLD, c->name, "auto");
                tune_cand_t again[MAXALG];
                for (int a = 0; a < na; a++)
                    again[a] = (tune_cand_t){0, 0, 0, 0};
                for (int k = 0; k < 2; k++)
                    again[who[k]] = cand_of(t2[k]);
                fprintf(mem, " (again: %s %.2f %s %.2f)", names[tab], again[tab].med,
                        names[best], again[best].med);
                best = tune_pick(again, na, tab, -1, keep);
            }
            if (best < 0)       /* (tune_pick already fell back on prev) */
                best = 0;
            sz[nsz] = n;
            win[nsz++] = best;
            prev = best;
            if (!c->sized || n >= hi)
                break;
        }
        fprintf(mem, "\n");
        /* one row per run of sizes with one winner: from the run's first
           size (0 for the first run) to just before the next run's */
        for (int i = 0; i < nsz; i++) {
            if (i + 1 < nsz && win[i + 1] == win[i]) {
                sz[i + 1] = sz[i];     /* the run starts where this one did */
                continue;
            }
            fprintf(mem, "%s ranks=%d ppn=%d nodes=%d", c->name, size, ppn, nodes);
            if (c->sized && nsz > 1)
                fprintf(mem, i + 1 < nsz ? " bytes=%zu-%zu" : " bytes=%zu-",
                        rows ? sz[i] : 0, i + 1 < nsz ? sz[i + 1] - 1 : 0);
            fprintf(mem, " : %s\n", names[win[i]]);
            rows++;
        }
        if (rank == 0)
            fprintf(stderr, "vcoll_tune: %-21s %d rule%s, %.1f s\n", c->name, rows,
                    rows > 1 ? "s" : "", vc_wtime() - t0);
    }
    fclose(mem);
    int rc = 0;
    if (rank == 0) {
        /* the file must read back: a table vc_init would refuse is no result */
        coll_rules_t chk = {0};
        char err[640];
        if (coll_rules_parse(&chk, text, tlen, out, 0, err, sizeof err)) {
            fprintf(stderr, "vcoll_tune: internal error, the rules do not parse: %s\n", err);
            rc = 1;
        }
        coll_rules_free(&chk);
        char dir[512];
        snprintf(dir, sizeof dir, "%s", out);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            char *up = strrchr(dir, '/');   /* ~/.config/vcoll: ~/.config may be missing too */
            if (up && up != dir) {
                *up = 0;
                mkdir(dir, 0755);
                *up = '/';
            }
            mkdir(dir, 0755);
        }
        FILE *f = rc ? NULL : fopen(out, "w");
        if (!rc && (!f || fwrite(text, 1, tlen, f) != tlen || fclose(f))) {
            fprintf(stderr, "vcoll_tune: cannot write %s: %s\n", out, strerror(errno));
            rc = 1;
        }
        if (!rc)
            fprintf(stderr, "vcoll_tune: wrote %s (%.0f s); vc_init uses it %s\n", out,
                    vc_wtime() - t_start,
                    getenv("VCOLL_TUNE_FILE") ? "with VCOLL_TUNE_FILE pointing at it"
                                              : "when VCOLL_TUNE_FILE is unset");
    }
    vc_bcast(&rc, 1, VC_INT32, 0, VC_COMM_WORLD);
    free(text);
    vc_finalize();
    return rc;
}
