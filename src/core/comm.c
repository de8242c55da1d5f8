/* comm.c -- the world communicator and rank/size queries. dup/split/free
 * live with the collectives (src/coll/comm_split.c) because they need them. */
#include "vcoll.h"
#include "comm.h"
#include "ctx.h"

struct vc_comm vc_comm_world_obj;

int comm_check(vc_comm_t c)
{
    if (!c || c->magic != COMM_MAGIC)
        return VC_ERR_COMM;
    return VC_SUCCESS;
}

int vc_comm_rank(vc_comm_t comm, int *rank)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!rank)
        return VC_ERR_ARG;
    *rank = comm->rank;
    return VC_SUCCESS;
}

int vc_comm_size(vc_comm_t comm, int *size)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!size)
        return VC_ERR_ARG;
    *size = comm->size;
    return VC_SUCCESS;
}
