/*
 * fault.c -- the transports' fault-injection settings (testing only):
 * "A>B@N" = rank A's link to rank B breaks at A's Nth send to B. One parser,
 * so every transport refuses a malformed setting with the same message.
 */
#include <stdio.h>
#include "core/log.h"
#include "net.h"
#include "vcoll.h"

int net_fault_spec(const net_env_t *env, const char *name, const char *spec, int *peer,
                   int *after)
{
    int a, b, n;
    char extra;
    *peer = -1;
    *after = 0;
    if (!spec[0])
        return VC_SUCCESS;
    if (sscanf(spec, "%d>%d@%d%c", &a, &b, &n, &extra) != 3 || a < 0 || a >= env->size ||
        b < 0 || b >= env->size || a == b || n < 1) {
        LOG_ERR("%s=%s: expected A>B@N (ranks A != B below %d, N >= 1)", name, spec,
                env->size);
        return VC_ERR_ARG;
    }
    if (a == env->rank) {
        *peer = b;
        *after = n;
    }
    return VC_SUCCESS;
}
