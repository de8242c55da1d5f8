/*
 * osu_alltoall.c -- alltoall latency; the size is what each rank sends to
 * each other rank, so every rank sends and receives nranks times that.
 */
#include <stdlib.h>

#include "bench_common.h"

struct bufs { char *s, *r; };

static int one_alltoall(void *arg, size_t size)
{
    struct bufs *p = arg;
    return bk_alltoall(p->s, p->r, size, BK_CHAR);
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_alltoall", .title = "All-to-All Personalized Exchange Latency Test",
                  .kind = BENCH_COLL, .min_size = 1, .max_size = 1u << 20,
                  .size_floor = 0 };
    bench_start(&b, &argc, &argv);
    struct bufs p = { bench_alloc(b.max_size * b.nranks), bench_alloc(b.max_size * b.nranks) };
    bench_coll_loop(&b, "alltoall", one_alltoall, &p);
    free(p.s);
    free(p.r);
    return bench_finish(&b);
}
