/* error.c -- a sentence for every error code (vc_strerror's, and the
 * library's own messages'). */
#include "vcoll.h"
#include "error.h"

const char *core_strerror(int err)
{
    switch (err) {
    case VC_SUCCESS: return "success";
    case VC_ERR_ARG: return "invalid argument";
    case VC_ERR_RANK: return "rank or root out of range for the communicator";
    case VC_ERR_TAG: return "tag out of range (valid tags are 0..VC_TAG_UB, or VC_ANY_TAG for receives)";
    case VC_ERR_DTYPE: return "unknown datatype";
    case VC_ERR_OP: return "unknown reduction operation, or operation not valid for the datatype";
    case VC_ERR_COUNT: return "count times datatype size overflows";
    case VC_ERR_BUFFER: return "NULL buffer with a non-zero count";
    case VC_ERR_TRUNCATE: return "message truncated: it is longer than the receive buffer";
    case VC_ERR_COMM: return "invalid or freed communicator";
    case VC_ERR_REQUEST: return "invalid request (already completed, freed or never created)";
    case VC_ERR_NOMEM: return "out of memory";
    case VC_ERR_NOT_INITIALIZED: return "vcoll is not initialized (call vc_init first; no calls after vc_finalize)";
    case VC_ERR_BOOTSTRAP: return "bootstrap failed (the launcher, PMIx or a peer at start-up: the message before this one says which)";
    case VC_ERR_TRANSPORT: return "transport failure (device, queue pair, completion queue or shared memory)";
    case VC_ERR_PEER_FAILED: return "a peer process died or became unreachable";
    case VC_ERR_TIMEOUT: return "operation timed out";
    case VC_ERR_UNSUPPORTED: return "operation not supported";
    case VC_ERR_INTERNAL: return "internal error in vcoll";
    }
    return "unknown error code";
}
