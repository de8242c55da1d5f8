/*
 * osu_bcast.c -- broadcast latency from root 0, timed per call on every rank.
 */
#include <stdlib.h>

#include "bench_common.h"

static int one_bcast(void *arg, size_t size)
{
    return bk_bcast(arg, size, BK_CHAR, 0);
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_bcast", .title = "Broadcast Latency Test",
                  .kind = BENCH_COLL, .min_size = 1, .max_size = 1u << 20,
                  .size_floor = 0 };
    bench_start(&b, &argc, &argv);
    char *buf = bench_alloc(b.max_size);
    bench_coll_loop(&b, "bcast", one_bcast, buf);
    free(buf);
    return bench_finish(&b);
}
