/* comm.c -- the check every use of a communicator handle starts with. */
#include "vcoll.h"
#include "comm.h"

int comm_check(vc_comm_t c)
{
    if (!c || c->magic != COMM_MAGIC)
        return VC_ERR_COMM;
    return VC_SUCCESS;
}
