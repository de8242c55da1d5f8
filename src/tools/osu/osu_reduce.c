/*
 * osu_reduce.c -- sum to root 0, timed per call on every rank. The element
 * type is MPI_CHAR unless -T says mpi_int or mpi_float, as in OSU 7.x; sizes
 * are bytes rounded down to whole elements.
 */
#include <stdlib.h>

#include "bench_common.h"

struct bufs { const bench_t *b; void *s, *r; };

static int one_reduce(void *arg, size_t size)
{
    struct bufs *p = arg;
    return bk_reduce(p->s, p->r, size / bench_dtype_size(p->b), bench_dtype(p->b), BK_SUM, 0);
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_reduce", .title = "Reduce Latency Test",
                  .kind = BENCH_COLL, .min_size = 1, .max_size = 1u << 20,
                  .reduces = 1 };
    bench_start(&b, &argc, &argv);
    struct bufs p = { &b, bench_alloc(b.max_size), bench_alloc(b.max_size) };
    /* ones: sums of many iterations stay small (char wraps, harmlessly) */
    bench_fill_ones(&b, p.s, b.max_size / bench_dtype_size(&b));
    bench_coll_loop(&b, "reduce", one_reduce, &p);
    free(p.s);
    free(p.r);
    return bench_finish(&b);
}
