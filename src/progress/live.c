/*
 * live.c -- peer liveness and the dead-peer table. Failures are scoped: a
 * dead rank fails what involves it (the waits that ask prog_comm_has_dead
 * or look at its entry), not every wait of the process.
 */
#include <stdio.h>
#include "vcoll.h"
#include "../core/comm.h"
#include "../core/log.h"
#include "../boot/boot.h"
#include "progress.h"

void prog_peer_failed(prog_t *p, int peer, const char *why)
{
    if (peer < 0 || peer >= p->size || p->dead[peer])
        return;
    p->dead[peer] = 1;
    p->ndead++;
    if (p->dead_peer < 0) {
        p->dead_peer = peer;
        snprintf(p->dead_why, sizeof p->dead_why, "%s", why);
    }
    LOG_ERR("rank %d failed: %s", peer, why);
    /* whatever made us give up, the peer must learn it: it may be alive and
       waiting for a message we will now never send */
    if (p->live.broken)
        p->live.broken(p->live.h, peer);
}

int prog_comm_has_dead(const prog_t *p, const struct vc_comm *comm)
{
    if (!p->ndead)
        return 0;
    for (int i = 0; i < comm->size; i++)
        if (p->dead[comm_world_rank(comm, i)])
            return 1;
    return 0;
}

static const char gone[] = "process is gone (killed or exited without vc_finalize)";

/* Probe the same-node peers by pid (cheap; ANY_SOURCE receives and
   collectives could be waiting on any of them). */
void prog_probe_local(prog_t *p)
{
    const boot_info_t *b = p->boot;
    for (int i = 0; i < b->local_size; i++) {
        int w = b->local_peers[i];
        net_t *n = p->net_of[w];
        if (w != p->rank && !p->dead[w] && n->ops->check_peer && n->ops->check_peer(n, w))
            prog_peer_failed(p, w, gone);
    }
}

int prog_peer_probe(prog_t *p, int w)
{
    if (w < 0 || w >= p->size || w == p->rank)
        return 0;
    if (p->dead[w])
        return 1;
    net_t *n = p->net_of[w];
    if (n->ops->check_peer && n->ops->check_peer(n, w)) {
        prog_peer_failed(p, w, gone);
        return 1;
    }
    const boot_info_t *b = p->boot;
    if (p->live.watch && (b->node_of[w] != b->node_id || n != p->node_net)) {
        /* another node: only its heartbeats can tell. A same-node peer over
           verbs is watched too: it is alive (pid probe), but its end of the
           connection may have failed, and only its DOWN tells us so. */
        char why[200];
        if (p->live.watch(p->live.h, w, why, sizeof why)) {
            prog_peer_failed(p, w, why);
            return 1;
        }
    }
    return 0;
}

int prog_wait_step(prog_t *p, const struct vc_comm *comm, unsigned *idle, double *next_check,
                   int peer)
{
    int spin = peer == PROG_YIELD_AT_ONCE ? 0 : prog_spin_for(p, peer);
    if (prog_comm_has_dead(p, comm))
        return VC_ERR_PEER_FAILED;
    /* progress now and then, so p2p backlogs and non-blocking collectives
       still move while this wait watches memory */
    if ((*idle & 15) == 15 && prog_poll(p) > 0)
        return VC_SUCCESS;
    prog_backoff_spin(p, idle, spin);
    if (*idle < (unsigned)spin || (*idle & 63))
        return VC_SUCCESS;
    double t = prog_now();
    if (*next_check == 0 || t >= *next_check) {
        if (*next_check)
            prog_probe_local(p);
        *next_check = t + p->peer_check;
    }
    return prog_comm_has_dead(p, comm) ? VC_ERR_PEER_FAILED : VC_SUCCESS;
}
