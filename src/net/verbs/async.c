/*
 * async.c -- the device's asynchronous events (QP fatal, port down, device
 * fatal...). They are the only report of some failures: a QP that a
 * responder-side error or a device reset moved to error shows nothing on
 * its own CQ but flushes. Nobody blocks on the event fd: net_vport_open
 * makes it non-blocking, and the transports drain it when a completion
 * fails (the moment a user wants the cause in the log) -- never on the
 * hot path. The device is shared (vdev.c), so one queue holds the events
 * of every verbs transport's QPs, and whichever drains it logs them all.
 */
#include <fcntl.h>
#include <stdio.h>
#include <infiniband/verbs.h>

#include "vcoll.h"
#include "core/log.h"
#include "net/verbs/device.h"

int net_verbs_async_nonblock(struct ibv_context *ctx)
{
    int fl = fcntl(ctx->async_fd, F_GETFL);
    if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return VC_ERR_TRANSPORT;
    return VC_SUCCESS;
}

int net_verbs_async_drain(struct ibv_context *ctx, const char *tag, int me,
                          int (*qp_peer)(const void *arg, uint32_t qpn), const void *arg)
{
    struct ibv_async_event ev;
    int n = 0;
    int fl = fcntl(ctx->async_fd, F_GETFL);
    if (fl < 0 || !(fl & O_NONBLOCK))
        return 0;       /* reading would block the caller: better no log */
    while (n < 64 && ibv_get_async_event(ctx, &ev) == 0) {
        char what[96] = "";
        switch (ev.event_type) {
        case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
        case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
        case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED: {
            uint32_t qpn = ev.element.qp->qp_num;
            int peer = qp_peer ? qp_peer(arg, qpn) : -1;
            if (peer >= 0)
                snprintf(what, sizeof what, " on QP 0x%x (to rank %d)", qpn, peer);
            else
                snprintf(what, sizeof what, " on QP 0x%x", qpn);
            break;
        }
        case IBV_EVENT_PORT_ACTIVE: case IBV_EVENT_PORT_ERR:
        case IBV_EVENT_LID_CHANGE: case IBV_EVENT_GID_CHANGE:
            snprintf(what, sizeof what, " on port %d", ev.element.port_num);
            break;
        default:
            break;
        }
        /* COMM_EST and PORT_ACTIVE are good news; the rest explain a failure */
        int benign = ev.event_type == IBV_EVENT_COMM_EST ||
                     ev.event_type == IBV_EVENT_PORT_ACTIVE ||
                     ev.event_type == IBV_EVENT_SQ_DRAINED;
        core_log(benign ? CFG_LOG_DEBUG : CFG_LOG_ERROR, "%s: rank %d: device %s event: %s%s",
               tag, me, ibv_get_device_name(ctx->device),
               ibv_event_type_str(ev.event_type), what);
        ibv_ack_async_event(&ev);
        n++;
    }
    return n;
}
