/*
 * vdev.c -- the one verbs device (port, device context, PD) a rank's verbs
 * transports share: RC, UD, RC's fallback UD and the heartbeat. They would
 * all pick the same port anyway (the same hwloc choice from the same
 * inputs); sharing it opens the device once instead of three or four
 * times, and one PD means one protection domain for every registration and
 * address handle the rank makes. Each transport keeps its own CQs and QPs,
 * so no data path is shared. Reference counted: the last put closes it.
 *
 * The count is the application thread's alone: every get and put happens
 * while a transport opens or closes (the heartbeat's thread never takes or
 * drops one), and those run under the library lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/log.h"
#include "net/net.h"
#include "net/verbs/device.h"

int net_vdev_get(const net_env_t *env, const char *tag, net_vdev_t **out)
{
    *out = NULL;
    if (!env->vdev)
        return VC_ERR_ARG;
    net_vdev_t *d = *env->vdev;
    if (d) {
        *out = net_vdev_hold(d);
        return VC_SUCCESS;
    }
    if (!(d = calloc(1, sizeof *d)))
        return VC_ERR_NOMEM;
    int rc;
    if ((rc = net_vport_pick(env, tag, &d->port, d->why, sizeof d->why)) ||
        (rc = net_vport_open(&d->port, tag, &d->ctx)))
        goto fail;
    if (!(d->pd = ibv_alloc_pd(d->ctx))) {
        LOG_ERR("%s: ibv_alloc_pd(%s): %s", tag, d->port.dev, strerror(errno));
        rc = VC_ERR_TRANSPORT;
        goto fail;
    }
    d->refs = 1;
    d->slot = env->vdev;
    *d->slot = d;
    *out = d;
    return VC_SUCCESS;
fail:
    if (d->ctx)
        ibv_close_device(d->ctx);
    free(d);
    return rc;
}

net_vdev_t *net_vdev_hold(net_vdev_t *d)
{
    d->refs++;
    return d;
}

void net_vdev_put(net_vdev_t *d)
{
    if (!d || --d->refs > 0)
        return;
    /* every user destroyed its QPs, AHs and MRs before its put; a PD still
       busy means one did not, and the device goes anyway */
    if (ibv_dealloc_pd(d->pd))
        LOG_DEBUG("verbs: %s: ibv_dealloc_pd: %s", d->port.dev, strerror(errno));
    ibv_close_device(d->ctx);
    *d->slot = NULL;
    free(d);
}
