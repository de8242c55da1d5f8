/*
 * p2p.h -- internal point-to-point API used by the public wrappers and by
 * the collective layer. Lengths are in bytes; ranks are comm ranks.
 * ctx_off selects the traffic class: 0 = user point-to-point, 1 = collective.
 */
#ifndef VC_P2P_H
#define VC_P2P_H

#include <stddef.h>
#include "../core/request.h"
#include "../core/comm.h"

int p2p_isend(const void *buf, size_t bytes, int dest, int tag,
              struct vc_comm *comm, int ctx_off, struct vc_request **out);
/* blocking eager send without a request; NET_AGAIN = use p2p_isend */
int p2p_send_fast(const void *buf, size_t bytes, int dest, int tag, struct vc_comm *comm,
                  int ctx_off);
int p2p_irecv(void *buf, size_t bytes, int source, int tag,
              struct vc_comm *comm, int ctx_off, struct vc_request **out);

/* Status (source, tag, full length) of the message a receive for
 * (source, tag) on comm would get, if it has arrived: *flag = 1. Drives
 * progress once. Wildcards allowed. */
int p2p_iprobe(int source, int tag, struct vc_comm *comm, int ctx_off, int *flag,
               vc_status_t *status);
/* Block until such a message has arrived. Both fail with
 * VC_ERR_PEER_FAILED when the receive they stand for would: its peer (for
 * VC_ANY_SOURCE, a member of comm) is dead and nothing matching is queued. */
int p2p_probe(int source, int tag, struct vc_comm *comm, int ctx_off, vc_status_t *status);

/* Block until r is done (polls progress, backs off under oversubscription,
 * checks peer liveness). Returns r->status.error or VC_ERR_PEER_FAILED. Does
 * not free r. */
int p2p_wait(struct vc_request *r);
/* Block until all n are done; returns the first error. */
int p2p_waitall(int n, struct vc_request **rs);
/* The error of a failed transport r depends on (its peer's; for a wildcard
 * receive or a collective, that of any rank of its communicator), or
 * VC_SUCCESS. Waits fail with it instead of waiting for what the transport
 * can no longer deliver. */
int req_net_error(const struct vc_request *r);
/* Block until one of rs[0..n) (NULL entries skipped) is done and return its
 * index, or -1 when all are NULL. A request whose peer died is failed with
 * VC_ERR_PEER_FAILED (as p2p_wait does) and returned. Frees nothing. */
int p2p_waitany(int n, struct vc_request *const *rs);

/* Drive every transport once, retry queued sends, advance active
 * non-blocking collectives. Returns number of events (>= 0). */
int vc_progress(void);

/* Fail r (done, VC_ERR_PEER_FAILED, taken out of the queues) if a peer it
 * involves is known dead: its peer, or for ANY_SOURCE any member of its
 * communicator. Returns 1 if r failed now. Not for collective requests
 * (their schedule fails through their own messages). */
int p2p_fail_if_dead(struct vc_request *r);
/* core (progress.c): vc_test found r unfinished: fail it if its peer is
 * known dead, and now and then probe the peers it waits on. */
void vc_test_idle(struct vc_request *r);
/* the same for the unfinished, non-NULL entries of rs (testany, testall) */
void vc_test_idle_n(int n, struct vc_request *const *rs);
/* core (progress.c): is world rank w dead? Probes it (pid on this node,
 * heartbeats on another) and records a death; 1 = dead. */
int vc_peer_probe(int w);

/* Called by blocking loops that found nothing to do: spins first, then yields. */
void vc_backoff(unsigned *idle_polls);

/* An idle step of a wait on something other than a request (shared-memory
 * flags, a communicator's segment): progress, back off, probe this node's
 * peers. VC_ERR_PEER_FAILED if a member of comm died (failures are scoped:
 * a death outside comm does not end the wait). */
int vc_wait_step(const struct vc_comm *comm, unsigned *idle, double *next_check);
/* 1 if some member of comm is known dead */
int p2p_comm_has_dead(const struct vc_comm *comm);
/* core (progress.c): one idle step of a wait on r: back off, fail r if a
 * peer it involves is dead, now and then probe those peers. */
void vc_idle_step(unsigned *idle, double *next_check, struct vc_request *r);

/* Non-blocking collectives register here so they advance while the user
 * waits on anything else (no deadlock when p2p and collectives overlap). */
void vc_coll_activate(struct vc_request *r);

/* Module lifecycle (called by vc_init / vc_finalize) */
int p2p_init(void);
void p2p_fini(void);

#endif
