/*
 * vcmpi.h -- the MPI drop-in (libvcoll_mpi_<mpi>.so): MPI collectives
 * intercepted through the PMPI profiling interface and run on vcoll.
 *
 * Built once per MPI from the same sources. Every intercepted call either
 * runs on vcoll ("taken") or hands the very same arguments to PMPI_*
 * ("fallback"); the choice must come out the same on every rank of the
 * communicator, so it only looks at what MPI requires to match there
 * (communicator, reduction datatype and op, contiguity of the data).
 */
#ifndef VCMPI_H
#define VCMPI_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "vcoll.h"
#include "weak.h"

/* every intercepted function, for the statistics */
#define VCMPI_FUNCS(X) \
    X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Allgather) X(Allgatherv) \
    X(Gather) X(Gatherv) X(Scatter) X(Scatterv) X(Alltoall) X(Alltoallv) \
    X(Reduce_scatter) X(Reduce_scatter_block) X(Scan) X(Exscan) \
    X(Ibarrier) X(Ibcast) X(Ireduce) X(Iallreduce) X(Iallgather) X(Iallgatherv) \
    X(Igather) X(Igatherv) X(Iscatter) X(Iscatterv) X(Ialltoall) X(Ialltoallv) \
    X(Ireduce_scatter) X(Ireduce_scatter_block) X(Iscan) X(Iexscan)

enum {
#define VCMPI_ENUM(n) FN_##n,
    VCMPI_FUNCS(VCMPI_ENUM)
#undef VCMPI_ENUM
    FN_COUNT
};

/* an MPI communicator's vcoll twin, cached as an MPI attribute */
typedef struct vcmpi_comm {
    vc_comm_t vc;            /* VC_COMM_NULL: this communicator falls back */
    const char *why;         /* ... and why */
    struct vcmpi_comm *prev, *next;
} vcmpi_comm_t;

/* a non-blocking collective in flight: a generalized MPI request the
   application waits on, completed when vcoll's request is */
typedef struct vcmpi_req {
    MPI_Request mreq;
    vc_request_t vreq;
    MPI_Comm comm;
    void *keep;              /* converted count arrays, freed at completion */
    int done, err;
} vcmpi_req_t;

#define VCMPI_NTYPES 40

/* The drop-in's state. The interposed MPI_* entry points are free functions
 * with MPI's signatures, so this one struct is where they find it. */
struct vcmpi {
    int ready;               /* setup ran: priv and keyval exist */
    int on;                  /* vcoll started, and usable on every rank */
    int started;             /* vcoll started here (so finalize it) */
    int rank;                /* in MPI_COMM_WORLD */
    int mpi_thread, vc_thread;
    int stats, debug;
    MPI_Comm priv;           /* dup of world for the drop-in's own traffic */
    int keyval;
    uint32_t next_tag;       /* for vc_comm_create_group, agreed per comm */
    vcmpi_comm_t *comms;     /* every twin made, to free at MPI_Finalize */
    vcmpi_req_t **reqs;
    int nreq, capreq;
    pthread_mutex_t lock;    /* comms, reqs, next_tag */
    uint64_t taken[FN_COUNT], fallback[FN_COUNT];
    /* types.c: predefined MPI types vcoll reduces, filled at MPI_Init
       (MPICH's handles are constants, Open MPI's are addresses: both
       compare with ==) */
    struct { MPI_Datatype mpi; vc_dtype_t vc; } types[VCMPI_NTYPES];
    int ntypes;
};
extern struct vcmpi vcmpi;

/* comm.c: the vcoll twin of comm, created on first use; VC_COMM_NULL with
   *why set when this call must fall back */
vc_comm_t vcmpi_comm(MPI_Comm comm, const char **why);
int vcmpi_comm_setup(void);
void vcmpi_comm_free_all(void);

/* types.c */
void vcmpi_types_setup(void);
/* contiguous data of any type: its size in bytes per element */
const char *vcmpi_contig(MPI_Datatype dt, size_t *size);
/* bytes of count elements, NULL or why not */
const char *vcmpi_bytes(int count, MPI_Datatype dt, size_t *bytes);
const char *vcmpi_rdtype(MPI_Datatype dt, vc_dtype_t *out);
const char *vcmpi_op(MPI_Op op, vc_op_t *out);
/* n counts (and displacements, if dsp) scaled by unit into one malloc'd
   block *out: counts first, then displacements */
const char *vcmpi_vec(int n, const int *cnt, const int *dsp, size_t unit, size_t **out);

#define VCMPI_BUF(b) ((b) == MPI_IN_PLACE ? VC_IN_PLACE : (void *)(b))
#define VCMPI_CBUF(b) ((b) == MPI_IN_PLACE ? VC_IN_PLACE : (const void *)(b))

/* error.c: vcoll error -> MPI error class through comm's error handler */
int vcmpi_error(MPI_Comm comm, int vcrc);

/* request.c */
int vcmpi_req_start(MPI_Comm comm, vc_request_t vr, void *keep, MPI_Request *req);

/* stats.c */
void vcmpi_fallback(int fn, const char *why);
/* The end of a vcoll attempt. Returns 0 when vcoll refused the arguments
   before any communication (arithmetic on MPI_BYTE and the like: the same
   refusal on every rank), so the caller falls back; otherwise 1, with the
   MPI return code in *ret. req = NULL for a blocking call. */
int vcmpi_finish(int fn, MPI_Comm comm, int rc, MPI_Request *req, vc_request_t vr,
                 void *keep, int *ret);
void vcmpi_report(void);

/* The body every intercepted collective shares: fall back when vc is NULL,
 * why is set or the entry point is missing from this libvcoll; otherwise
 * run the non-blocking (icall, which writes &vr) or blocking (bcall) form
 * and return unless vcoll refused the arguments. keep is freed or handed to
 * the request. The caller's PMPI_* call follows. */
#define VCMPI_TRY(fn, have, vc, why, comm, req, keep, icall, bcall)               \
    do {                                                                        \
        int ret_, rc_;                                                          \
        vc_request_t vr = VC_REQUEST_NULL;                                      \
        if (!(have) && !(why))                                                  \
            (why) = "not in this libvcoll";                                     \
        if ((vc) == VC_COMM_NULL || (why)) {                                    \
            free(keep);                                                         \
            vcmpi_fallback(fn, why);                                            \
            break;                                                              \
        }                                                                       \
        rc_ = (req) ? (icall) : (bcall);                                        \
        if (vcmpi_finish(fn, comm, rc_, req, vr, keep, &ret_))                  \
            return ret_;                                                        \
    } while (0)
void vcmpi_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
