/*
 * bootstrap.c -- vc_bootstrap_exchange: a caller that already runs a
 * parallel job (the MPI drop-in under MPICH's hydra, where no PMIx server
 * exists) lends vcoll its own allgather for the bootstrap. Armed before
 * vc_init, so it is kept in the context's boot state, which vc_init's
 * boot_init preserves while it is armed (boot/exchange.c).
 */
#include "vcoll.h"
#include "api.h"

int vc_bootstrap_exchange(int rank, int size, vc_allgather_fn *allgather, void *ctx)
{
    VC_API_ENTER();
    if (ctx_lib.initialized)
        return VC_ERR_ARG;          /* it would apply to no vc_init */
    if (!allgather || size < 1 || rank < 0 || rank >= size)
        return VC_ERR_ARG;
    boot_exch_arm(&ctx_lib.boot, rank, size, allgather, ctx);
    return VC_SUCCESS;
}
