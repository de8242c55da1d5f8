/*
 * device.h -- verbs device/port discovery shared by the RC (and UD)
 * transports and vcoll_info: which ports are usable, their link layer, LID,
 * MTU and the GID index to use.
 */
#ifndef VC_NET_VERBS_DEVICE_H
#define VC_NET_VERBS_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

typedef struct net_vport {
    char dev[IBV_SYSFS_NAME_MAX];
    int port;                    /* 1-based */
    int usable;                  /* ACTIVE and (IB, or RoCE with a GID) */
    char why[160];               /* why not usable, or notes on the GID */
    enum ibv_port_state state;
    int link_layer;              /* IBV_LINK_LAYER_* */
    uint16_t lid;
    enum ibv_mtu active_mtu;
    uint32_t max_msg_sz;
    int gid_tbl_len;
    int gid_index;               /* -1: no GID needed (IB without GRH) */
    int gid_type;                /* IBV_GID_TYPE_* of gid_index */
    union ibv_gid gid;
    int odp;                     /* RC RDMA READ works on on-demand-paging MRs */
} net_vport_t;

/* Scan every device and port. gid_override >= 0 forces that GID index
 * (VCOLL_GID_INDEX). *ports (malloc'ed, caller frees) gets one entry per
 * port seen, usable or not. Returns VC_SUCCESS (possibly with 0 ports). */
int net_vdev_scan(int gid_override, net_vport_t **ports, int *nports);

/* Choose a GID index for an open device's port. Returns VC_SUCCESS and sets
 * *idx (-1 when the link layer is IB and none is needed), or VC_ERR_TRANSPORT
 * with the reason in why. */
int net_vdev_choose_gid(struct ibv_context *ctx, int port,
                        const struct ibv_port_attr *pa, int gid_override,
                        int *idx, union ibv_gid *gid, int *type,
                        char *why, size_t wlen);

/* Sorted, de-duplicated names of devices with at least one usable port.
 * names[] points into ports[]; returns the count. */
int net_vdev_usable_names(const net_vport_t *ports, int nports,
                          const char **names, int max);

/* One line per port listing why none is usable, for error messages. */
void net_vdev_reject_report(const net_vport_t *ports, int nports,
                            char *buf, size_t len);

/* port_open.c: this rank's port, chosen with hwloc (or VCOLL_HCA) among
 * the usable ones; tag ("rc", "ud") prefixes the error messages. why gets
 * the reason for the choice. */
struct net_env;
int net_vport_pick(const struct net_env *env, const char *tag, net_vport_t *out,
                   char *why, size_t wlen);

/* vdev.c: the device every verbs transport of this rank shares (RC, UD,
 * RC's fallback UD, the heartbeat): the chosen port, its device context
 * and one PD; each transport makes its own CQs and QPs on it. get takes a
 * reference to the one in env's slot, or picks the port and opens it
 * there (tag prefixes the error messages); hold takes another reference
 * to one already held; the last put closes it and empties the slot. */
typedef struct net_vdev {
    int refs;
    net_vport_t port;
    char why[256];               /* why this HCA (topo) */
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct net_vdev **slot;      /* the env's, emptied by the last put */
} net_vdev_t;
int net_vdev_get(const struct net_env *env, const char *tag, net_vdev_t **out);
net_vdev_t *net_vdev_hold(net_vdev_t *d);
void net_vdev_put(net_vdev_t *d);
int net_vport_open(const net_vport_t *port, const char *tag, struct ibv_context **out);
/* Address of a peer (its LID and GID) as seen from port: the same for an RC
 * QP's path and a UD address handle. */
void net_vport_ah_attr(const net_vport_t *port, uint16_t dlid, const uint8_t dgid[16],
                       struct ibv_ah_attr *a);
/* ibv_create_qp with the largest inline size the device accepts; ia's other
 * fields are kept, ia->cap reports what was granted. NULL on failure. */
struct ibv_qp *net_verbs_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia);
/* A UD QP on one CQ (one SGE each way, every send signaled: its completion
 * frees its slot), brought through INIT (port, Q_Key), RTR and RTS: the
 * data UD's, the heartbeat's and RC's wire-up. max_inline (may be NULL)
 * gets the inline size granted. NULL with errno set on failure. */
struct ibv_qp *net_verbs_ud_qp(struct ibv_pd *pd, struct ibv_cq *cq, int port,
                               uint32_t qkey, int nsend, int nrecv, uint32_t *max_inline);
/* Post one signaled UD send of len bytes at addr to (ah, qpn, qkey): 0 or
 * an errno value. */
int net_verbs_ud_send(struct ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
                      uint32_t lkey, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey);
/* Post one receive of len bytes at addr: VC_SUCCESS or VC_ERR_TRANSPORT. */
int net_verbs_post_recv(struct ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
                        uint32_t lkey);
/* The buffers of a small UD endpoint (heartbeat, RC wire-up): nrx receive
 * then ntx send slots of a GRH plus msg bytes, one registration, every
 * receive posted with wr_id rx_tag | slot. VC_SUCCESS or an error logged
 * with tag and dev; the caller frees buf and deregisters mr either way. */
typedef struct net_ud_slots {
    char *buf;
    struct ibv_mr *mr;
    size_t stride;
} net_ud_slots_t;
int net_verbs_ud_slots(net_ud_slots_t *u, struct ibv_pd *pd, struct ibv_qp *qp, size_t msg,
                       int nrx, int ntx, uint64_t rx_tag, const char *tag, const char *dev);
/* 1 if the 40-byte GRH slot of a UD receive shows the given source GID.
 * For RoCE v2 over IPv4 the slot holds an IPv4 header in its last 20
 * bytes (source address at byte 32); otherwise a GRH (source GID at 8). */
int net_verbs_grh_from(const void *grh, const uint8_t gid[16]);
/* Largest packet (eager header + VCOLL_EAGER_LIMIT) of the verbs transports;
 * RC and UD use the same so the eager limit means the same on both. */
size_t net_verbs_max_packet(size_t eager_limit);

/* 1 when the device pages RC RDMA READ buffers on demand (ODP): such a
 * registration follows the address space and never goes stale. */
int net_vdev_odp_read(struct ibv_context *ctx);
/* async.c: the device's asynchronous events. net_vport_open makes the event
 * fd non-blocking; drain logs what is queued (QP events name the peer through
 * qp_peer when given) and returns how many there were. */
int net_verbs_async_nonblock(struct ibv_context *ctx);
int net_verbs_async_drain(struct ibv_context *ctx, const char *tag, int me,
                          int (*qp_peer)(const void *arg, uint32_t qpn), const void *arg);

const char *net_vdev_gid_type_str(int type);
const char *net_vdev_link_layer_str(int ll);
int net_vdev_mtu_bytes(enum ibv_mtu m);
/* "::ffff:10.77.0.1" style text */
void net_vdev_gid_str(const union ibv_gid *g, char *buf, size_t len);

#endif
