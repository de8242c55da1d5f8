/*
 * mp_oneside.c -- an RC connection that fails at one end only must fail
 * the pair's operations at both ends, and nothing else.
 *
 * Run with VCOLL_NET=rc and VCOLL_FAULT_RC_ERR=0>1@N: rank 0 moves its QP
 * to rank 1 into the error state after N sends (what a transport retry
 * timeout does under load). Rank 1's QP stays healthy and rank 1 only
 * receives, so no completion will ever tell it anything; rank 0 is alive
 * and answers heartbeats. Only rank 0's DOWN notice can end rank 1's wait.
 *
 * Checks: rank 0 gets VC_ERR_PEER_FAILED on the pair; rank 1 gets it on a
 * receive from rank 0 within MP_ONESIDE_LIMIT seconds (default 15); every
 * other rank, and both of them with every other rank, still exchange
 * verified data (the failure is scoped to the pair). Each rank prints one
 * line; test/verbs/rc-oneside.sh checks that the log names the right ranks.
 */
#include <stdlib.h>
#include <string.h>
#include "../mp/mp_util.h"

#define NMSG 40

/* every rank but 0 and 1 pairs with everybody; 0 and 1 avoid each other */
static void exchange_with_others(void)
{
    for (int peer = 0; peer < mp_size; peer++) {
        if (peer == mp_rank || (mp_rank < 2 && peer < 2))
            continue;
        uint8_t out[1000], in[1000];
        mp_fill(out, mp_rank, peer, sizeof out);
        memset(in, 0, sizeof in);
        OK(vc_sendrecv(out, sizeof out, VC_BYTE, peer, 7, in, sizeof in, VC_BYTE, peer, 7,
                       VC_COMM_WORLD, VC_STATUS_IGNORE));
        size_t bad = mp_verify(in, peer, mp_rank, sizeof in);
        if (bad)
            FAIL("data from rank %d wrong at byte %zu after the pair 0-1 failed", peer, bad - 1);
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    if (mp_size < 2) {
        printf("mp_oneside: needs 2 ranks, skipped\n");
        return mp_finish("mp_oneside");
    }
    const char *lim = getenv("MP_ONESIDE_LIMIT");
    double limit = lim ? atof(lim) : 15.0;
    mp_sync();
    double t0 = vc_wtime();
    int x[NMSG], rc = VC_SUCCESS, i;
    if (mp_rank == 0) {
        for (i = 0; i < NMSG && rc == VC_SUCCESS; i++) {
            x[i] = i;
            rc = vc_send(&x[i], 1, VC_INT32, 1, 1, VC_COMM_WORLD);
        }
        /* the error completion may come after the last send was posted:
           waiting for rank 1's answer then fails on the dead pair */
        if (rc == VC_SUCCESS)
            rc = vc_recv(&x[0], 1, VC_INT32, 1, 2, VC_COMM_WORLD, VC_STATUS_IGNORE);
    } else if (mp_rank == 1) {
        for (i = 0; i < NMSG && rc == VC_SUCCESS; i++) {
            rc = vc_recv(&x[i], 1, VC_INT32, 0, 1, VC_COMM_WORLD, VC_STATUS_IGNORE);
            if (rc == VC_SUCCESS && x[i] != i)
                FAIL("message %d from rank 0 carries %d", i, x[i]);
        }
        if (rc == VC_SUCCESS)
            rc = vc_send(&x[0], 1, VC_INT32, 0, 2, VC_COMM_WORLD);
    }
    double t = vc_wtime() - t0;
    if (mp_rank < 2) {
        if (rc != VC_ERR_PEER_FAILED)
            FAIL("the pair 0-1 should have failed; got %d (%s)", rc, vc_strerror(rc));
        else if (t > limit)
            FAIL("the failure took %.1f s to reach rank %d (limit %.0f s)", t, mp_rank, limit);
        else
            printf("rank %d: detected failure of rank %d after %.2f s\n", mp_rank, 1 - mp_rank, t);
        fflush(stdout);
    }
    exchange_with_others();
    return mp_finish("mp_oneside");
}
