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
/* blocking eager send without a request; NET_AGAIN = use p2p_isend.
   flags: P2P_SEND_EAGER, eager up to the configured limit even where the
   transport would rather have the message pulled (shm past its pull size:
   the caller knows the receiver is the busier side), and up to the
   transport's fan-in packet where it has one (net_t.fanin_packet: shm
   with more ranks than cores) */
enum { P2P_SEND_EAGER = 1 };
int p2p_send_fast(const void *buf, size_t bytes, int dest, int tag, struct vc_comm *comm,
                  int ctx_off, int flags);
/* flags: P2P_RECV_HOT, this rank reads the data as soon as it lands (a
   fold): all of it is copied by this rank, none by the sender, whose
   copy would leave the lines in the sender's cache */
enum { P2P_RECV_HOT = 1 };
int p2p_irecv(void *buf, size_t bytes, int source, int tag,
              struct vc_comm *comm, int ctx_off, int flags, struct vc_request **out);

/* Status (source, tag, full length) of the message a receive for
 * (source, tag) on comm would get, if it has arrived: *flag = 1. Drives
 * progress once. Wildcards allowed. */
int p2p_iprobe(int source, int tag, struct vc_comm *comm, int ctx_off, int *flag,
               vc_status_t *status);
/* Block until such a message has arrived. Both fail with
 * VC_ERR_PEER_FAILED when the receive they stand for would: its peer (for
 * VC_ANY_SOURCE, a member of comm) is dead and nothing matching is queued. */
int p2p_probe(int source, int tag, struct vc_comm *comm, int ctx_off, vc_status_t *status);

struct p2p_state;
/* Block until r is done (polls progress, backs off under oversubscription,
 * checks peer liveness). Returns r->status.error or VC_ERR_PEER_FAILED. Does
 * not free r. */
int p2p_wait(struct p2p_state *st, struct vc_request *r);
/* Block until all n are done; returns the first error. */
int p2p_waitall(struct p2p_state *st, int n, struct vc_request **rs);
/* The error of a failed transport r depends on (its peer's; for a wildcard
 * receive or a collective, that of any rank of its communicator), or
 * VC_SUCCESS. Waits fail with it instead of waiting for what the transport
 * can no longer deliver. */
int req_net_error(const struct p2p_state *st, const struct vc_request *r);
/* Block until one of rs[0..n) (NULL and inactive persistent entries
 * skipped) is done and return its index, or -1 when all are skipped. A request whose peer died is failed with
 * VC_ERR_PEER_FAILED (as p2p_wait does) and returned. Frees nothing. */
int p2p_waitany(struct p2p_state *st, int n, struct vc_request *const *rs);

/* Drive every transport once, retry queued sends, advance active
 * non-blocking collectives (the progress layer's loop). Events (>= 0). */
int p2p_progress(struct p2p_state *st);
/* the progress layer p2p runs on: the waits of the layers above that are
 * not on a request (prog_wait_step) */
struct prog *p2p_prog(struct p2p_state *st);

/* Fail r (done, VC_ERR_PEER_FAILED, taken out of the queues) if a peer it
 * involves is known dead: its peer, or for ANY_SOURCE any member of its
 * communicator. Returns 1 if r failed now. Not for collective requests
 * (their schedule fails through their own messages). */
int p2p_fail_if_dead(struct p2p_state *st, struct vc_request *r);
/* A test found r unfinished: fail it if its peer is known dead, and now
 * and then probe the peers it waits on. */
void p2p_test_idle(struct p2p_state *st, struct vc_request *r);
/* the same for the unfinished, non-NULL entries of rs (testany, testall) */
void p2p_test_idle_n(struct p2p_state *st, int n, struct vc_request *const *rs);
/* One idle step of a wait on r: back off (spin empty polls before
 * yielding: prog_spin_for), fail r if a peer it involves is dead, now and
 * then probe those peers. */
void p2p_idle_step(struct p2p_state *st, unsigned *idle, double *next_check,
                   struct vc_request *r, int spin);
/* drop queued packets/receives that belong to r (peer failed) */
void p2p_cancel(struct p2p_state *st, struct vc_request *r);

/* Requests: from the pool p2p was given (the context's), and the live one
 * behind a wire handle. */
struct vc_request *p2p_req_alloc(struct p2p_state *st, int kind);

/* Non-blocking collectives register here so they advance while the user
 * waits on anything else (no deadlock when p2p and collectives overlap). */
void p2p_coll_activate(struct p2p_state *st, struct vc_request *r);

/* Module lifecycle (called by the lifecycle): the state on the progress
 * layer p, with the request pool reqs and VCOLL_EAGER_LIMIT; registers its
 * poller with p. The transports' upcalls take the state as their arg. */
struct prog;
int p2p_init(struct prog *p, req_pool_t *reqs, size_t eager_limit, struct p2p_state **out);
void p2p_fini(struct p2p_state *st);

#endif
