/*
 * plan.c -- which transport serves which peers, decided from the job-wide
 * node map and the configuration only (pure), so every rank that shares
 * them decides the same, and vcoll_info can show the decision without
 * opening anything. The agreement check (boot/agree.c) proves the inputs
 * are shared.
 */
#include <stdio.h>
#include "vcoll.h"
#include "core/config.h"
#include "boot/boot.h"
#include "core/log.h"
#include "net/net.h"

const char *const net_kind_names[] = {"none", "shm", "rc", "ud", NULL};

int net_plan(const vc_config_t *cfg, const boot_info_t *b, net_plan_t *p,
             char *err, size_t errlen)
{
    if (!cfg || !b || !p)
        return VC_ERR_ARG;
    p->local = p->remote = NET_KIND_NONE;
    p->max_remote = boot_max_remote_peers(b);
    p->why[0] = 0;
    int others_here = b->local_size > 1, elsewhere = b->nnodes > 1;
    switch (cfg->net) {
    case CFG_NET_AUTO:
        p->local = others_here ? NET_KIND_SHM : NET_KIND_NONE;
        if (!elsewhere)
            break;
        /* max_remote is a job-wide number, so every rank switches alike */
        if (cfg->rc_max_peers > 0 && p->max_remote > cfg->rc_max_peers) {
            p->remote = NET_KIND_UD;
            snprintf(p->why, sizeof p->why, "a rank has %d remote peers, more than "
                     "VCOLL_RC_MAX_PEERS=%d", p->max_remote, cfg->rc_max_peers);
        } else {
            p->remote = NET_KIND_RC;
            snprintf(p->why, sizeof p->why, "at most %d remote peers per rank, "
                     "VCOLL_RC_MAX_PEERS=%d", p->max_remote, cfg->rc_max_peers);
        }
        break;
    case CFG_NET_SHM:
        if (elsewhere) {
            snprintf(err, errlen, "VCOLL_NET=shm, but the job spans %d nodes and %d of %d "
                     "ranks are on other nodes than this one: shared memory cannot reach "
                     "them; use VCOLL_NET=auto, rc or ud", b->nnodes,
                     b->size - b->local_size, b->size);
            return VC_ERR_TRANSPORT;
        }
        p->local = others_here ? NET_KIND_SHM : NET_KIND_NONE;
        break;
    case CFG_NET_RC:
        /* forced: every peer over RC, so every rank needs size - 1 QPs */
        if (cfg->rc_max_peers > 0 && b->size - 1 > cfg->rc_max_peers) {
            snprintf(err, errlen, "VCOLL_NET=rc needs an RC connection to each of the "
                     "%d other ranks, more than VCOLL_RC_MAX_PEERS=%d; use VCOLL_NET=auto "
                     "(switches to UD) or ud, or raise VCOLL_RC_MAX_PEERS",
                     b->size - 1, cfg->rc_max_peers);
            return VC_ERR_UNSUPPORTED;
        }
        p->local = others_here ? NET_KIND_RC : NET_KIND_NONE;
        p->remote = elsewhere ? NET_KIND_RC : NET_KIND_NONE;
        snprintf(p->why, sizeof p->why, "VCOLL_NET=rc");
        break;
    case CFG_NET_UD:
        p->local = others_here ? NET_KIND_UD : NET_KIND_NONE;
        p->remote = elsewhere ? NET_KIND_UD : NET_KIND_NONE;
        snprintf(p->why, sizeof p->why, "VCOLL_NET=ud");
        break;
    default:
        return VC_ERR_ARG;
    }
    return VC_SUCCESS;
}

void net_peer_missing(const net_env_t *env, int peer, const char *what)
{
    char msg[320];
    int rc = boot_agree_check(env->boot, peer, msg, sizeof msg);
    if (rc == VC_ERR_ARG) { /* the real cause: the job is not configured alike */
        LOG_ERR("%s", msg);
        return;             /* the transport fails the peer, naming it */
    }
    LOG_ERR("%s: rank %d published no %s endpoint although it shares this job's "
            "settings (%s)", what, peer, what,
            rc == VC_SUCCESS ? "it may have failed to open the transport" : msg);
}
