/*
 * osu_bibw.c -- bidirectional bandwidth: both ranks post a window of 64
 * receives and 64 sends at once and wait for all of them; the bytes of both
 * directions count.
 */
#include <stdlib.h>

#include "bench_common.h"

#define BW_TAG 4

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_bibw", .title = "Bi-Directional Bandwidth Test",
                  .kind = BENCH_BW, .min_size = 1, .max_size = 4u << 20,
                  .size_floor = 0 };
    bench_start(&b, &argc, &argv);

    char *sbuf = bench_alloc(b.max_size), *rbuf = bench_alloc(b.max_size);
    bk_req_t reqs[2 * BENCH_WINDOW];
    int peer = 1 - b.rank;
    bench_header(&b);

    for (size_t size = bench_first_size(&b); size <= b.max_size;
         size = bench_next_size(size)) {
        long iters, skip;
        double t0 = 0.0;
        bench_iters(&b, size, &iters, &skip);
        bench_pair_sync(&b);
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = bk_wtime();
            /* receives first so no send lands unexpected */
            for (int w = 0; w < BENCH_WINDOW; w++)
                bench_check(&b, bk_irecv(rbuf, size, BK_CHAR, peer, BW_TAG, &reqs[w]),
                            "irecv");
            for (int w = 0; w < BENCH_WINDOW; w++)
                bench_check(&b, bk_isend(sbuf, size, BK_CHAR, peer, BW_TAG,
                                         &reqs[BENCH_WINDOW + w]), "isend");
            bench_check(&b, bk_waitall(2 * BENCH_WINDOW, reqs), "waitall");
        }
        double t = bk_wtime() - t0;
        bench_row(&b, size, 2.0 * (double)size / 1e6 * (double)iters * BENCH_WINDOW / t);
    }
    free(sbuf);
    free(rbuf);
    return bench_finish(&b);
}
