/*
 * error.c -- a vcoll error reaches the application the MPI way: as an MPI
 * error class raised on the communicator, so MPI_ERRORS_RETURN code sees
 * it and the default handler aborts the job.
 */
#include <stdarg.h>
#include <stdio.h>
#include "vcmpi.h"

/* VCOLL_LOG=debug: one line per event, with the rank. Here, below the
   statistics and the requests, which both report through it. */
void vcmpi_log(const char *fmt, ...)
{
    if (!vcmpi.debug)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vcoll_mpi[%d]: %s\n", vcmpi.rank, line);
}


static int mpi_class(int vcrc)
{
    switch (vcrc) {
    case VC_SUCCESS: return MPI_SUCCESS;
    case VC_ERR_ARG: return MPI_ERR_ARG;
    case VC_ERR_RANK: return MPI_ERR_ROOT;      /* the only rank a collective takes */
    case VC_ERR_TAG: return MPI_ERR_TAG;
    case VC_ERR_DTYPE: return MPI_ERR_TYPE;
    case VC_ERR_OP: return MPI_ERR_OP;
    case VC_ERR_COUNT: return MPI_ERR_COUNT;
    case VC_ERR_BUFFER: return MPI_ERR_BUFFER;
    case VC_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case VC_ERR_COMM: return MPI_ERR_COMM;
    case VC_ERR_REQUEST: return MPI_ERR_REQUEST;
    case VC_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case VC_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return MPI_ERR_OTHER;              /* transport, peer failure, ... */
    }
}

int vcmpi_error(MPI_Comm comm, int vcrc)
{
    int cls = mpi_class(vcrc);
    vcmpi_log("vcoll failed: %s (MPI error class %d)", vc_strerror(vcrc), cls);
    PMPI_Comm_call_errhandler(comm, cls);
    return cls;
}

int vcmpi_mpi_error(MPI_Comm comm, int cls)
{
    vcmpi_log("drop-in failed: MPI error class %d", cls);
    PMPI_Comm_call_errhandler(comm, cls);
    return cls;
}
