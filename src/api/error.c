/* error.c -- vc_strerror: core's sentence for the code. */
#include "vcoll.h"
#include "core/error.h"

const char *vc_strerror(int err)
{
    return core_strerror(err);
}
