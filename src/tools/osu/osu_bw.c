/*
 * osu_bw.c -- unidirectional bandwidth: rank 0 keeps a window of 64 sends in
 * flight, rank 1 pre-posts 64 receives and acknowledges each window, so the
 * time covers delivery, not just local completion.
 */
#include <stdlib.h>

#include "bench_common.h"

#define BW_TAG 2
#define ACK_TAG 3

int main(int argc, char **argv)
{
    bench_t b = { .name = "osu_bw", .title = "Bandwidth Test", .kind = BENCH_BW,
                  .min_size = 1, .max_size = 4u << 20, .size_floor = 0 };
    bench_start(&b, &argc, &argv);

    char *sbuf = bench_alloc(b.max_size), *rbuf = bench_alloc(b.max_size);
    bk_req_t reqs[BENCH_WINDOW];
    int ack = 0;
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
                for (int w = 0; w < BENCH_WINDOW; w++)
                    bench_check(&b, bk_isend(sbuf, size, BK_CHAR, 1, BW_TAG, &reqs[w]),
                                "isend");
                bench_check(&b, bk_waitall(BENCH_WINDOW, reqs), "waitall");
                bench_check(&b, bk_recv(&ack, sizeof ack, BK_BYTE, 1, ACK_TAG), "recv");
            } else {
                for (int w = 0; w < BENCH_WINDOW; w++)
                    bench_check(&b, bk_irecv(rbuf, size, BK_CHAR, 0, BW_TAG, &reqs[w]),
                                "irecv");
                bench_check(&b, bk_waitall(BENCH_WINDOW, reqs), "waitall");
                bench_check(&b, bk_send(&ack, sizeof ack, BK_BYTE, 0, ACK_TAG), "send");
            }
        }
        double t = bk_wtime() - t0;
        /* MB/s with MB = 10^6 bytes, as OSU reports it */
        bench_row(&b, size, (double)size / 1e6 * (double)iters * BENCH_WINDOW / t);
    }
    free(sbuf);
    free(rbuf);
    return bench_finish(&b);
}
