/*
 * mp_kill.c -- the last rank dies with SIGKILL while the others wait on it.
 * The survivors must not hang: either their receive returns
 * VC_ERR_PEER_FAILED (they print "detected") or the launcher ends the job
 * naming the dead rank. test/mp/kill.sh checks for one of the two within 10 s.
 */
#include <signal.h>
#include <unistd.h>
#include "mp_util.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int victim = mp_size - 1;
    if (mp_size < 2) {
        printf("mp_kill: needs 2 ranks, skipped\n");
        return mp_finish("mp_kill");
    }
    mp_sync();
    if (mp_rank == victim) {
        usleep(300000);
        raise(SIGKILL);
    }
    int x;
    vc_status_t st;
    double t0 = vc_wtime();
    /* rank 0 waits in a receive from the victim, rank 1 in a wildcard
     * receive, the others in a barrier the victim never reaches */
    int rc = mp_rank == 0 ? vc_recv(&x, 1, VC_INT32, victim, 0, VC_COMM_WORLD, &st)
           : mp_rank == 1 ? vc_recv(&x, 1, VC_INT32, VC_ANY_SOURCE, 0, VC_COMM_WORLD, &st)
                          : vc_barrier(VC_COMM_WORLD);
    if (rc != VC_ERR_PEER_FAILED) {
        FAIL("receive from a dead rank returned %d (%s)", rc, vc_strerror(rc));
        return 1;
    }
    printf("rank %d: detected failure of rank %d after %.2f s: %s\n", mp_rank, victim,
           vc_wtime() - t0, vc_strerror(rc));
    fflush(stdout);
    vc_finalize();
    return 0;
}
