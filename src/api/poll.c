/*
 * poll.c -- progress for a library sharing the process: one
 * non-blocking pass (vc_poll) and the hook vcoll's waits call while idle
 * (vc_set_idle_hook). The MPI drop-in needs both to keep MPI's progress
 * rule across the two libraries: neither may starve the other's requests.
 */
#include <stddef.h>
#include "vcoll.h"
#include "api.h"
#include "p2p/p2p.h"

int vc_poll(int *events)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    int e = prog_poll(&ctx_lib.prog);
    if (events)
        *events = e > 0 ? e : 0;
    return VC_SUCCESS;
}

int vc_set_idle_hook(vc_idle_fn *fn, void *arg)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    /* arg first: a waiter that sees the new fn must see its arg too */
    ctx_lib.prog.idle_hook.arg = arg;
    __atomic_store_n(&ctx_lib.prog.idle_hook.fn, fn, __ATOMIC_RELEASE);
    return VC_SUCCESS;
}
