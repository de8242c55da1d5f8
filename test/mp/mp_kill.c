/*
 * mp_kill.c -- the last rank dies with SIGKILL while the others wait on it.
 * The survivors must not hang: either their receive returns
 * VC_ERR_PEER_FAILED (they print "detected") or the launcher ends the job
 * naming the dead rank. test/mp/kill.sh checks for one of the two within 10 s.
 *
 * MP_KILL_MODE=stop: the victim stops (SIGSTOP) instead: alive, but silent.
 * Only a transport that expects answers can tell: every survivor sends it
 * one message, and over UD the missing acknowledgements must turn into
 * VC_ERR_PEER_FAILED after VCOLL_UD_TIMEOUT. The driver script kills the
 * stopped victim once every survivor has reported (test/verbs/ud-timeout.sh):
 * a survivor that did it could have the launcher end the job before the
 * others had their say.
 *
 * MP_KILL_MODE=send: the survivors wait until the victim is dead, then send
 * to it. Over RC, with VCOLL_PEER_CHECK set out of reach, only the failed
 * send completion can tell them (test/verbs/rc-error.sh).
 *
 * MP_KILL_MODE=any: the survivors wait in the calls that have no single
 * request to watch: rank 0 in vc_waitany over a null entry, a receive from
 * the victim and one from a live rank that never sends; rank 1 in vc_probe
 * on the victim, the others in a wildcard vc_probe.
 *
 * MP_KILL_MODE=persistent: every rank makes a persistent allreduce (8 B,
 * through the flag slots when the world is on one node), a persistent
 * barrier and a 256 KiB persistent allreduce (through a segment of its own
 * on one node, oversubscribed or not); the survivors start them and wait
 * in vc_wait (rank 0: the small allreduce, rank 1 the large one, the
 * others the barrier) for a victim that never starts.
 *
 * MP_KILL_MODE=nonblocking: the survivors start an ibarrier and an ibcast
 * from the victim (8 B: through the flag slots when the world is on one
 * node) that the victim never starts, then a second ibarrier that queues
 * behind them; rank 0 waits on the ibcast, the others on the last
 * ibarrier, which the first must not outlive.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
    const char *mode = getenv("MP_KILL_MODE");
    int stop = mode && strcmp(mode, "stop") == 0;
    int late = mode && strcmp(mode, "send") == 0;
    int any = mode && strcmp(mode, "any") == 0;
    int pers = mode && strcmp(mode, "persistent") == 0;
    int nb = mode && strcmp(mode, "nonblocking") == 0;
    int px = mp_rank, py = 0;
    vc_request_t pr[3] = {VC_REQUEST_NULL, VC_REQUEST_NULL, VC_REQUEST_NULL};
    enum { BIG = 65536 };
    int32_t *bx = pers ? calloc(2 * BIG, sizeof *bx) : NULL;
    if (pers) {     /* inits are matched in order: the victim makes them too */
        if (!bx)
            return 1;
        OK(vc_allreduce_init(&px, &py, 1, VC_INT32, VC_SUM, VC_COMM_WORLD, &pr[0]));
        OK(vc_barrier_init(VC_COMM_WORLD, &pr[1]));
        OK(vc_allreduce_init(bx, bx + BIG, BIG, VC_INT32, VC_SUM, VC_COMM_WORLD, &pr[2]));
    }
    mp_sync();
    if (mp_rank == victim) {
        if (stop)
            raise(SIGSTOP);
        usleep(300000);
        raise(SIGKILL);
    }
    int x = mp_rank;
    vc_status_t st;
    double t0 = vc_wtime();
    if (late)
        usleep(1000000);        /* the victim is gone by now */
    if ((stop || late) && vc_send(&x, 1, VC_INT32, victim, 1, VC_COMM_WORLD) != VC_SUCCESS)
        printf("rank %d: the send to rank %d failed at once\n", mp_rank, victim);
    /* rank 0 waits in a receive from the victim, rank 1 in a wildcard
     * receive, the others in a barrier the victim never reaches */
    int rc;
    if (any && mp_rank == 0) {
        int y = 0, idx = -1;
        vc_request_t rq[3] = {VC_REQUEST_NULL};
        OK(vc_irecv(&x, 1, VC_INT32, victim, 0, VC_COMM_WORLD, &rq[1]));
        OK(vc_irecv(&y, 1, VC_INT32, victim > 1 ? 1 : 0, 77, VC_COMM_WORLD, &rq[2]));
        rc = vc_waitany(3, rq, &idx, &st);
        if (rc == VC_ERR_PEER_FAILED && (idx != 1 || st.error != rc || rq[1]))
            FAIL("waitany: index %d, status error %d", idx, st.error);
    } else if (nb) {
        int64_t b = 0;
        vc_request_t q[3];
        OK(vc_ibarrier(VC_COMM_WORLD, &q[0]));
        OK(vc_ibcast(&b, 1, VC_INT64, victim, VC_COMM_WORLD, &q[1]));
        OK(vc_ibarrier(VC_COMM_WORLD, &q[2]));
        rc = vc_wait(&q[mp_rank == 0 ? 1 : 2], &st);
    } else if (pers) {
        int mine = mp_rank == 0 ? 0 : mp_rank == 1 && victim > 1 ? 2 : 1;
        OK(vc_start(&pr[mine]));
        rc = vc_wait(&pr[mine], &st);
    } else if (any) {
        rc = vc_probe(mp_rank == 1 ? victim : VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &st);
    } else {
        rc = mp_rank == 0 ? vc_recv(&x, 1, VC_INT32, victim, 0, VC_COMM_WORLD, &st)
           : mp_rank == 1 ? vc_recv(&x, 1, VC_INT32, VC_ANY_SOURCE, 0, VC_COMM_WORLD, &st)
                          : vc_barrier(VC_COMM_WORLD);
    }
    if (rc != VC_ERR_PEER_FAILED || mp_fails) {
        FAIL("receive from a dead rank returned %d (%s)", rc, vc_strerror(rc));
        return 1;
    }
    printf("rank %d: detected failure of rank %d after %.2f s: %s\n", mp_rank, victim,
           vc_wtime() - t0, vc_strerror(rc));
    fflush(stdout);
    vc_finalize();
    return 0;
}
