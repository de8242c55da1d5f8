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
 *     request, a probe, a collective that fell back), vcoll's outstanding
 *     requests must move: a peer may be waiting in one. So when any is
 *     outstanding, those calls become their non-blocking form plus a loop
 *     that polls both engines (vcmpi_block). With none outstanding they are
 *     the plain PMPI call after one counter read.
 * Both run in the thread that made the MPI call, so no thread calls MPI
 * behind a program's thread level.
 */
#include "vcmpi.h"

#pragma weak vc_set_idle_hook
#pragma weak vc_poll

/* one progress call of MPI's: a probe that matches nothing (the drop-in's
   private communicator carries no point-to-point traffic) */
static void mpi_idle(void *arg)
{
    int flag;
    (void)arg;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, vcmpi.priv, &flag, MPI_STATUS_IGNORE);
}

void vcmpi_progress_setup(void)
{
    if (vc_set_idle_hook)
        vc_set_idle_hook(mpi_idle, NULL);
}

static int pending(void)
{
    return __atomic_load_n(&vcmpi.nactive, __ATOMIC_ACQUIRE) != 0;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Request r;
    if (!pending())
        return PMPI_Recv(buf, count, dt, src, tag, comm, status);
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    if (!pending())
        return PMPI_Send(buf, count, dt, dest, tag, comm);
    int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    if (!pending())
        return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    int rc = PMPI_Issend(buf, count, dt, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, MPI_STATUS_IGNORE);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    if (!pending())
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
    if (!pending())
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
    while (pending()) {
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

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
    int flag = 0, rc;
    while (pending()) {
        if ((rc = PMPI_Improbe(src, tag, comm, &flag, msg, status)) != MPI_SUCCESS || flag)
            return rc;
        vcmpi_poll();
    }
    return PMPI_Mprobe(src, tag, comm, msg, status);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    MPI_Request r;
    if (!pending())
        return PMPI_Mrecv(buf, count, dt, msg, status);
    int rc = PMPI_Imrecv(buf, count, dt, msg, &r);
    return rc != MPI_SUCCESS ? rc : vcmpi_block(&r, status);
}
