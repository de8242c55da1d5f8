/*
 * progress.c -- MPI's progress rule across two libraries.
 *
 * MPI promises that an operation a program started completes once the
 * matching operations are posted, whatever else this rank blocks in. With
 * vcoll under MPI there are two progress engines, and each only moves when
 * called:
 *   - while vcoll waits (a blocking collective it runs, or a wait on one of
 *     its requests), MPI's engine must run too: a peer may need an MPI
 *     message of ours (a large MPI_Isend) before it can join. vcoll calls
 *     the idle hook installed here, which makes one MPI progress call.
 *   - while the program blocks in MPI (a receive, a wait on an MPI
 *     request, a collective that fell back, a constructor), vcoll's
 *     outstanding requests must move: a peer may be waiting in one. A
 *     blocking collective must stay blocking, though: MPI matches it only
 *     with the same blocking call on the other ranks, and whether vcoll
 *     requests are pending differs between ranks (rank 0 in MPI_Alltoallw
 *     with an MPI_Ibarrier still open, the others past their wait: a
 *     non-blocking form there hung at np 2 and 4). So:
 *       . Open MPI calls the callbacks registered with its progress engine
 *         on every pass of every wait it makes: one of them polls vcoll
 *         (mpi_drives_vc), and every MPI call just runs, but for the
 *         waits it makes in the process manager (spawn, accept, connect,
 *         join: PMIx), where no callback runs: those get the stand-in
 *         below, as on MPICH (VCMPI_BLOCKING_PM);
 *       . elsewhere (MPICH 4.0 lets nothing outside the library into its
 *         progress engine) a blocking point-to-point call becomes its
 *         non-blocking form plus a loop that polls both engines
 *         (vcmpi_block), and a blocking collective or constructor runs as
 *         it is while a stand-in thread polls vcoll (standin_*).
 *     With nothing outstanding every call is the plain PMPI call after one
 *     counter read.
 * The hook and the loops run in the thread that made the MPI call; the
 * stand-in calls vcoll only, never MPI, so no thread calls MPI behind a
 * program's thread level.
 */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vcmpi.h"

#pragma weak vc_set_idle_hook
#pragma weak vc_poll

/* set while this thread is in vcoll's wait and makes MPI progress for it:
   MPI's engine must not call back into vcoll from there */
static __thread int in_mpi_idle;

/* one progress call of MPI's: a probe that matches nothing (the drop-in's
   private communicator carries no point-to-point traffic) */
static void mpi_idle(void *arg)
{
    int flag;
    (void)arg;
    in_mpi_idle = 1;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, vcmpi.priv, &flag, MPI_STATUS_IGNORE);
    in_mpi_idle = 0;
}

#if defined(OPEN_MPI) && OPEN_MPI
/* Open MPI's progress engine (libopen-pal, loaded with libmpi) */
typedef int (*opal_cb_t)(void);
extern int opal_progress_register(opal_cb_t cb);
extern int opal_progress_unregister(opal_cb_t cb);
#pragma weak opal_progress_register
#pragma weak opal_progress_unregister

/* MPI's engine polls vcoll: one pass over vcoll's transports and
   schedules, never from inside vcoll (mpi_idle) and never while another
   thread drives vcoll's requests (poll_lock). The completions MPI is told
   of (PMPI_Grequest_complete) are left to the program's next wait or test
   on them: only the wire has to move here. */
static int mpi_drives_vc(void)
{
    int events = 0;
    if (!vcmpi_pending() || in_mpi_idle || pthread_mutex_trylock(&vcmpi.poll_lock))
        return 0;
    vc_poll(&events);
    pthread_mutex_unlock(&vcmpi.poll_lock);
    return events;
}
#endif

static void hook_mpi(void)
{
#if defined(OPEN_MPI) && OPEN_MPI
    const char *e = getenv("VCOLL_MPI_HOOK");
    if (e && !strcmp(e, "0"))
        return;     /* the stand-in instead: the same paths as on MPICH */
    if (vc_poll && opal_progress_register && opal_progress_unregister &&
        opal_progress_register(mpi_drives_vc) == 0)
        vcmpi.mpi_drives = 1;
#endif
}

static void unhook_mpi(void)
{
#if defined(OPEN_MPI) && OPEN_MPI
    if (vcmpi.mpi_drives)
        opal_progress_unregister(mpi_drives_vc);
    vcmpi.mpi_drives = 0;
#endif
}

/* The stand-in: a thread that polls vcoll while threads of the program
 * are blocked in MPI (armed > 0). vcoll is not touched by those threads
 * meanwhile (they are inside MPI), so even a single-threaded vcoll has
 * one caller at a time: busy is held across each poll, and a thread
 * leaving MPI takes it once, so it is back in vcoll only after the
 * stand-in's last poll. Under VC_THREAD_MULTIPLE vcoll's own lock covers
 * the program's other threads. */
static void *standin_main(void *arg)
{
    unsigned idle = 0;
    (void)arg;
    pthread_mutex_lock(&vcmpi.standin.m);
    while (!vcmpi.standin.quit) {
        if (!__atomic_load_n(&vcmpi.standin.armed, __ATOMIC_ACQUIRE)) {
            idle = 0;
            pthread_cond_wait(&vcmpi.standin.c, &vcmpi.standin.m);
            continue;
        }
        pthread_mutex_unlock(&vcmpi.standin.m);
        int events = 0;
        pthread_mutex_lock(&vcmpi.standin.busy);
        /* where MPI's engine drives vcoll (VCMPI_BLOCKING_PM armed us),
           the blocked call may still pass through it: one poller at a
           time, as there */
        int mine = !vcmpi.mpi_drives || !pthread_mutex_trylock(&vcmpi.poll_lock);
        if (mine && __atomic_load_n(&vcmpi.standin.armed, __ATOMIC_ACQUIRE))
            vc_poll(&events);
        if (mine && vcmpi.mpi_drives)
            pthread_mutex_unlock(&vcmpi.poll_lock);
        pthread_mutex_unlock(&vcmpi.standin.busy);
        /* nothing moved: give the core up (the blocked MPI call spins on
           it, and ranks often outnumber cores), then sleep a little */
        if (events)
            idle = 0;
        else if (++idle < 1024)
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 20000}, NULL);
        pthread_mutex_lock(&vcmpi.standin.m);
    }
    pthread_mutex_unlock(&vcmpi.standin.m);
    return NULL;
}

int vcmpi_standin_arm(void)
{
    pthread_mutex_lock(&vcmpi.standin.m);
    if (!vcmpi.standin.started && !vcmpi.standin.quit) {
        /* signals stay with the program's threads */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        vcmpi.standin.started = !pthread_create(&vcmpi.standin.t, NULL, standin_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!vcmpi.standin.started && !vcmpi.standin.warned) {
            vcmpi.standin.warned = 1;
            vcmpi_log("no thread to keep vcoll moving while MPI blocks: a rank "
                      "waiting on a non-blocking collective of this one may hang");
        }
    }
    int ok = vcmpi.standin.started;
    if (ok) {
        __atomic_fetch_add(&vcmpi.standin.armed, 1, __ATOMIC_RELEASE);
        pthread_cond_signal(&vcmpi.standin.c);
    }
    pthread_mutex_unlock(&vcmpi.standin.m);
    return ok;
}

void vcmpi_standin_disarm(void)
{
    __atomic_fetch_sub(&vcmpi.standin.armed, 1, __ATOMIC_RELEASE);
    /* wait out a poll the stand-in may be in */
    pthread_mutex_lock(&vcmpi.standin.busy);
    pthread_mutex_unlock(&vcmpi.standin.busy);
}

static void standin_stop(void)
{
    pthread_mutex_lock(&vcmpi.standin.m);
    vcmpi.standin.quit = 1;
    pthread_cond_signal(&vcmpi.standin.c);
    int started = vcmpi.standin.started;
    vcmpi.standin.started = 0;
    pthread_mutex_unlock(&vcmpi.standin.m);
    if (started)
        pthread_join(vcmpi.standin.t, NULL);
}

void vcmpi_progress_setup(void)
{
    if (vc_set_idle_hook)
        vc_set_idle_hook(mpi_idle, NULL);
    hook_mpi();
}

/* before vcoll goes: nothing may poll it after this */
void vcmpi_progress_teardown(void)
{
    /* the stand-in reads mpi_drives: joined before it changes */
    standin_stop();
    unhook_mpi();
}

/* the point-to-point calls below: their non-blocking form and a loop
   that polls both engines (vcmpi_block), where MPI's engine does not poll
   vcoll itself */

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Request r;
    if (!vcmpi_must_drive())
        return PMPI_Recv(buf, count, dt, src, tag, comm, status);
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    if (!vcmpi_must_drive())
        return PMPI_Send(buf, count, dt, dest, tag, comm);
    int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    if (!vcmpi_must_drive())
        return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    int rc = PMPI_Issend(buf, count, dt, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, MPI_STATUS_IGNORE);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    if (!vcmpi_must_drive())
        return PMPI_Rsend(buf, count, dt, dest, tag, comm);
    int rc = PMPI_Irsend(buf, count, dt, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, MPI_STATUS_IGNORE);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rt, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    MPI_Request r[2];
    MPI_Status sts[2];
    if (!vcmpi_must_drive())
        return PMPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, comm,
                             status);
    int rc = PMPI_Irecv(rbuf, rcount, rt, src, rtag, comm, &r[0]);
    if (rc == MPI_SUCCESS && (rc = PMPI_Isend(sbuf, scount, st, dest, stag, comm, &r[1])))
        PMPI_Cancel(&r[0]), PMPI_Request_free(&r[0]);
    if (rc == MPI_SUCCESS && (rc = vcmpi_block(&r[0], &sts[0])) == MPI_SUCCESS)
        rc = vcmpi_block(&r[1], &sts[1]);
    if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
        *status = sts[0];
    return rc;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0, rc;
    while (vcmpi_must_drive()) {
        if ((rc = PMPI_Iprobe(src, tag, comm, &flag, status)) != MPI_SUCCESS || flag)
            return rc;
        vcmpi_poll();
    }
    return PMPI_Probe(src, tag, comm, status);
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    vcmpi_poll();
    return PMPI_Iprobe(src, tag, comm, flag, status);
}

/* the tests a program may loop on: each one moves vcoll too */
int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                MPI_Status *status)
{
    vcmpi_poll();
    return PMPI_Improbe(src, tag, comm, flag, msg, status);
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    vcmpi_poll();
    return PMPI_Win_test(win, flag);
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
    int flag = 0, rc;
    while (vcmpi_must_drive()) {
        if ((rc = PMPI_Improbe(src, tag, comm, &flag, msg, status)) != MPI_SUCCESS || flag)
            return rc;
        vcmpi_poll();
    }
    return PMPI_Mprobe(src, tag, comm, msg, status);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    MPI_Request r;
    if (!vcmpi_must_drive())
        return PMPI_Mrecv(buf, count, dt, msg, status);
    int rc = PMPI_Imrecv(buf, count, dt, msg, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, status);
}
