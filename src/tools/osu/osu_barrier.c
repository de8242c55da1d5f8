/*
 * osu_barrier.c -- barrier latency, timed per call on every rank, reported
 * as the mean over ranks (one row, size 0).
 */
#include "bench_common.h"

static int one_barrier(void *arg, size_t size)
{
    (void)arg;
    (void)size;
    return bk_barrier();
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_barrier", .title = "Barrier Latency Test",
                  .kind = BENCH_BARRIER, .min_size = 0, .max_size = 0, .size_floor = 0 };
    bench_start(&b, &argc, &argv);
    b.min_size = b.max_size = 0; /* no message size; -m is accepted and ignored */
    bench_coll_loop(&b, "barrier", one_barrier, NULL);
    return bench_finish(&b);
}
