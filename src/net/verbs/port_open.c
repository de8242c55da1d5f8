/*
 * port_open.c -- choose this rank's HCA port (hwloc, or VCOLL_HCA) among the
 * usable ones and open its device (for vdev.c, which does it once for every
 * verbs transport of the rank), and the verbs helpers they share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/config.h"
#include "boot/boot.h"
#include "core/log.h"
#include "topo/topo.h"
#include "net/net.h"
#include "net/verbs/device.h"

int net_vport_pick(const net_env_t *env, const char *tag, net_vport_t *out,
                   char *why, size_t wlen)
{
    net_vport_t *ports = NULL;
    int nports = 0;
    net_vdev_scan(env->cfg->gid_index, &ports, &nports);
    const char **names = calloc((size_t)nports + 1, sizeof *names);
    if (!names) {
        free(ports);
        return VC_ERR_NOMEM;
    }
    int nnames = net_vdev_usable_names(ports, nports, names, nports);
    if (nnames == 0) {
        char rep[1024];
        net_vdev_reject_report(ports, nports, rep, sizeof rep);
        LOG_ERR("%s: no usable verbs device: %s", tag, rep);
        free(names);
        free(ports);
        return VC_ERR_TRANSPORT;
    }

    hwloc_topology_t topo = NULL;
    hwloc_bitmap_t cpuset = NULL;
    if (topo_load(&topo) == VC_SUCCESS)
        cpuset = topo_my_cpuset(topo);
    else
        LOG_WARN("%s: hwloc topology unavailable; spreading ranks over HCAs by local rank",
                 tag);
    topo_hca_choice_t ch;
    int rc = topo_hca_select(topo, cpuset, names, nnames, env->boot->local_rank,
                             env->cfg->hca, &ch);
    hwloc_bitmap_free(cpuset);
    if (topo)
        hwloc_topology_destroy(topo);
    if (rc != VC_SUCCESS) {
        LOG_ERR("%s: %s", tag, ch.why);
        free(names);
        free(ports);
        return rc;
    }

    rc = VC_ERR_TRANSPORT;
    for (int i = 0; i < nports; i++) {
        net_vport_t *v = &ports[i];
        if (strcmp(v->dev, names[ch.dev]) || (ch.port && v->port != ch.port))
            continue;
        if (!v->usable) {
            if (ch.port) {
                LOG_ERR("%s: VCOLL_HCA asks for %s:%d, which is not usable: %s",
                        tag, v->dev, v->port, v->why);
                break;
            }
            continue;
        }
        *out = *v;
        rc = VC_SUCCESS;
        break;
    }
    if (rc != VC_SUCCESS && ch.port)
        LOG_ERR("%s: VCOLL_HCA: %s has no usable port %d", tag, names[ch.dev], ch.port);
    snprintf(why, wlen, "%s", ch.why);
    free(names);
    free(ports);
    return rc;
}

int net_vport_open(const net_vport_t *port, const char *tag, struct ibv_context **out)
{
    int ndev = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    *out = NULL;
    for (int i = 0; list && i < ndev && !*out; i++)
        if (strcmp(ibv_get_device_name(list[i]), port->dev) == 0)
            *out = ibv_open_device(list[i]);
    if (list)
        ibv_free_device_list(list);
    if (!*out) {
        LOG_ERR("%s: cannot open %s: %s", tag, port->dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    /* drained when a completion fails, never waited on */
    if (net_verbs_async_nonblock(*out))
        LOG_WARN("%s: %s: async events cannot be made non-blocking; they will not be "
                 "logged", tag, port->dev);
    return VC_SUCCESS;
}

int net_verbs_grh_from(const void *grh_, const uint8_t gid[16])
{
    static const uint8_t v4map[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const uint8_t *grh = grh_;
    if (!memcmp(gid, v4map, 12) && !memcmp(grh + 32, gid + 12, 4))
        return 1;
    return !memcmp(grh + 8, gid, 16);
}

uint32_t net_verbs_qkey(const net_env_t *env)
{
    /* FNV-1a of the job id; the top bit marks controlled Q_Keys, which an
       unprivileged process may not send with, so keep it clear */
    uint32_t h = 2166136261u;
    for (const char *p = env->boot->jobid; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    h &= 0x7fffffffu;
    return h ? h : 0x76430011u;
}

size_t net_verbs_max_packet(size_t eager_limit)
{
    size_t mp = (eager_limit + 256 + 63) & ~(size_t)63;
    return mp < 4096 ? 4096 : mp > 65536 + 256 ? 65536 + 256 : mp;
}

struct ibv_qp *net_verbs_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    /* Ask for a generous inline size and settle for what the device gives:
       tiny packets then skip the buffer copy and the DMA read. */
    static const uint32_t inline_try[] = { 236, 128, 64, 0 };
    struct ibv_qp_init_attr want = *ia;
    for (size_t i = 0; i < sizeof inline_try / sizeof inline_try[0]; i++) {
        *ia = want;
        ia->cap.max_inline_data = inline_try[i];
        struct ibv_qp *qp = ibv_create_qp(pd, ia);
        if (qp)
            return qp;
    }
    return NULL;
}

void net_vport_ah_attr(const net_vport_t *port, uint16_t dlid, const uint8_t dgid[16],
                       struct ibv_ah_attr *a)
{
    memset(a, 0, sizeof *a);
    a->dlid = dlid;
    a->sl = 0;
    a->port_num = (uint8_t)port->port;
    if (port->gid_index >= 0) {
        /* RoCE (or forced GRH): address by GID; v2 is routed over IP */
        a->is_global = 1;
        memcpy(a->grh.dgid.raw, dgid, 16);
        a->grh.sgid_index = (uint8_t)port->gid_index;
        a->grh.hop_limit = 64;
    }
}

static int ud_ready(struct ibv_qp *qp, int port, uint32_t qkey)
{
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.port_num = (uint8_t)port;
    a.qkey = qkey;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
        return -1;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
        return -1;
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? -1 : 0;
}

struct ibv_qp *net_verbs_ud_qp(struct ibv_pd *pd, struct ibv_cq *cq, int port,
                               uint32_t qkey, int nsend, int nrecv, uint32_t *max_inline)
{
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof ia);
    ia.send_cq = cq;
    ia.recv_cq = cq;
    ia.qp_type = IBV_QPT_UD;
    ia.sq_sig_all = 1;
    ia.cap.max_send_wr = (uint32_t)nsend;
    ia.cap.max_recv_wr = (uint32_t)nrecv;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    struct ibv_qp *qp = net_verbs_create_qp(pd, &ia);
    if (qp && ud_ready(qp, port, qkey)) {
        int e = errno;
        ibv_destroy_qp(qp);
        errno = e;
        return NULL;
    }
    if (qp && max_inline)
        *max_inline = ia.cap.max_inline_data;
    return qp;
}

int net_verbs_post_recv(struct ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
                        uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;
    int e = ibv_post_recv(qp, &wr, &bad);
    if (e)
        errno = e;          /* it returns the error rather than setting errno */
    return e ? VC_ERR_TRANSPORT : VC_SUCCESS;
}

int net_verbs_ud_slots(net_ud_slots_t *u, struct ibv_pd *pd, struct ibv_qp *qp, size_t msg,
                       int nrx, int ntx, uint64_t rx_tag, const char *tag, const char *dev)
{
    /* each slot holds the 40-byte GRH a UD receive starts with, then the
       message; a cache line apart so slots never share one */
    u->stride = (40 + msg + 63) & ~(size_t)63;
    size_t bytes = u->stride * (size_t)(nrx + ntx);
    if (!(u->buf = calloc(1, bytes)))
        return VC_ERR_NOMEM;
    if (!(u->mr = ibv_reg_mr(pd, u->buf, bytes, IBV_ACCESS_LOCAL_WRITE))) {
        LOG_ERR("%s: registering %zu bytes on %s: %s", tag, bytes, dev, strerror(errno));
        return VC_ERR_TRANSPORT;
    }
    for (int i = 0; i < nrx; i++)
        if (net_verbs_post_recv(qp, rx_tag | (uint64_t)i, u->buf + (size_t)i * u->stride,
                                (uint32_t)u->stride, u->mr->lkey))
            return VC_ERR_TRANSPORT;
    return VC_SUCCESS;
}

int net_verbs_ud_send(struct ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
                      uint32_t lkey, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
    struct ibv_send_wr wr, *bad;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = qkey;
    return ibv_post_send(qp, &wr, &bad);
}
