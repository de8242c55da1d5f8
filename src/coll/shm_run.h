/*
 * shm_run.h -- the shared-memory algorithms as the registry runs them:
 * "shm" (shm_node.c: node phases through a communicator's segment, leaders
 * by messages) and "flags" (shm_flags.c: a world on one node, small
 * barrier and allreduce through the node's slots), and the neighbourhood
 * "shm" (neighbor_shm.c: blocks through a one-node communicator's segment).
 */
#ifndef VC_COLL_SHM_RUN_H
#define VC_COLL_SHM_RUN_H

#include "registry.h"

int coll_shm_fits(const coll_query_t *q);
int coll_shm_run(const coll_call_t *c, int *rc);
/* "shm" neighbourhood allgather and alltoall (neighbor_shm.c): a
   communicator on one node, every member's send buffer in its slot */
int coll_nbr_shm_fits(const coll_query_t *q);
int coll_nbr_shm_run(const coll_call_t *c, int *rc);
int coll_flags_fits(const coll_query_t *q);
int coll_flags_run(const coll_call_t *c, int *rc);
int coll_flags_release_run(const coll_call_t *c, int *rc);

/* The flag slots for a persistent barrier or allreduce (exec.c): the slot
 * set of a world's init number index (-1: none; the first NET_SHM_PSETS
 * inits of a world on one node have one each), then per start: publish my
 * contribution for start seq, see whether everyone's is there (*from: the
 * first rank not yet seen, 0 at the start of a wait; on 0 returned, the
 * rank still missing), combine them in rank order. */
int coll_flags_pset(const struct vc_comm *comm, size_t bytes, uint32_t index);
void coll_flags_publish(const struct vc_comm *comm, int first, const void *in, size_t bytes,
                        uint64_t seq);
int coll_flags_ready(const struct vc_comm *comm, int first, uint64_t seq, int *from);
/* ... or wait until it is (prog_wait_step between looks; a dead member
   fails it) */
int coll_flags_await(const struct vc_comm *comm, int first, uint64_t seq);
void coll_flags_combine(const struct vc_comm *comm, int first, uint64_t seq, void *rbuf,
                        size_t count, vc_dtype_t dt, vc_op_t op);

/* The blocking calls' slots (set 0): before my line of call k overwrites
   that of call k-2, every rank must be past k-2 (its k-1 line is there).
   Free after a call that saw every line; else it waits. */
struct coll_comm;
int coll_flags_settle(const struct vc_comm *comm, struct coll_comm *cc, uint64_t k);
/* rank's line of call seq in the blocking set: its data (*cap bytes) and
   its sequence word (published last, with release order) */
unsigned char *coll_flags_line(const struct vc_comm *comm, int rank, uint64_t seq,
                               const uint64_t **seqw, size_t *cap);
/* shm_flags_rooted.c: gather(v) and scatter(v) through the slots; the
   line bytes a call of kind needs (bytes: the block; v forms: any) */
size_t coll_flags_rooted_need(int kind, size_t bytes, int p);
int coll_flags_gather(const coll_call_t *c);
int coll_flags_scatter(const coll_call_t *c);

#endif
