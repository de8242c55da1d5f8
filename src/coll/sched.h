/*
 * sched.h -- collectives as data.
 *
 * An algorithm is a pure function of (rank, size, count, dtype, op, root,
 * in-place flag) that appends *steps* to a schedule. Buffers are named
 * symbolically (SBUF = user send buffer, RBUF = user receive buffer,
 * TMP = scratch the executor provides, sched->tmp_bytes long) plus a byte
 * offset, so one schedule can be cached and replayed with other buffers, run
 * over p2p by exec.c, or run for all ranks inside one process by the unit
 * test simulator (test/unit/test_coll.c) with no network at all.
 *
 * Round semantics (the executor and the simulator both implement exactly
 * this):
 *   1. all RECV steps of the round are posted (in schedule order), then all
 *      SEND steps (in schedule order);
 *   2. the round waits until every one of them has completed;
 *   3. the local steps (COPY, REDUCE) run in schedule order.
 * So a buffer a round sends or receives may be produced by an earlier
 * round's local steps and consumed by this round's local steps. Within one
 * round no RECV destination may overlap another RECV destination or a SEND
 * source (the simulator checks this), SBUF is never written, and sends to
 * one peer are matched by that peer's receives in posting order (MPI's
 * non-overtaking rule), so several messages between one pair are fine.
 * Zero-byte SEND/RECV steps are real messages (barrier uses them); the
 * algorithms skip empty data blocks on both sides symmetrically instead.
 *
 * Reduction order: REDUCE computes dst = a op b. Algorithms choose a and b
 * so that every element of the final result is computed by one expression
 * tree that does not depend on which rank evaluates it (or is computed once
 * and then copied), which makes results bitwise identical on every rank.
 */
#ifndef VC_COLL_SCHED_H
#define VC_COLL_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include "vcoll.h"

struct ops_user;   /* core/ops.h */

enum { COLL_SBUF = 0, COLL_RBUF = 1, COLL_TMP = 2, COLL_NBUF = 3 };
enum { STEP_SEND = 0, STEP_RECV, STEP_COPY, STEP_REDUCE };
/* STEP_F_FANIN: the peer receives from many ranks at once (a gather's
   parent): the block goes eagerly up to the eager limit, past the size
   from which the transport would rather have it pulled, so the copies are
   spread over the senders instead of queued at the receiver one pull call
   each, and a sender with nothing else to do returns without waiting for
   the receiver to get to it (np 2, 8 KiB: 1.62 us against 1.96 pulled,
   doc/collectives.md). Not for fan-out: a scatter's root would copy every
   block into the rings itself while each receiver waits for it, and
   measured no better. Where ranks outnumber the cores, shm takes such a
   block eagerly up to its fan-in packet (64 KiB, shm.c): the sender
   leaves instead of waiting for the busy root twice. A hint: the
   executor's blocking path honours it (p2p_send_fast, P2P_SEND_EAGER),
   and the simulator ignores it */
enum { STEP_F_FANIN = 1 };

typedef struct coll_step {
    uint8_t kind;
    uint8_t dbuf;       /* RECV, COPY, REDUCE: destination */
    uint8_t abuf;       /* SEND, COPY: source; REDUCE: left operand */
    uint8_t bbuf;       /* REDUCE: right operand */
    uint8_t flags;      /* SEND: STEP_F_* */
    int peer;           /* SEND / RECV: comm rank */
    size_t bytes;
    size_t doff, aoff, boff;
} coll_step_t;

typedef struct coll_sched {
    coll_step_t *steps;
    int nsteps, cap;
    int *round;         /* round i = steps [round[i], round[i+1]) */
    int nrounds, rcap;
    int open;           /* a round is open and has steps */
    int max_comm;       /* most SEND+RECV steps in one round */
    int cur_comm;
    size_t tmp_bytes;   /* scratch the schedule needs */
    int folds;          /* has REDUCE steps: what it receives is read at once
                           (sched_reset clears it, sched_reduce sets it) */
    int err;            /* VC_ERR_NOMEM if building ran out of memory */
    vc_dtype_t dt;
    vc_op_t op;
    size_t esize;
    const struct ops_user *ufn;   /* user op: REDUCE calls it instead of a built-in */
} coll_sched_t;

/* Everything an algorithm may depend on. */
typedef struct coll_args {
    int rank, size, root;
    size_t count;       /* elements (allgather: per rank) */
    vc_dtype_t dt;
    vc_op_t op;
    size_t esize;
    int inplace;        /* input lives in RBUF (at in_off) instead of SBUF */
    size_t in_off;      /* allgather/gather: rank * count * esize;
                           allgatherv/gatherv: displs[rank] * esize; else 0 */
    const struct ops_user *ufn;   /* user op function (op is a user op), else NULL */
    int noncomm;        /* op is not commutative: combine in rank order */
    /* Vector forms, in elements; arrays of `size` entries owned by the
     * caller and read only while building (so v-schedules are not cached):
     *   gatherv:        counts/displs = root's rcounts/displs, count = my scount
     *   scatterv:       counts/displs = root's scounts/displs, count = my rcount
     *   allgatherv:     counts/displs = rcounts/displs, count = my scount
     *   alltoallv:      counts/displs = scounts/sdispls, rcounts/rdispls
     *   reduce_scatter: counts = rcounts
     *   neighbor_allgatherv: rcounts/rdispls by source, count = my scount
     *   neighbor_alltoallv: counts/displs by destination, rcounts/rdispls
     *                       by source (these arrays have the degrees'
     *                       lengths, not size)
     * Arrays a rank does not own under MPI rules (a non-root's gatherv
     * counts) are NULL; algorithms must not need them there.
     * In place (inplace = 1): gather(v) root's block is already in RBUF at
     * in_off; scatter(v) root keeps its block where it is (no RBUF);
     * alltoall(v), reduce_scatter(_block), scan, exscan take the input from
     * RBUF at 0 (alltoallv with rcounts/rdispls). */
    const size_t *counts, *displs, *rcounts, *rdispls;
    /* the communicator's node layout (layout.h), read by the hierarchical
       algorithms only; NULL = all ranks on one node */
    const struct coll_layout *layout;
    /* the neighbour graph (graph.h) of the neighborhood kinds, else NULL */
    const struct coll_graph *graph;
} coll_args_t;

/* collective kinds (index into per-comm caches and the builder tables) */
enum { COLL_BARRIER, COLL_BCAST, COLL_REDUCE, COLL_ALLREDUCE, COLL_ALLGATHER,
       COLL_GATHER, COLL_GATHERV, COLL_SCATTER, COLL_SCATTERV, COLL_ALLGATHERV,
       COLL_ALLTOALL, COLL_ALLTOALLV, COLL_REDUCE_SCATTER_BLOCK,
       COLL_REDUCE_SCATTER, COLL_SCAN, COLL_EXSCAN,
       /* on a communicator with a neighbour graph (graph.h); the ones
          before them are the collectives with a VCOLL_<COLL>_ALG */
       COLL_NEIGHBOR_ALLGATHER, COLL_NEIGHBOR_ALLGATHERV, COLL_NEIGHBOR_ALLTOALL,
       COLL_NEIGHBOR_ALLTOALLV, COLL_NKINDS };
#define COLL_NKINDS_FLAT COLL_NEIGHBOR_ALLGATHER
/* kinds whose arguments include per-rank (or per-neighbour) arrays */
static inline int coll_kind_vector(int kind)
{
    return kind == COLL_GATHERV || kind == COLL_SCATTERV || kind == COLL_ALLGATHERV ||
           kind == COLL_ALLTOALLV || kind == COLL_REDUCE_SCATTER ||
           kind == COLL_NEIGHBOR_ALLGATHERV || kind == COLL_NEIGHBOR_ALLTOALLV;
}
static inline int coll_kind_neighbor(int kind)
{
    return kind >= COLL_NEIGHBOR_ALLGATHER && kind < COLL_NKINDS;
}

typedef int (*coll_build_fn)(const coll_args_t *a, coll_sched_t *s);

/* ---- building (sched.c) ---- */
void sched_init(coll_sched_t *s, const coll_args_t *a);
void sched_reset(coll_sched_t *s, const coll_args_t *a);  /* keeps memory */
void sched_free(coll_sched_t *s);
/* close the open round (no-op if it is empty) */
void sched_round(coll_sched_t *s);
void sched_send(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer);
/* sched_send with STEP_F_FANIN */
void sched_send_fanin(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer);
void sched_recv(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer);
/* dst = src; skipped if src and dst are the same place or bytes == 0 */
void sched_copy(coll_sched_t *s, int dbuf, size_t doff, int sbuf, size_t soff,
                size_t bytes);
/* dst = a op b over bytes/esize elements; skipped if bytes == 0 */
void sched_reduce(coll_sched_t *s, int dbuf, size_t doff, int abuf, size_t aoff,
                  int bbuf, size_t boff, size_t bytes);
void sched_need_tmp(coll_sched_t *s, size_t bytes);
/* finish: closes the last round; returns s->err */
int sched_done(coll_sched_t *s);

/* ---- helpers shared by algorithms (sched.c) ---- */
void coll_args_set(coll_args_t *a, int kind, int rank, int size, int root,
                   size_t count, vc_dtype_t dt, vc_op_t op, int inplace);
/* the vector arrays (any may be NULL); sets in_off for gatherv/allgatherv */
void coll_args_vec(coll_args_t *a, int kind, const size_t *counts,
                   const size_t *displs, const size_t *rcounts,
                   const size_t *rdispls);
/* run one COPY or REDUCE step on real buffers (the executor and the unit
   simulator share it, so user ops and built-ins behave the same in both) */
void sched_local_step(const coll_sched_t *s, const coll_step_t *st,
                      unsigned char *const *base);
/* dst = a op b over n elements, op built in or the user function ufn */
void coll_reduce_kernel(void *dst, const void *a, const void *b, size_t n, vc_dtype_t dt,
                        vc_op_t op, size_t esize, const struct ops_user *ufn);
/* where this rank's input is: SBUF at 0, or RBUF at in_off when in place */
void coll_input(const coll_args_t *a, int *buf, size_t *off);
/* balanced split of count elements into n blocks: first element and count
   of block i */
void coll_block(size_t count, int n, int i, size_t *first, size_t *cnt);
/* largest power of two <= n (n >= 1) */
int coll_pof2_floor(int n);
/* binomial tree over relative ranks 0..p-1 (0 = root): how many
   consecutive relative ranks vr's subtree covers (vr first); its parent is
   vr - *pmask (the root gets span p and *pmask = 0). Child vr + k, for
   k = 1, 2, 4... < span, covers min(k, span - k) of them. */
int coll_binomial_span(int vr, int p, int *pmask);
/* sum of n counts (vector forms) */
size_t coll_vec_total(const size_t *counts, int n);
/* reduce_scatter(_block) layout: block i is elements [off[i], off[i+1]) of
   the input, from counts[] or a->count each when counts is NULL. Returns a
   malloc'd array of size+1 entries, or NULL with s->err = VC_ERR_NOMEM. */
size_t *coll_rs_offsets(const coll_args_t *a, coll_sched_t *s);
/* One round of recursive halving (reduce_rsag, allreduce_rabenseifner,
   reduce_scatter_recursive_halving): new ranks nr and nr^m (comm rank
   peer) share the window of new ranks [G, G+2m), G = nr & ~(2m-1); the one
   with bit m clear keeps the lower half. I send my copy of the other half
   from cur (at cur_off + its offset), the partner's copy of mine arrives
   in TMP at rv, and the kept half becomes "lower group op upper group" in
   acc at its own offset. win gives the byte range of new ranks [n0, n1).
   The caller closes the round. */
typedef void (*coll_win_fn)(const coll_args_t *a, const void *ctx, int n0, int n1,
                            size_t *off, size_t *len);
void coll_halving_step(coll_sched_t *s, const coll_args_t *a, coll_win_fn win,
                       const void *ctx, int nr, int m, int peer, int cur,
                       size_t cur_off, int acc, size_t rv);
/* win for count elements in pof2 = *(int *)ctx balanced blocks (coll_block) */
void coll_win_blocks(const coll_args_t *a, const void *ctx, int n0, int n1,
                     size_t *off, size_t *len);
/* alltoall(v) pairwise rounds over any block layout (alltoallv_pairwise.c):
   lay gives, in elements, what I send to peer j (count, displacement in
   the input) and what I receive from it (count, displacement in RBUF) */
typedef void (*coll_a2a_layout_fn)(const coll_args_t *a, int j, size_t *scnt,
                                   size_t *sdsp, size_t *rcnt, size_t *rdsp);
/* one_round: every exchange posted at once (the linear forms) instead of
   one per round */
int coll_a2a_pairwise(const coll_args_t *a, coll_sched_t *s, coll_a2a_layout_fn lay,
                      int one_round);
void coll_a2a_uniform_layout(const coll_args_t *a, int j, size_t *scnt, size_t *sdsp,
                             size_t *rcnt, size_t *rdsp);
/* alltoallv in either form: checks the arrays, then coll_a2a_pairwise */
int coll_alltoallv_build(const coll_args_t *a, coll_sched_t *s, int one_round);
/* scan and exscan (scan_recursive_doubling.c) */
int coll_scan_build(const coll_args_t *a, coll_sched_t *s, int exclusive);

/* ---- algorithms: one file each ---- */
int coll_barrier_dissemination(const coll_args_t *a, coll_sched_t *s);
int coll_barrier_linear(const coll_args_t *a, coll_sched_t *s);
int coll_bcast_binomial(const coll_args_t *a, coll_sched_t *s);
int coll_bcast_scatter_allgather(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_binomial(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_rsag(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_linear(const coll_args_t *a, coll_sched_t *s);
int coll_allreduce_recursive_doubling(const coll_args_t *a, coll_sched_t *s);
int coll_allreduce_rabenseifner(const coll_args_t *a, coll_sched_t *s);
int coll_allreduce_ring(const coll_args_t *a, coll_sched_t *s);
int coll_allreduce_linear(const coll_args_t *a, coll_sched_t *s);
int coll_allgather_ring(const coll_args_t *a, coll_sched_t *s);
int coll_allgather_recursive_doubling(const coll_args_t *a, coll_sched_t *s);
int coll_gather_binomial(const coll_args_t *a, coll_sched_t *s);
int coll_gather_linear(const coll_args_t *a, coll_sched_t *s);
int coll_gatherv_linear(const coll_args_t *a, coll_sched_t *s);
int coll_scatter_binomial(const coll_args_t *a, coll_sched_t *s);
int coll_scatter_linear(const coll_args_t *a, coll_sched_t *s);
int coll_scatterv_linear(const coll_args_t *a, coll_sched_t *s);
int coll_allgatherv_ring(const coll_args_t *a, coll_sched_t *s);
int coll_allgatherv_recursive_doubling(const coll_args_t *a, coll_sched_t *s);
/* alltoall(v), reduce_scatter(_block), scan, exscan; the reduce_scatter
   builders serve both kinds (uniform blocks when counts is NULL) */
int coll_alltoall_bruck(const coll_args_t *a, coll_sched_t *s);
int coll_alltoall_pairwise(const coll_args_t *a, coll_sched_t *s);
int coll_alltoallv_pairwise(const coll_args_t *a, coll_sched_t *s);
int coll_alltoall_linear(const coll_args_t *a, coll_sched_t *s);
int coll_alltoallv_linear(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_scatter_recursive_halving(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_scatter_pairwise(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_scatter_ring(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_scatter_linear(const coll_args_t *a, coll_sched_t *s);
int coll_scan_recursive_doubling(const coll_args_t *a, coll_sched_t *s);
int coll_exscan_recursive_doubling(const coll_args_t *a, coll_sched_t *s);
/* the neighborhood collectives: one round, every edge at once
   (neighbor_direct.c) */
int coll_neighbor_allgather_direct(const coll_args_t *a, coll_sched_t *s);
int coll_neighbor_allgatherv_direct(const coll_args_t *a, coll_sched_t *s);
int coll_neighbor_alltoall_direct(const coll_args_t *a, coll_sched_t *s);
int coll_neighbor_alltoallv_direct(const coll_args_t *a, coll_sched_t *s);
/* two-level (node-aware) forms: hier.c, layout.h */
int coll_barrier_hier(const coll_args_t *a, coll_sched_t *s);
int coll_bcast_hier(const coll_args_t *a, coll_sched_t *s);
int coll_reduce_hier(const coll_args_t *a, coll_sched_t *s);
int coll_allreduce_hier(const coll_args_t *a, coll_sched_t *s);
int coll_allgather_hier(const coll_args_t *a, coll_sched_t *s);

/* the algorithms, what they promise and which one a call gets: registry.h */

#endif
