/*
 * init.c -- MPI_Init, MPI_Init_thread, MPI_Finalize: vcoll starts right
 * after the MPI library and stops right before it.
 *
 * Bootstrap: PMIx when the launcher serves it (Open MPI's mpirun, srun
 * --mpi=pmix), else through MPI itself (vc_bootstrap_exchange with a
 * PMPI_Allgather), which works under any launcher the MPI supports.
 * VCOLL_MPI_BOOT=pmix|exchange forces one.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

struct vcmpi vcmpi = {.lock = PTHREAD_MUTEX_INITIALIZER,
                      .poll_lock = PTHREAD_MUTEX_INITIALIZER,
                      .standin = {.m = PTHREAD_MUTEX_INITIALIZER,
                                  .busy = PTHREAD_MUTEX_INITIALIZER,
                                  .c = PTHREAD_COND_INITIALIZER},
                      .type_keyval = MPI_KEYVAL_INVALID};

static int boot_allgather(const void *mine, void *all, size_t len, void *ctx)
{
    MPI_Comm c = *(MPI_Comm *)ctx;
    if (len > INT_MAX)
        return -1;
    return PMPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, c) != MPI_SUCCESS;
}

static int pmix_served(void)
{
    const char *f = getenv("VCOLL_MPI_BOOT");
    if (f && !strcmp(f, "pmix"))
        return 1;
    if (f && !strcmp(f, "exchange"))
        return 0;
    return getenv("PMIX_NAMESPACE") || getenv("PMIX_SERVER_URI41") ||
           getenv("PMIX_SERVER_URI4") || getenv("PMIX_SERVER_URI3") ||
           getenv("PMIX_SERVER_URI21") || getenv("PMIX_SERVER_URI2");
}

static int vc_level(int mpi_level)
{
    return mpi_level == MPI_THREAD_MULTIPLE ? VC_THREAD_MULTIPLE
         : mpi_level == MPI_THREAD_SERIALIZED ? VC_THREAD_SERIALIZED
         : mpi_level == MPI_THREAD_FUNNELED ? VC_THREAD_FUNNELED : VC_THREAD_SINGLE;
}

/* start vcoll here; VC_SUCCESS or why not */
static int start_vcoll(int size)
{
    int rc;
    if (!pmix_served() &&
        (rc = vc_bootstrap_exchange(vcmpi.rank, size, boot_allgather, &vcmpi.priv)))
        return rc;
    int want = vc_level(vcmpi.mpi_thread);
    if (vc_init_thread) {
        rc = vc_init_thread(NULL, NULL, want, &vcmpi.vc_thread);
    } else {
        rc = vc_init(NULL, NULL);
        vcmpi.vc_thread = VC_THREAD_SINGLE;
    }
    if (rc)
        return rc;
    vcmpi.started = 1;
    int r, s;
    if (vc_comm_rank(VC_COMM_WORLD, &r) || vc_comm_size(VC_COMM_WORLD, &s) ||
        r != vcmpi.rank || s != size)
        return VC_ERR_BOOTSTRAP;     /* vcoll's world is not MPI's */
    return VC_SUCCESS;
}

static void setup(void)
{
    int size, rc = VC_SUCCESS;
    const char *e = getenv("VCOLL_MPI_STATS");
    vcmpi.stats = e && *e && strcmp(e, "0");
    e = getenv("VCOLL_LOG");
    vcmpi.debug = e && !strcmp(e, "debug");
    PMPI_Comm_rank(MPI_COMM_WORLD, &vcmpi.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    vcmpi.size = size;
    PMPI_Query_thread(&vcmpi.mpi_thread);
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &vcmpi.priv) != MPI_SUCCESS) {
        return;     /* no private channel: stay out of the way entirely */
    }
    if (PMPI_Comm_dup(MPI_COMM_SELF, &vcmpi.self) != MPI_SUCCESS) {
        PMPI_Comm_free(&vcmpi.priv);
        return;
    }
    vcmpi.ready = 1;
    vcmpi_types_setup();
    vcmpi_alias_setup();
    if (vcmpi_comm_setup())
        rc = VC_ERR_INTERNAL;
    if (!rc)
        rc = start_vcoll(size);
    /* a rank that could not start must not leave the others running
       collectives it will never join: agree */
    int ok = rc == VC_SUCCESS, all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, vcmpi.priv);
    vcmpi.on = all;
    if (all) {
        vcmpi_progress_setup();
        /* MPI_COMM_SELF has no constructor to catch: its twin (a group of
           this rank alone, no traffic) is made here */
        vcmpi_comm_made(MPI_COMM_NULL, -1, MPI_COMM_SELF);
    }
    if (!all && vcmpi.rank == 0)
        fprintf(stderr, "vcoll_mpi: vcoll did not start on every rank%s%s: all "
                "collectives use MPI\n", rc ? ", here: " : "", rc ? vc_strerror(rc) : "");
}

/* Open MPI 4.1's treematch topology component exchanges a distributed
   graph's edges on the parent communicator before it agrees on the new
   one's context id: its receives there take any source with tags -50 and
   -51, and the agreement's non-blocking allreduces on the same parent take
   the next tags of the parent's non-blocking sequence, which passes -50
   and -51 after two dozen such collectives. Where the two meet, a rank can
   take a faster rank's allreduce message for an edge, and the job hangs.
   Which creation they meet in depends on how many non-blocking
   collectives the parent has run; vcoll takes the program's, so the
   drop-in moves the meeting point (MPICH's topo/distgraph1 hung in 6 of 20
   runs preloaded, none plain; plain Open MPI hangs there too once the
   program adds one MPI_Comm_dup at the start: 6 of 20). The base component
   makes the communicator first and exchanges the edges on it, where
   nothing else runs yet: it is used unless the user chose components. */
static void avoid_treematch(void)
{
#if defined(OPEN_MPI)
    if (!getenv("OMPI_MCA_topo"))
        setenv("OMPI_MCA_topo", "^treematch", 0);
#endif
}

int MPI_Init(int *argc, char ***argv)
{
    avoid_treematch();
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    avoid_treematch();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Finalize(void)
{
    if (vcmpi.ready) {
        if (vcmpi.stats)
            vcmpi_report();
        if (vcmpi.on)
            vcmpi_progress_teardown();
        vcmpi_comm_free_all();
        /* vc_finalize is collective; skip it where some rank never started
           (it would wait for them), leaving only memory behind */
        if (vcmpi.started && vcmpi.on)
            vc_finalize();
        vcmpi.on = 0;
        PMPI_Comm_free(&vcmpi.priv);
        PMPI_Comm_free(&vcmpi.self);
        vcmpi.ready = 0;
    }
    return PMPI_Finalize();
}
