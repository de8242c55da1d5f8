/*
 * osu_gather.c -- gather latency to root 0; the size is what each rank
 * contributes, the root receives nranks times that.
 */
#include <stdlib.h>

#include "bench_common.h"

struct bufs { char *s, *r; };

static int one_gather(void *arg, size_t size)
{
    struct bufs *p = arg;
    return bk_gather(p->s, p->r, size, BK_CHAR, 0);
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_gather", .title = "Gather Latency Test",
                  .kind = BENCH_COLL, .min_size = 1, .max_size = 1u << 20,
                  .size_floor = 0 };
    bench_start(&b, &argc, &argv);
    struct bufs p = { bench_alloc(b.max_size), bench_alloc(b.max_size * b.nranks) };
    bench_coll_loop(&b, "gather", one_gather, &p);
    free(p.s);
    free(p.r);
    return bench_finish(&b);
}
