/*
 * mp_scoped.c -- a dead rank fails only what involves it.
 *
 * Before the death every rank joins `live`, a communicator of all ranks but
 * the victim (the last rank), and the victim dies with SIGKILL. Then each
 * survivor checks, against values computed here:
 *   - a receive from the victim, driven only by vc_test, ends with
 *     VC_ERR_PEER_FAILED naming it (vc_test reports failures) within 10 s;
 *   - a wildcard receive on the world ends the same way;
 *   - allreduce, bcast and a p2p ring on `live` still work, repeatedly;
 *   - a barrier on the world (which contains the victim) fails with
 *     VC_ERR_PEER_FAILED instead of hanging;
 *   - a non-blocking allreduce on a dup of the world fails the same way.
 * Run under `mpirun --enable-recovery` (test/mp/kill.sh), which keeps the
 * job alive after a rank dies.
 */
#include <signal.h>
#include <unistd.h>
#include "mp_util.h"

static void expect_failed(int rc, const char *what)
{
    if (rc != VC_ERR_PEER_FAILED)
        FAIL("%s returned %d (%s), expected VC_ERR_PEER_FAILED", what, rc, vc_strerror(rc));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    if (mp_size < 3) {
        printf("mp_scoped: needs 3 ranks, skipped\n");
        return mp_finish("mp_scoped");
    }
    int victim = mp_size - 1, nlive = mp_size - 1;
    vc_comm_t live = VC_COMM_NULL, wdup = VC_COMM_NULL;
    OK(vc_comm_split(VC_COMM_WORLD, mp_rank == victim ? VC_UNDEFINED : 0, mp_rank, &live));
    OK(vc_comm_dup(VC_COMM_WORLD, &wdup));
    mp_sync();
    if (mp_rank == victim) {
        usleep(200000);
        raise(SIGKILL);
    }

    /* a receive from the victim, polled with vc_test only */
    int x = -1, flag = 0;
    vc_request_t rq;
    vc_status_t st;
    OK(vc_irecv(&x, 1, VC_INT32, victim, 5, VC_COMM_WORLD, &rq));
    double t0 = vc_wtime();
    int rc = VC_SUCCESS;
    while (!flag && vc_wtime() - t0 < 20) {
        rc = vc_test(&rq, &flag, &st);
        if (!flag)
            usleep(1000);
    }
    if (!flag)
        FAIL("vc_test never reported the receive from dead rank %d", victim);
    else
        expect_failed(rc, "vc_test on a receive from the dead rank");
    double t_detect = vc_wtime() - t0;
    if (flag && t_detect > 10)
        FAIL("failure reported after %.1f s (more than 10)", t_detect);

    /* wildcard receive on the world: the victim could have been the sender */
    expect_failed(vc_recv(&x, 1, VC_INT32, VC_ANY_SOURCE, 6, VC_COMM_WORLD, &st),
                  "wildcard vc_recv on the world");

    /* the survivors' communicator keeps working */
    int lr, ls;
    OK(vc_comm_rank(live, &lr));
    OK(vc_comm_size(live, &ls));
    if (ls != nlive)
        FAIL("live communicator has %d ranks, expected %d", ls, nlive);
    for (int it = 0; it < 20; it++) {
        int64_t v = (int64_t)(lr + 1) * (it + 3), sum = 0, want = 0;
        for (int r = 0; r < ls; r++)
            want += (int64_t)(r + 1) * (it + 3);
        OK(vc_allreduce(&v, &sum, 1, VC_INT64, VC_SUM, live));
        if (sum != want)
            FAIL("allreduce on live: %lld, expected %lld", (long long)sum, (long long)want);
        int b = lr == it % ls ? 1000 + it : -1;
        OK(vc_bcast(&b, 1, VC_INT32, it % ls, live));
        if (b != 1000 + it)
            FAIL("bcast on live: %d, expected %d", b, 1000 + it);
        int out = lr * 100 + it, in = -1;
        OK(vc_sendrecv(&out, 1, VC_INT32, (lr + 1) % ls, 9, &in, 1, VC_INT32,
                       (lr - 1 + ls) % ls, 9, live, &st));
        if (in != ((lr - 1 + ls) % ls) * 100 + it)
            FAIL("ring on live: got %d", in);
    }

    /* collectives on communicators that contain the victim fail */
    expect_failed(vc_barrier(VC_COMM_WORLD), "vc_barrier on the world");
    int64_t one = 1, all = 0;
    vc_request_t cr;
    rc = vc_iallreduce(&one, &all, 1, VC_INT64, VC_SUM, wdup, &cr);
    if (rc == VC_SUCCESS)
        rc = vc_wait(&cr, VC_STATUS_IGNORE);
    expect_failed(rc, "vc_iallreduce + vc_wait on a dup of the world");

    printf("rank %d: detected failure of rank %d after %.2f s; live communicator of %d "
           "kept working\n", mp_rank, victim, t_detect, ls);
    fflush(stdout);
    OK(vc_comm_free(&live));
    OK(vc_comm_free(&wdup));
    vc_finalize();
    return mp_fails ? 1 : 0;
}
