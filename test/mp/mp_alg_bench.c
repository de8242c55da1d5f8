/*
 * mp_alg_bench.c -- times algorithms of the five collectives against each
 * other inside one job: for each repetition, collective, size and
 * algorithm (flat, hier, shm), every rank forces it with vc_coll_set_alg
 * (the supported interface; vcoll_tune uses it too), runs a few untimed calls, then
 * times ITERS calls, each followed by an untimed barrier (as OSU does, so
 * a root cannot run ahead of its receivers); the slowest rank's mean
 * time in the calls is printed by rank 0 as
 * "coll alg size rep us". Interleaving in one job is what makes
 * comparisons fair on a loaded box or in the TCG guest, where every launch
 * costs a minute (test/verbs/guest-hier-ratios.sh; contrib/hier-ratios.sh
 * makes the table). Not a test: it checks no results.
 *
 *   mp_alg_bench [ITERS [REPS [SIZE...]]]     (defaults 10, 3, 8 1024 16384 65536)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER };

static const struct {
    int kind;
    const char *name, *flat;
} colls[] = {
    {BARRIER, "barrier", "dissemination"},
    {BCAST, "bcast", "binomial"},
    {REDUCE, "reduce", "binomial"},
    {ALLREDUCE, "allreduce", "recursive_doubling"},
    {ALLGATHER, "allgather", "ring"},
};

static int call(int kind, void *a, void *b, size_t n)
{
    switch (kind) {
    case BARRIER: return vc_barrier(VC_COMM_WORLD);
    case BCAST: return vc_bcast(a, n, VC_BYTE, 0, VC_COMM_WORLD);
    case REDUCE: return vc_reduce(a, b, n / 4, VC_FLOAT, VC_SUM, 0, VC_COMM_WORLD);
    case ALLREDUCE: return vc_allreduce(a, b, n / 4, VC_FLOAT, VC_SUM, VC_COMM_WORLD);
    default: return vc_allgather(a, b, n, VC_BYTE, VC_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 10, reps = argc > 2 ? atoi(argv[2]) : 3;
    size_t dsizes[] = {8, 1024, 16384, 65536}, *sizes = dsizes;
    int nsizes = 4, rank, size;
    if (vc_init(&argc, &argv))
        return 1;
    vc_comm_rank(VC_COMM_WORLD, &rank);
    vc_comm_size(VC_COMM_WORLD, &size);
    if (argc > 3) {
        nsizes = argc - 3;
        sizes = calloc((size_t)nsizes, sizeof *sizes);
        for (int i = 0; i < nsizes; i++)
            sizes[i] = strtoull(argv[3 + i], NULL, 10);
    }
    size_t max = 0;
    for (int i = 0; i < nsizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    char *a = calloc(max * (size_t)size + 64, 1), *b = calloc(max * (size_t)size + 64, 1);
    for (int rep = 1; rep <= reps; rep++)
        for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++)
            for (int si = 0; si < nsizes; si++) {
                size_t n = colls[c].kind == BARRIER ? 0 : sizes[si];
                if (colls[c].kind == BARRIER && si)
                    continue;
                const char *algs[] = {colls[c].flat, "hier", "shm"};
                for (int k = 0; k < 3; k++) {
                    /* same on every rank: all run this loop alike */
                    int rc = vc_coll_set_alg(VC_COMM_WORLD, colls[c].name, algs[k]);
                    for (int w = 0; w < 2; w++)
                        rc |= call(colls[c].kind, a, b, n);
                    double us = 0, worst = 0;
                    for (int i = 0; i < iters; i++) {
                        double t0 = vc_wtime();
                        rc |= call(colls[c].kind, a, b, n);
                        us += vc_wtime() - t0;
                        if (colls[c].kind != BARRIER)
                            rc |= vc_barrier(VC_COMM_WORLD);
                    }
                    us *= 1e6 / iters;
                    rc |= vc_coll_set_alg(VC_COMM_WORLD, colls[c].name, "auto");
                    vc_allreduce(&us, &worst, 1, VC_DOUBLE, VC_MAX, VC_COMM_WORLD);
                    if (rank == 0)
                        printf("%s %s %zu %d %.2f%s\n", colls[c].name,
                               k ? algs[k] : "flat", n, rep, worst, rc ? " ERROR" : "");
                    fflush(stdout);
                }
            }
    vc_finalize();
    return 0;
}
