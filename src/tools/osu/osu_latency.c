/*
 * osu_latency.c -- ping-pong between ranks 0 and 1; one-way latency is half
 * the round trip, averaged over the timed iterations.
 */
#include <stdlib.h>

#include "bench_common.h"

#define LAT_TAG 1

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_latency", .title = "Latency Test", .kind = BENCH_LATENCY,
                  .min_size = 0, .max_size = 4u << 20, .size_floor = 0 };
    bench_start(&b, &argc, &argv);

    char *sbuf = bench_alloc(b.max_size), *rbuf = bench_alloc(b.max_size);
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
            if (b.rank == 0) {
                bench_check(&b, bk_send(sbuf, size, BK_CHAR, peer, LAT_TAG), "send");
                bench_check(&b, bk_recv(rbuf, size, BK_CHAR, peer, LAT_TAG), "recv");
            } else {
                bench_check(&b, bk_recv(rbuf, size, BK_CHAR, peer, LAT_TAG), "recv");
                bench_check(&b, bk_send(sbuf, size, BK_CHAR, peer, LAT_TAG), "send");
            }
        }
        double t = bk_wtime() - t0;
        bench_row(&b, size, t * 1e6 / (2.0 * (double)iters));
    }
    free(sbuf);
    free(rbuf);
    return bench_finish(&b);
}
