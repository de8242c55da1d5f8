/*
 * usage.c -- what the verbs transports hold right now (QPs, registered
 * bytes, peers connected), for the scaling benchmark (src/tools/vcoll_scale)
 * and the on-demand tests. Scans the peer tables: a measurement, not a
 * data-path call.
 */
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "net/verbs/rc.h"
#include "net/verbs/ud.h"
#include "net/verbs/hb.h"

static size_t mr_len(const struct ibv_mr *mr)
{
    return mr ? mr->length : 0;
}

void net_usage(const net_t *rc, const net_t *ud, const net_hb_t *hb, net_usage_t *u)
{
    memset(u, 0, sizeof *u);
    const rc_net_t *r = (const rc_net_t *)rc;
    if (r) {
        u->rc_qps = r->nqp;
        u->qps += r->nqp + (r->hs_qp != NULL);
        u->reg_bytes += r->rx_bytes + mr_len(r->tx_mr) + mr_len(r->hs_mr);
        u->rx_bytes += r->rx_bytes;
        for (int p = 0; p < r->size; p++)
            u->rc_up += r->peer[p].state == RC_S_UP;
        u->rc_to_ud = r->nfb;
    }
    const ud_net_t *uds[] = {(const ud_net_t *)ud, r ? r->fb : NULL};
    for (size_t i = 0; i < sizeof uds / sizeof uds[0]; i++) {
        const ud_net_t *d = uds[i];
        if (!d)
            continue;
        u->qps += d->qp != NULL;
        u->reg_bytes += mr_len(d->rx_mr) + mr_len(d->tx_mr);
        u->rx_bytes += mr_len(d->rx_mr);
        for (int p = 0; p < d->size; p++)
            u->ud_peers += d->peer[p].ah != NULL;
    }
    const struct net_hb *h = hb;
    if (h) {
        u->qps += h->qp != NULL;
        u->reg_bytes += mr_len(h->mr);
    }
}
