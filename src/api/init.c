/*
 * init.c -- vc_init, vc_init_thread, vc_query_thread, vc_finalize,
 * vc_initialized, vc_abort, vc_wtime and vc_version_string. The work is
 * the lifecycle's (src/lifecycle); here are the lock, the thread level and
 * the world object VC_COMM_WORLD points at.
 */
#include <stdio.h>
#include <unistd.h>
#include "api.h"
#include "core/clock.h"
#include "lifecycle/lifecycle.h"


const char *vc_version_string(void)
{
    return core_version();
}

double vc_wtime(void)
{
    return core_wtime();
}

/* Lock-free, as MPI_Initialized may be called from any thread at any time:
 * `initialized` is stored atomically by vc_init / vc_finalize for it. */
int vc_initialized(int *flag)
{
    if (!flag)
        return VC_ERR_ARG;
    *flag = __atomic_load_n(&ctx_lib.initialized, __ATOMIC_ACQUIRE);
    return VC_SUCCESS;
}

int vc_init(int *argc, char ***argv)
{
    VC_API_ENTER();
    (void)argc;
    (void)argv;
    return life_init(&vc_comm_world_obj);
}

/* The level is granted once the library is up; thread_multiple is switched
 * on last, while the caller is still the only thread in the library (MPI's
 * rule for init), so the threads it starts afterwards see it set. Waits
 * then give the lock up through the progress layer's yield. */
int vc_init_thread(int *argc, char ***argv, int required, int *provided)
{
    VC_API_ENTER();
    if (required < VC_THREAD_SINGLE || required > VC_THREAD_MULTIPLE || !provided)
        return VC_ERR_ARG;
    int rc = vc_init(argc, argv);
    if (rc)
        return rc;
    struct vc_ctx *c = &ctx_lib;
    c->thread_level = required;
    if (required == VC_THREAD_MULTIPLE) {
        c->prog.yield = api_lock_idle;
        c->prog.pass = api_lock_pass;
        c->thread_multiple = 1;
    }
    *provided = required;
    return VC_SUCCESS;
}

int vc_query_thread(int *provided)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!provided)
        return VC_ERR_ARG;
    *provided = ctx_lib.thread_level;
    return VC_SUCCESS;
}

int vc_finalize(void)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    return life_finalize(&vc_comm_world_obj);
}

/* No library lock: abort must end the job even while another thread holds
 * it (say, inside the PMIx fence of vc_finalize); it reads nothing that
 * changes after vc_init. */
int vc_abort(vc_comm_t comm, int errorcode)
{
    (void)comm;
    char msg[128];
    snprintf(msg, sizeof msg, "vc_abort(%d) called by rank %d", errorcode, ctx_lib.rank);
    if (!__atomic_load_n(&ctx_lib.initialized, __ATOMIC_ACQUIRE)) {
        fprintf(stderr, "vcoll: %s before vc_init\n", msg);
        _exit(errorcode ? errorcode : 1);
    }
    boot_abort(&ctx_lib.boot, errorcode, msg);
    return VC_SUCCESS;
}
