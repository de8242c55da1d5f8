/*
 * osu_reduce.c -- sum of floats to root 0, timed per call on every rank.
 * Sizes are in bytes and rounded down to whole floats (so at least 4).
 */
#include <stdlib.h>

#include "bench_common.h"

struct bufs { float *s, *r; };

static int one_reduce(void *arg, size_t size)
{
    struct bufs *p = arg;
    return bk_reduce(p->s, p->r, size / sizeof(float), BK_FLOAT, BK_SUM, 0);
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_reduce", .title = "Reduce Latency Test",
                  .kind = BENCH_COLL, .min_size = sizeof(float), .max_size = 1u << 20,
                  .size_floor = sizeof(float) };
    bench_start(&b, &argc, &argv);
    struct bufs p = { bench_alloc(b.max_size), bench_alloc(b.max_size) };
    /* small finite values: sums of many iterations never overflow */
    for (size_t i = 0; i < b.max_size / sizeof(float); i++)
        p.s[i] = 1.0f;
    bench_coll_loop(&b, "reduce", one_reduce, &p);
    free(p.s);
    free(p.r);
    return bench_finish(&b);
}
