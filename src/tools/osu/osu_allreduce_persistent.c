/*
 * osu_allreduce_persistent.c -- osu_allreduce with a persistent request
 * (vc_allreduce_init / MPI_Allreduce_init, as OSU 7.x's
 * osu_allreduce_persistent): one init per message size, untimed, then each
 * iteration times start + wait. The difference to osu_allreduce is what a
 * call costs beyond its communication: argument checks, selection and the
 * schedule set-up that persistent requests pay once.
 */
#include <stdlib.h>

#include "bench_common.h"

struct bufs {
    const bench_t *b;
    void *s, *r;
    bk_req_t q;
    size_t size;        /* the size q was made for (0: none yet) */
    int have;
};

/* a new request when the size changes: init is collective and every rank
   walks the same sizes, so all make it together */
static int renew(struct bufs *p, size_t size)
{
    int rc;
    if (p->have && (rc = bk_request_free(&p->q)) != BK_OK)
        return rc;
    p->have = 0;
    rc = bk_allreduce_init(p->s, p->r, size / bench_dtype_size(p->b), bench_dtype(p->b),
                           BK_SUM, &p->q);
    if (rc != BK_OK)
        return rc;
    p->have = 1;
    p->size = size;
    return BK_OK;
}

static int one_start(void *arg, size_t size)
{
    struct bufs *p = arg;
    int rc;
    if ((!p->have || p->size != size) && (rc = renew(p, size)) != BK_OK)
        return rc;
    rc = bk_start(&p->q);
    return rc != BK_OK ? rc : bk_wait(&p->q);
}

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_allreduce_persistent",
                  .title = "Persistent Allreduce Latency Test",
                  .kind = BENCH_COLL, .min_size = 1, .max_size = 1u << 20,
                  .reduces = 1 };
    bench_start(&b, &argc, &argv);
    struct bufs p = { &b, bench_alloc(b.max_size), bench_alloc(b.max_size), 0, 0, 0 };
    bench_fill_ones(&b, p.s, b.max_size / bench_dtype_size(&b));
    bench_coll_loop(&b, "allreduce_init/start/wait", one_start, &p);
    if (p.have)
        bench_check(&b, bk_request_free(&p.q), "request_free");
    free(p.s);
    free(p.r);
    return bench_finish(&b);
}
