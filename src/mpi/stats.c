/*
 * stats.c -- how many calls of each intercepted function ran on vcoll and
 * how many fell back (VCOLL_MPI_STATS=1: summed over ranks, printed by rank
 * 0 at MPI_Finalize), and why a call fell back (VCOLL_LOG=debug).
 */
#include <stdio.h>
#include <stdlib.h>
#include "vcmpi.h"

static const char *const fn_name[FN_COUNT] = {
#define VCMPI_NAME(n) "MPI_" #n,
    VCMPI_FUNCS(VCMPI_NAME)
#undef VCMPI_NAME
};

/* counters are per process and only summed at the end: a relaxed atomic
   add (vcmpi_count) keeps MPI_THREAD_MULTIPLE programs exact without a lock */

void vcmpi_fallback_log(int fn, const char *why)
{
    vcmpi_log("%s falls back to MPI: %s", fn_name[fn], why);
}

int vcmpi_finish(int fn, MPI_Comm comm, int rc, MPI_Request *req, vc_request_t vr,
                 vcmpi_stage_t *st, int *ret)
{
    /* refusals of the arguments themselves, before any traffic */
    if (rc == VC_ERR_DTYPE || rc == VC_ERR_OP || rc == VC_ERR_UNSUPPORTED) {
        vcmpi_stage_finish(st, 0);
        vcmpi_fallback(fn, vc_strerror(rc));
        return 0;
    }
    vcmpi_count_taken(fn);
    if (rc) {
        vcmpi_stage_finish(st, 0);
        *ret = vcmpi_error(comm, rc);
    } else if (req) {
        vcmpi_stage_t *h = NULL;
        if (vcmpi_stage_busy(st)) {  /* its vcoll op and held MPI op too */
            if ((h = malloc(sizeof *h)))
                *h = *st;
            else if (st->persistent) {
                vc_request_free(&vr);
                vcmpi_stage_finish(st, 0);
                *req = MPI_REQUEST_NULL;
                *ret = vcmpi_mpi_error(comm, MPI_ERR_NO_MEM);
                return 1;
            } else {
                /* nowhere to keep it: finish now, correct if not overlapped */
                int vrc = vc_wait(&vr, VC_STATUS_IGNORE);
                int urc = vcmpi_stage_finish(st, !vrc);
                *req = MPI_REQUEST_NULL;
                *ret = vrc ? vcmpi_error(comm, vrc) : urc ? vcmpi_mpi_error(comm, urc)
                                                         : MPI_SUCCESS;
                return 1;
            }
        }
        *ret = st->persistent ? vcmpi_preq_init(comm, vr, h, req)
                              : vcmpi_req_start(comm, vr, h, req);
    } else {
        int urc = vcmpi_stage_finish(st, 1);
        *ret = urc ? vcmpi_mpi_error(comm, urc) : MPI_SUCCESS;
    }
    return 1;
}

void vcmpi_report(void)
{
    uint64_t mine[2 * FN_COUNT], sum[2 * FN_COUNT];
    for (int i = 0; i < FN_COUNT; i++) {
        mine[i] = __atomic_load_n(&vcmpi.taken[i], __ATOMIC_RELAXED);
        mine[FN_COUNT + i] = __atomic_load_n(&vcmpi.fallback[i], __ATOMIC_RELAXED);
    }
    if (PMPI_Reduce(mine, sum, 2 * FN_COUNT, MPI_UINT64_T, MPI_SUM, 0, vcmpi.priv) !=
        MPI_SUCCESS || vcmpi.rank != 0)
        return;
    for (int i = 0; i < FN_COUNT; i++)
        if (sum[i] || sum[FN_COUNT + i])
            fprintf(stderr, "vcoll_mpi: %s taken=%llu fallback=%llu\n", fn_name[i],
                    (unsigned long long)sum[i], (unsigned long long)sum[FN_COUNT + i]);
    fflush(stderr);
}
