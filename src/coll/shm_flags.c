/*
 * shm_flags.c -- node-aware variant of small blocking barrier and allreduce
 * for a world that lives on one node: no messages at all. Every rank
 * publishes (sequence number, data) in its own cache line of the node's
 * shared segment and reads the others' lines; an allreduce then combines
 * all contributions in rank order on every rank, so every rank computes the
 * same expression and gets identical bits.
 *
 * Why it is safe to reuse a rank's two slots alternately: rank A writes
 * call k+2 into the slot of call k only after finishing call k+1, which
 * needs every rank's k+1 line, which each rank writes only after it has
 * finished reading (and reducing) everything of call k.
 *
 * Kept because it measured faster (vcoll_osu_*, 3 runs each, 2-core box):
 *   np=2: barrier 0.30-0.32 us (linear 0.52-0.55); allreduce 8 B 0.33-0.36 us
 *         (recursive doubling 0.36-0.39)
 *   np=8 on 2 cores: barrier 5.9-6.5 us (linear 9.3-12.0); allreduce 8 B
 *         5.0-6.2 us (linear 8.6-11.9, recursive doubling 13.5-14.1)
 * It is the algorithm "flags" of barrier and allreduce (registry.c).
 */
#include <string.h>
#include "coll.h"
#include "comm_priv.h"
#include "shm_run.h"
#include "progress/progress.h"
#include "boot/boot.h"
#include "core/comm.h"
#include "net/net.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"

typedef struct shm_slot {
    uint64_t seq;
    uint8_t data[NET_SHM_SLOT_BYTES - 8];
} shm_slot_t;

/* The slots are per world rank, and only one communicator's calls may
   count through them: the world's (context id 0, no other has it). */
int coll_shm_eligible(const struct vc_comm *comm, size_t bytes)
{
    const coll_state_t *cs = comm->coll;
    return comm->ctx == 0 && cs->node_net && cs->size > 1 &&
           cs->boot->local_size == cs->size && bytes <= sizeof(((shm_slot_t *)0)->data);
}

/* Publish my contribution for call `seq` and wait for everyone's. */
static int exchange(const struct vc_comm *comm, const void *in, size_t bytes, uint64_t seq,
                    shm_slot_t **all)
{
    const coll_state_t *cs = comm->coll;
    shm_slot_t *slots = cs->node_net->ops->node_slots(cs->node_net);
    int me = cs->rank, n = cs->size, par = (int)(seq & 1);
    shm_slot_t *mine = &slots[me * NET_SHM_SLOTS + par];
    if (bytes)
        memcpy(mine->data, in, bytes);
    __atomic_store_n(&mine->seq, seq, __ATOMIC_RELEASE);
    for (int r = 0; r < n; r++) {
        shm_slot_t *s = &slots[r * NET_SHM_SLOTS + par];
        unsigned idle = 0;
        double next_check = 0;
        while (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) < seq) {
            int rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check);
            if (rc)
                return rc;
        }
    }
    *all = &slots[par];
    return VC_SUCCESS;
}

static int flags_barrier(const struct vc_comm *comm, uint64_t *seq)
{
    shm_slot_t *all;
    return exchange(comm, NULL, 0, ++*seq, &all);
}

static int flags_allreduce(const struct vc_comm *comm, const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                           vc_op_t op, uint64_t *seq)
{
    size_t bytes = count * dtype_size(dt);
    shm_slot_t *all;
    int rc = exchange(comm, sbuf == VC_IN_PLACE ? rbuf : sbuf, bytes, ++*seq, &all);
    if (rc || !bytes)
        return rc;
    /* rank 0's data op rank 1's op ... : the same tree on every rank */
    /* aligned as the widest element (16-byte pairs, doubles): the kernels
       access it as typed elements */
    uint8_t acc[sizeof all->data] __attribute__((aligned(16)));
    memcpy(acc, all[0].data, bytes);
    for (int r = 1; r < comm->size; r++)
        dtype_reduce3(acc, acc, all[r * NET_SHM_SLOTS].data, count, dt, op);
    memcpy(rbuf, acc, bytes);
    return VC_SUCCESS;
}

/* the caller worked out flags_ok (coll_shm_eligible); the slots reduce
   with the built-in kernels only */
int coll_flags_fits(const coll_query_t *q)
{
    return q->flags_ok && !q->user_op;
}

int coll_flags_run(const coll_call_t *c, int *rc)
{
    coll_comm_t *cc = coll_priv(c->comm);
    if (!cc)
        return (*rc = VC_ERR_NOMEM), 1;
    if (c->kind == COLL_BARRIER)
        *rc = flags_barrier(c->comm, &cc->shm_seq);
    else
        *rc = flags_allreduce(c->comm, c->sbuf, c->rbuf, c->count, c->dt, c->op, &cc->shm_seq);
    return 1;
}
