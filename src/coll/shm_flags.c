/*
 * shm_flags.c -- node-aware variant of small blocking barrier, allreduce,
 * alltoall and allgather(v) for a world that lives on one node (and the
 * slots the rooted ones of shm_flags_rooted.c use): no messages. Every rank
 * publishes (sequence number, data) in its own cache line of the node's
 * shared segment and reads the others' lines; an allreduce then combines
 * all contributions in rank order on every rank, so every rank computes the
 * same expression and gets identical bits.
 *
 * A rank's blocking calls go round a ring of D = NET_SHM_BLK_DEPTH slots.
 * Why reuse is safe: rank A writes call k+D into the slot of call k only
 * once it knows every rank has started call k+1 (its k+1 line is there, or
 * its message of call k+1 came), and each rank starts k+1 only after it
 * has finished reading (and reducing) everything of call k. The symmetric
 * calls see every line of a call anyway; after a rooted one
 * (shm_flags_rooted.c), where a rank may read one line or none, the next
 * call checks first (coll_flags_settle). Why a ring and not two slots: the
 * root of back-to-back rooted calls (a bcast loop) may run D - 1 calls
 * ahead of its slowest reader instead of one, as a message root runs
 * ahead on eager sends; with two it waited for every reader on every
 * other call, and a reader off its core costs a context switch each time.
 *
 * Kept because it measured faster (vcoll_osu_*, 3 runs each, 2-core box):
 *   np=2: barrier 0.30-0.32 us (linear 0.52-0.55); allreduce 8 B 0.33-0.36 us
 *         (recursive doubling 0.36-0.39)
 *   np=8 on 2 cores: barrier 5.9-6.5 us (linear 9.3-12.0); allreduce 8 B
 *         5.0-6.2 us (linear 8.6-11.9, recursive doubling 13.5-14.1)
 * It is the algorithm "flags" of barrier and allreduce (registry.c).
 */
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "comm_priv.h"
#include "shm_run.h"
#include "shm_slots.h"
#include "progress/progress.h"
#include "boot/boot.h"
#include "core/comm.h"
#include "net/net.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"

/* The slots are per world rank, and only one communicator's calls may
   count through them: the world's (context id 0, no other has it). */
int coll_shm_eligible(const struct vc_comm *comm, size_t bytes)
{
    const coll_state_t *cs = comm->coll;
    return comm->ctx == 0 && cs->node_net && cs->size > 1 &&
           cs->boot->local_size == cs->size && bytes <= sizeof(((shm_slot_t *)0)->data);
}

/* the node's slots, the first time (shm_slots.h: every call after loads
   the pointer) */
__attribute__((noinline)) shm_slot_t *coll_flags_slots_lookup(coll_state_t *cs)
{
    void *b = cs->node_net->ops->node_slots(cs->node_net);
    __atomic_store_n(&cs->flag_slots, b, __ATOMIC_RELAXED);
    return b;
}

void coll_flags_publish(const struct vc_comm *comm, int first, const void *in, size_t bytes,
                        uint64_t seq)
{
    shm_slot_t *mine = coll_slot_of(coll_flags_slots(comm), first, comm->coll->rank, seq);
    if (bytes) {    /* (an empty line, a barrier's or a root's: the flag alone) */
        coll_line_w_t w = {.data = mine->data};
        coll_line_put(&w, 0, in, bytes);
        coll_line_end(&w);
    }
    __atomic_store_n(&mine->seq, seq, __ATOMIC_RELEASE);
}

/* ranks before *from have published already: a wait resumes where it
   stopped instead of scanning every rank again on each poll */
int coll_flags_ready(const struct vc_comm *comm, int first, uint64_t seq, int *from)
{
    shm_slot_t *base = coll_flags_slots(comm);
    for (; *from < comm->coll->size; (*from)++) {
        const uint64_t *w = &coll_slot_of(base, first, *from, seq)->seq;
        if (__atomic_load_n(w, __ATOMIC_ACQUIRE) < seq)
            return 0;
    }
    return 1;
}

/* rank 0's data op rank 1's op ... : the same tree on every rank; the
   elements from byte `at` of each line (0 but for reduce_scatter's block) */
void coll_flags_combine(const struct vc_comm *comm, int first, uint64_t seq, size_t at,
                        void *rbuf, size_t count, vc_dtype_t dt, vc_op_t op)
{
    size_t bytes = count * dtype_size(dt);
    /* aligned as the widest element (16-byte pairs, doubles): the kernels
       access it as typed elements */
    uint8_t acc[sizeof(((shm_slot_t *)0)->data)] __attribute__((aligned(16)));
    if (!bytes)
        return;
    shm_slot_t *base = coll_flags_slots(comm);
    core_copy(acc, coll_slot_of(base, first, 0, seq)->data + at, bytes);
    for (int r = 1; r < comm->size; r++)
        dtype_reduce3(acc, acc, coll_slot_of(base, first, r, seq)->data + at, count, dt, op);
    core_copy(rbuf, acc, bytes);
}

/* Wait until every rank's line of call `seq` in slot set `first` is there:
   the blocking calls' wait, and a blocking wait on a persistent start. */
int coll_flags_await(const struct vc_comm *comm, int first, uint64_t seq)
{
    unsigned idle = 0;
    double next_check = 0;
    int from = 0;
    while (!coll_flags_ready(comm, first, seq, &from)) {
        /* names no rank: the flag barrier and allreduce measured faster
           keeping the spin even for a rank on my core (np 4 on 2 cores,
           pinned, 8 B: barrier 3.98-4.33 us yielding at once vs
           3.47-3.89 spinning, allreduce 4.51-5.06 vs 3.72-4.26) -- every
           rank both waits and is waited for here, and a yield hands the
           core to a rank that has often published already */
        int rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check, -1);
        if (rc)
            return rc;
    }
    return VC_SUCCESS;
}

/* Call k reuses the slot of call k - D: every rank must have started call
   k - D + 1. Waiting for exactly that (not for k - 1) is what lets a root
   run ahead. One look at call k - 1 first, without waiting: where every
   rank is there (a reader behind its root: the root's line it read last
   call is still in its cache) the next D - 2 calls need no look at all;
   settling for k - D + 1 only had each call re-read lines the others were
   writing (np 2 bcast loop: 2/3 of both ranks' time in these loads). */
int coll_flags_settle_look(const struct vc_comm *comm, coll_comm_t *cc, uint64_t k)
{
    const uint64_t lag = NET_SHM_BLK_DEPTH - 1;
    int from = 0;
    if (coll_flags_ready(comm, 0, k - 1, &from)) {
        cc->flags_seen = k - 1;
        return VC_SUCCESS;
    }
    int rc = coll_flags_await(comm, 0, k - lag);
    if (!rc)
        cc->flags_seen = k - lag;
    return rc;
}

/* Publish my contribution for call `seq` and wait for everyone's. */
int coll_flags_exchange(const struct vc_comm *comm, coll_comm_t *cc, const void *in,
                        size_t bytes, uint64_t seq)
{
    int rc = coll_flags_settle(comm, cc, seq);
    if (rc)
        return rc;
    coll_flags_publish(comm, 0, in, bytes, seq);
    if (!(rc = coll_flags_await(comm, 0, seq)))
        cc->flags_seen = seq;
    return rc;
}

static int flags_barrier(const struct vc_comm *comm, coll_comm_t *cc)
{
    return coll_flags_exchange(comm, cc, NULL, 0, ++cc->shm_seq);
}

static int flags_allreduce(const struct vc_comm *comm, coll_comm_t *cc, const void *sbuf,
                           void *rbuf, size_t count, vc_dtype_t dt, vc_op_t op)
{
    size_t bytes = count * dtype_size(dt);
    int rc = coll_flags_exchange(comm, cc, sbuf == VC_IN_PLACE ? rbuf : sbuf, bytes,
                                 ++cc->shm_seq);
    if (!rc)
        coll_flags_combine(comm, 0, cc->shm_seq, 0, rbuf, count, dt, op);
    return rc;
}

/* Every rank publishes its whole send buffer (p blocks) and copies block
   `me` out of every rank's line: one publish and one wait for the p^2
   exchanges (in place: the send blocks are in rbuf, published before rbuf
   is overwritten). */
static int flags_alltoall(const struct vc_comm *comm, coll_comm_t *cc, const void *sbuf,
                          void *rbuf, size_t count, vc_dtype_t dt)
{
    size_t bytes = count * dtype_size(dt);
    int p = comm->coll->size, me = comm->coll->rank;
    uint64_t k = ++cc->shm_seq;
    int rc = coll_flags_exchange(comm, cc, sbuf == VC_IN_PLACE ? rbuf : sbuf,
                                 (size_t)p * bytes, k);
    if (rc || !bytes)
        return rc;
    shm_slot_t *base = coll_flags_slots(comm);
    for (int r = 0; r < p; r++)
        core_copy((uint8_t *)rbuf + (size_t)r * bytes,
               coll_slot_of(base, 0, r, k)->data + (size_t)me * bytes, bytes);
    return VC_SUCCESS;
}

/* allgather(v): every rank publishes its block and copies every block
   out of its rank's line (the sizes come from my own counts, which a
   correct program shares; the whole result fits a line, so no copy can
   leave one). In place, my block is in rbuf already. */
static int flags_allgather(const coll_call_t *c, coll_comm_t *cc)
{
    const struct vc_comm *comm = c->comm;
    int p = comm->size, me = comm->rank;
    size_t es = dtype_size(c->dt);
    uint8_t *rb = c->rbuf;
    const uint8_t *in = c->sbuf;
    size_t mine = coll_blk_bytes(c, me, es);
    size_t at = coll_blk_off(c, me, es);
    if (c->sbuf == VC_IN_PLACE)
        in = rb + at;
    uint64_t k = ++cc->shm_seq;
    cc->seg_calls[c->kind]++;
    int rc = coll_flags_exchange(comm, cc, in, mine, k);
    if (rc)
        return rc;
    shm_slot_t *base = coll_flags_slots(comm);
    for (int r = 0; r < p; r++) {
        size_t n = coll_blk_bytes(c, r, es);
        if (n && !(r == me && c->sbuf == VC_IN_PLACE))
            core_copy(rb + coll_blk_off(c, r, es),
                   coll_slot_of(base, 0, r, k)->data, n);
    }
    return VC_SUCCESS;
}

/* The barrier with rank 0 as the releaser: the others publish their
   arrival and watch rank 0's line only; rank 0 watches everyone's and then
   publishes. Rank 0 leaves first, the others as they next run. When ranks
   share cores, a rooted call that follows (a bcast or scatter from rank 0,
   the common case) then finds its root already past the barrier instead of
   waiting for the scheduler to run it; the symmetric barrier lets whichever
   ranks happen to run leave first. Slot reuse is as safe as "flags": a
   rank's next line follows rank 0's, which follows every line of this call,
   each written after its rank finished the previous call. */
static int flags_barrier_release(const struct vc_comm *comm, coll_comm_t *cc)
{
    uint64_t k = ++cc->shm_seq;
    unsigned idle = 0;
    double next_check = 0;
    int from = 1, rc;
    if ((rc = coll_flags_settle(comm, cc, k)))
        return rc;
    /* ranks outnumber cores: the one rank each wait is for (rank 0, or the
       last to arrive) may need this core, and every spin delays it
       (np 4 on 2 cores: 3.4-3.6 us yielding at once, 5.6-5.8 spinning 16
       polls first; np 8: 8.7-8.9 against 9.9-10.5) */
    int who = cc->layout.oversub ? PROG_YIELD_AT_ONCE : -1;
    if (comm->coll->rank == 0) {
        while (!coll_flags_ready(comm, 0, k, &from))
            if ((rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check, who)))
                return rc;
        coll_flags_publish_empty(comm, k);
        cc->flags_seen = k;
        return VC_SUCCESS;
    }
    coll_flags_publish_empty(comm, k);
    const shm_slot_t *r0 = coll_slot_of(coll_flags_slots(comm), 0, 0, k);
    while (__atomic_load_n(&r0->seq, __ATOMIC_ACQUIRE) < k)
        if ((rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check, who)))
            return rc;
    cc->flags_seen = k;     /* rank 0 published after seeing every line */
    return VC_SUCCESS;
}

int coll_flags_release_run(const coll_call_t *c, int *rc)
{
    *rc = flags_barrier_release(c->comm, c->cc);
    return 1;
}

/* Sets go by agreement, not by init number, so a freed one serves again:
   frees are local, so a set is free for a new request only when every
   rank has freed its last one (the OR of the held masks says), and then
   nobody still reads its lines (only an inactive request can be freed).
   Its starts keep counting from where the last request left off, so a
   line of the new request is never taken for one of the old. */
_Static_assert(NET_SHM_PSETS <= 32, "coll_state_t.pset_held has 32 bits");

int coll_flags_pset_take(struct vc_comm *comm, size_t bytes, int *set, uint64_t *starts)
{
    coll_state_t *cs = comm->coll;
    uint32_t held = cs->pset_held, any = 0;
    *set = -1;
    *starts = 0;
    if (!coll_shm_eligible(comm, bytes))   /* the same on every rank */
        return VC_SUCCESS;
    int rc = coll_run_msgs(COLL_ALLREDUCE, comm, &held, &any, 1, VC_UINT32, VC_BOR, 0);
    if (rc)
        return rc;
    for (int k = 0; k < NET_SHM_PSETS; k++)
        if (!(any & (1u << k))) {
            cs->pset_held |= 1u << k;
            *set = PSET_FIRST(k);
            *starts = cs->pset_starts[k];
            break;
        }
    return VC_SUCCESS;
}

void coll_flags_pset_give(struct vc_comm *comm, int set, uint64_t starts)
{
    int k = (set - PSET_FIRST(0)) / 2;
    if (set < PSET_FIRST(0) || k >= NET_SHM_PSETS)
        return;
    comm->coll->pset_held &= ~(1u << k);
    comm->coll->pset_starts[k] = starts;
}

/* the caller worked out flags_ok (coll_shm_eligible); the slots reduce
   with the built-in kernels only */
int coll_flags_fits(const coll_query_t *q)
{
    return q->flags_ok && !q->user_op;
}

int coll_flags_run(const coll_call_t *c, int *rc)
{
    coll_comm_t *cc = c->cc;
    switch (c->kind) {
    case COLL_BARRIER: *rc = flags_barrier(c->comm, cc); break;
    case COLL_ALLTOALL: *rc = flags_alltoall(c->comm, cc, c->sbuf, c->rbuf, c->count, c->dt); break;
    case COLL_ALLREDUCE:
        *rc = flags_allreduce(c->comm, cc, c->sbuf, c->rbuf, c->count, c->dt, c->op);
        break;
    case COLL_REDUCE: *rc = coll_flags_reduce(c); break;
    case COLL_BCAST: *rc = coll_flags_bcast(c); break;
    case COLL_GATHER:
    case COLL_GATHERV: *rc = coll_flags_gather(c); break;
    case COLL_ALLGATHER:
    case COLL_ALLGATHERV: *rc = flags_allgather(c, cc); break;
    case COLL_ALLTOALLV:
        if (c->sbuf == VC_IN_PLACE)
            return 0;   /* declined: every rank passes in place or none */
        *rc = coll_flags_alltoallv(c);
        break;
    case COLL_REDUCE_SCATTER:
    case COLL_REDUCE_SCATTER_BLOCK: *rc = coll_flags_reduce_scatter(c); break;
    default: *rc = coll_flags_scatter(c); break;
    }
    return 1;
}
