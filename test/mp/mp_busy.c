/*
 * mp_busy.c -- busy is not dead. The last rank computes for MP_BUSY_SECS
 * seconds (default 8) without calling vcoll while every other rank has
 * messages in flight to it (eager ones and one rendezvous), then receives
 * them all. Nobody may declare it dead: over UD its data path acknowledges
 * nothing while it computes, longer than VCOLL_UD_TIMEOUT in the tests
 * (test/verbs/ud-busy.sh), and only its liveness thread answers. Every
 * message is checked byte by byte.
 */
#include <time.h>
#include "mp_util.h"

#define NMSG 64
#define SMALL 1000
#define BIG (256 * 1024)

static double busy_until(double t)
{
    volatile double x = 1;
    while (vc_wtime() < t)
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    const char *e = getenv("MP_BUSY_SECS");
    double secs = e ? atof(e) : 8;
    int busy = mp_size - 1;
    if (mp_size < 2) {
        printf("mp_busy: needs 2 ranks, skipped\n");
        return mp_finish("mp_busy");
    }
    uint8_t *small = malloc((size_t)NMSG * SMALL), *big = malloc(BIG);
    vc_request_t rq[NMSG + 1];
    mp_sync();
    if (mp_rank != busy) {
        for (int i = 0; i < NMSG; i++) {
            mp_fill(small + (size_t)i * SMALL, mp_rank, 1000 + i, SMALL);   /* keyed by i */
            OK(vc_isend(small + (size_t)i * SMALL, SMALL, VC_UINT8, busy, i, VC_COMM_WORLD, &rq[i]));
        }
        mp_fill(big, mp_rank, busy, BIG);
        OK(vc_isend(big, BIG, VC_UINT8, busy, NMSG, VC_COMM_WORLD, &rq[NMSG]));
        double t0 = vc_wtime();
        OK(vc_waitall(NMSG + 1, rq, NULL));
        printf("rank %d: all sends to the busy rank completed after %.1f s\n", mp_rank,
               vc_wtime() - t0);
    } else {
        busy_until(vc_wtime() + secs);
        for (int src = 0; src < busy; src++) {
            for (int i = 0; i < NMSG; i++) {
                vc_status_t st;
                OK(vc_recv(small, SMALL, VC_UINT8, src, i, VC_COMM_WORLD, &st));
                mp_fill(big, src, 1000 + i, SMALL);   /* the expected bytes */
                if (memcmp(small, big, SMALL))
                    FAIL("message %d from rank %d corrupted", i, src);
            }
            OK(vc_recv(big, BIG, VC_UINT8, src, NMSG, VC_COMM_WORLD, VC_STATUS_IGNORE));
            size_t bad = mp_verify(big, src, busy, BIG);
            if (bad)
                FAIL("big message from rank %d wrong at byte %zu", src, bad - 1);
        }
        printf("rank %d: computed %.0f s without vcoll calls, then received everything\n",
               mp_rank, secs);
    }
    OK(vc_barrier(VC_COMM_WORLD));
    free(small);
    free(big);
    return mp_finish("mp_busy");
}
