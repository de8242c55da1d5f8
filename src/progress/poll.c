/*
 * poll.c -- the progress loop: every registered transport once, then the
 * pollers of the layers above (p2p's backlog and its non-blocking
 * collectives).
 */
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "../core/error.h"
#include "../core/log.h"
#include "progress.h"

int prog_init(prog_t *p, int rank, int size, const struct boot_info *boot, double peer_check,
              int spin)
{
    memset(p, 0, sizeof *p);
    p->rank = rank;
    p->size = size;
    p->boot = boot;
    p->peer_check = peer_check;
    p->spin = spin;
    p->dead_peer = -1;
    p->dead = calloc((size_t)size, 1);
    p->net_of = calloc((size_t)size, sizeof *p->net_of);
    if (!p->dead || !p->net_of) {
        prog_fini(p);
        return VC_ERR_NOMEM;
    }
    return VC_SUCCESS;
}

void prog_fini(prog_t *p)
{
    free(p->dead);
    free(p->net_of);
    free(p->near);
    p->dead = NULL;
    p->net_of = NULL;
    p->near = NULL;
    p->nnets = p->npollers = 0;
}

int prog_add_net(prog_t *p, net_t *n)
{
    if (p->nnets == PROG_MAX_NETS)
        return VC_ERR_INTERNAL;
    p->net_err[p->nnets] = 0;
    p->nets[p->nnets++] = n;
    return VC_SUCCESS;
}

int prog_add_poller(prog_t *p, int (*poll)(void *arg), void *arg)
{
    if (p->npollers == PROG_MAX_POLLERS)
        return VC_ERR_INTERNAL;
    p->pollers[p->npollers].poll = poll;
    p->pollers[p->npollers++].arg = arg;
    return VC_SUCCESS;
}

/* A transport whose progress failed (a CQ that cannot be polled) will not
 * deliver anything again: remember its error, say so once, stop polling. */
static void net_failed(prog_t *p, int i, int err)
{
    if (err <= VC_SUCCESS || err > VC_ERR_INTERNAL)
        err = VC_ERR_TRANSPORT;     /* not a VC_ERR_* code: still a failure */
    p->net_err[i] = err;
    p->failed = 1;
    LOG_ERR("%s transport failed while polling: %s; the operations that use it fail",
            p->nets[i]->name, core_strerror(err));
}

int prog_poll(prog_t *p)
{
    int events = 0;
    for (int i = 0; i < p->nnets; i++) {
        if (p->net_err[i])
            continue;
        net_t *n = p->nets[i];
        int e = n->ops->progress(n);
        if (e > 0)
            events += e;
        else if (e < 0)
            net_failed(p, i, -e);
    }
    for (int i = 0; i < p->npollers; i++)
        events += p->pollers[i].poll(p->pollers[i].arg);
    return events;
}

int prog_net_error(const prog_t *p, const net_t *n)
{
    for (int i = 0; n && i < p->nnets; i++)
        if (p->nets[i] == n)
            return p->net_err[i];
    return VC_SUCCESS;
}
