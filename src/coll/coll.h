/*
 * coll.h -- the collective layer's entry points for the rest of the library
 * (core calls the per-communicator hooks; comm_split.c and api.c use the
 * runner).
 */
#ifndef VC_COLL_H
#define VC_COLL_H

#include <stddef.h>
#include "vcoll.h"
#include "core/comm.h"
#include "core/request.h"
#include "sched.h"

/* The collective layer's state, one per library (the context holds it;
 * the lifecycle fills it; every communicator points at it, comm->coll).
 * What coll needs of the layers beside and below it comes in here, not
 * through the context. */
struct boot_info;
struct net;
struct ops_table;
struct ctx_resv;
typedef struct coll_state {
    int rank, size;                  /* world */
    const struct boot_info *boot;    /* the node map */
    struct net *node_net;            /* node memory for the flag and segment
                                        paths (node_slots, node_bytes), or NULL */
    void *flag_slots;                /* node_net's slots, looked up once (the
                                        segment stays mapped where it is) */
    size_t shm_coll_max;             /* VCOLL_SHM_COLL_MAX */
    const char (*coll_alg)[32];      /* VCOLL_<COLL>_ALG, by collective */
    int any_node_oversub;            /* some node runs more ranks than cores
                                        (the same on every rank) */
    uint64_t node_pull;              /* message size from which a pull pays
                                        on a node (net.h: pull_pays), the
                                        largest of the nodes' (the same on
                                        every rank); UINT64_MAX: never */
    const struct ops_table *ops;     /* user reduction ops */
    uint32_t next_ctx;               /* next free context id (even) */
    struct ctx_resv *ctx_resv;       /* ids held by creations in flight */
    /* every communicator made by dup/split/create_group (freed ones are
       tombstones until the world's fini frees them all) */
    struct vc_comm **made;
    int nmade, capmade;
    /* persistent collectives not yet freed (exec.c; the world's fini
       frees what the user left) */
    list_t kept;
    /* the world's persistent flag slot sets (shm_flags.c): held by a live
       request of mine (bit k: set k), and the starts made on each so far,
       which every rank counts alike (a request is started equally often
       everywhere) */
    uint32_t pset_held;
    uint64_t pset_starts[32];
} coll_state_t;

/* Per-communicator state (schedule cache, scratch). core calls init for
 * the world communicator in vc_init and fini in vc_finalize; fini on the
 * world also releases every communicator made by dup/split. */
int coll_comm_init(struct vc_comm *c);

/* can the flag variants (shm_flags.c: small blocking barrier / allreduce
 * on a world that lives on one node) serve comm at this size? */
int coll_shm_eligible(const struct vc_comm *comm, size_t bytes);
void coll_comm_fini(struct vc_comm *c);

/* setup.c, for the lifecycle: check VCOLL_<COLL>_ALG against the registry
 * and load the rules table in force (VCOLL_TUNE_FILE); on an error a
 * message naming the variable, or the file, line and reason. */
struct vc_config;
int coll_setup(const struct vc_config *cfg, char *err, size_t errlen);
void coll_teardown(void);
/* what every rank must agree on: the forced algorithms packed 4 bits per
 * collective, shown by name; the rules table's digest and source */
int64_t coll_forced_pack(const struct vc_config *cfg);
void coll_forced_show(int64_t packed, char *buf, size_t len);
int64_t coll_rules_digest(void);
const char *coll_rules_source(void);

/* Shared-segment collectives (shm_seg.h) for a communicator on one node:
 * eligible = all members share my node (same answer on all members);
 * create is collective over comm and gives *seg = NULL when any member
 * cannot map it (or VCOLL_SHM_COLL_MAX would be passed), so all fall back
 * alike. */
struct coll_shmseg;
int coll_shmseg_eligible(const struct vc_comm *comm);
int coll_shmseg_create(struct vc_comm *comm, struct coll_shmseg **seg);
/* the same within cap bytes of the node's total (at most VCOLL_SHM_COLL_MAX) */
int coll_shmseg_create_within(struct vc_comm *comm, size_t cap, struct coll_shmseg **seg);
void coll_shmseg_free(struct coll_shmseg *seg);
/* comm's segment, made on first use (every member makes the same first
   call, so this is collective then); *seg = NULL when it cannot be had */
int coll_shmseg_of(struct vc_comm *comm, struct coll_shmseg **seg);
size_t coll_shmseg_bytes(int p);    /* one communicator's segment, p members */
size_t coll_shmseg_node_bytes(const coll_state_t *cs);    /* all segments on my node now */
int coll_shm_bcast(struct coll_shmseg *g, void *buf, size_t bytes, int root, int me);
int coll_shm_allgather(struct coll_shmseg *g, const void *in, void *rbuf, size_t blk,
                       int me);
/* allgatherv: cnt and dsp in elements of esize bytes, one per member */
int coll_shm_allgatherv(struct coll_shmseg *g, const void *in, void *rbuf,
                        const size_t *cnt, const size_t *dsp, size_t esize, int me);
int coll_shm_alltoall(struct coll_shmseg *g, const void *in, void *rbuf, size_t blk, int me);
/* alltoallv (shm_alltoallv.c): counts and displacements in elements of
   es bytes; tag for the blocks that go as messages */
int coll_shm_alltoallv(struct coll_shmseg *g, struct vc_comm *comm, int tag, const void *in,
                       void *rbuf, const size_t *scnt, const size_t *sdsp, const size_t *rcnt,
                       const size_t *rdsp, size_t es);
/* One member's alltoallv stream header, as copied out of the segment: for
   my block of want bytes, the stream's length and what I take of it
   (offset, bytes), or the bytes it sends me as a message; 1 when the
   header disagrees with want or points outside its stream (nothing of it
   is then taken past what fits both) */
int coll_a2av_hdr_check(const uint8_t *hdr, int me, size_t want, size_t *len, size_t *off,
                        size_t *take, size_t *msg);
/* 1: send this alltoallv to the message algorithms (the last one here
   was big; the same answer on every member) */
int coll_shm_alltoallv_declines(struct coll_shmseg *g);
int coll_shm_seg_barrier(struct coll_shmseg *g, int me);
/* what a reduction combines with */
typedef struct coll_redop {
    vc_dtype_t dt;
    vc_op_t op;
    size_t esize;
    const struct ops_user *ufn;   /* user op, or NULL */
} coll_redop_t;
/* reduce count elements of every member's in; out: where I want the
   result (NULL: not me), so allreduce = every member passes one; root:
   the member that wants it, -1 for all (shm_reduce.c) */
int coll_shm_reduce(struct coll_shmseg *g, const void *in, void *out, size_t count,
                    const coll_redop_t *o, int me, int root);
/* The same (root -1 or every member passing out; not reduce's two-member
   form) as a state machine: begin, then step until COLL_RED_DONE. A step
   does all it can without waiting: STUCK when it could do nothing (wait,
   then step again), MOVED when it did something but is not done.
   lagging: a member the step waits for (comm rank), or -1. */
typedef struct coll_shm_red {
    struct coll_shmseg *g;
    coll_redop_t o;
    const uint8_t *in;
    uint8_t *out;       /* NULL: I do not copy the result out */
    size_t count, wc;   /* elements in all, per window */
    uint64_t nwin, w, r, x;     /* windows; copied in, reduced, released */
    int me;
} coll_shm_red_t;
enum { COLL_RED_STUCK, COLL_RED_MOVED, COLL_RED_DONE };
void coll_shm_red_begin(coll_shm_red_t *c, struct coll_shmseg *g, const void *in, void *out,
                        size_t count, const coll_redop_t *o, int me);
int coll_shm_red_step(coll_shm_red_t *c);
int coll_shm_red_lagging(const coll_shm_red_t *c);

/* calls of kind on comm that went through a segment (tests) */
uint64_t coll_shm_calls(struct vc_comm *comm, int kind);
/* one more of them (a persistent start through its own segment) */
void coll_shm_count(struct vc_comm *comm, int kind);

/* Run one collective of kind COLL_*; sbuf may be VC_IN_PLACE (already
 * validated). With req == NULL it blocks; otherwise it starts a
 * non-blocking collective and returns its request in *req. */
int coll_run(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
             size_t count, vc_dtype_t dt, vc_op_t op, int root,
             struct vc_request **req);

/* A blocking collective by schedules only (never through shared memory):
 * for the library's own collectives while it sets up a communicator or a
 * segment, which the shared-memory algorithms would re-enter. */
int coll_run_msgs(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
                  size_t count, vc_dtype_t dt, vc_op_t op, int root);

/* The per-rank arrays of the vector collectives (see coll_args_t). */
typedef struct coll_vec {
    const size_t *counts, *displs, *rcounts, *rdispls;
} coll_vec_t;
int coll_run_v(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
               size_t count, vc_dtype_t dt, vc_op_t op, int root,
               const coll_vec_t *v, struct vc_request **req);

/* The one entry for every form (registry.h: FORM_BLOCKING, req NULL;
 * FORM_NONBLOCKING, started now; FORM_PERSISTENT, an inactive request in
 * *req whose schedule, scratch and tag are fixed here, for coll_start).
 * coll_run and coll_run_v are it with the form req implies. */
int coll_run_form(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
                  size_t count, vc_dtype_t dt, vc_op_t op, int root,
                  const coll_vec_t *v, struct vc_request **req, int form);

/* Communicators (comm_split.c, comm_create_group.c): collective over
 * comm, arguments checked by the API; the new one shares comm's layers. */
int coll_comm_dup(struct vc_comm *comm, struct vc_comm **newcomm);
int coll_comm_split(struct vc_comm *comm, int color, int key, struct vc_comm **newcomm);
int coll_comm_create_group(struct vc_comm *comm, int n, const int ranks[], int tag,
                           struct vc_comm **newcomm);
/* a context id free on every member (comm_split.c): reduce gives the
 * members' maximum or minimum (op VC_MAX, VC_MIN) of one value each; the
 * id is held against this process's other creations in flight (threads)
 * until everyone has said it is free; key tells two such creations apart
 * (the same on every member). coll_make_comm then makes the communicator
 * with it (owning world on success). */
typedef int (*coll_ctx_reduce_fn)(void *arg, uint32_t in, vc_op_t op, uint32_t *out);
int coll_ctx_agree(coll_ctx_reduce_fn reduce, void *arg, coll_state_t *cs, uint32_t key,
                   uint32_t *out);
int coll_make_comm(const struct vc_comm *parent, uint32_t ctx, int rank, int size, int *world,
                   struct vc_comm **out);
/* communicators with a neighbour graph (comm_graph.c): the arguments are
 * checked and agreed here (VC_ERR_ARG on every rank, VC_ERR_RANK on a rank
 * that named a neighbour out of range); the new one is a duplicate of comm
 * carrying the graph */
int coll_comm_create_graph(struct vc_comm *comm, int indegree, const int sources[],
                           int outdegree, const int destinations[],
                           struct vc_comm **newcomm);
int coll_comm_create_cart(struct vc_comm *comm, int ndims, const int dims[],
                          const int periods[], struct vc_comm **newcomm);
/* a freed communicator: tombstone (kept until finalize), caches dropped */
void coll_comm_free(struct vc_comm *comm);

/* Selection for the API (route.c): the algorithm a blocking call of count
 * elements of esize bytes would take on comm; forcing one (collective:
 * members that disagree all get VC_ERR_ARG and nothing changes). */
int coll_which(struct vc_comm *comm, int kind, size_t count, size_t esize, const char **name);
int coll_set_alg(struct vc_comm *comm, const char *collective, const char *algorithm);

/* executor (exec.c) */
int coll_exec_blocking(const coll_sched_t *s, void *const base[COLL_NBUF],
                       struct vc_comm *comm, int tag);
/* Round 0 of s posted without waiting (req has room for s->max_comm; *n
 * posted), and those requests waited for and checked: a shared-memory
 * runner's messages overlapping its own copies. Post errors leave the
 * posted ones in req for reap. */
int coll_exec_post(const coll_sched_t *s, void *const base[COLL_NBUF], struct vc_comm *comm,
                   int tag, struct vc_request **req, int *n);
int coll_exec_reap(struct vc_comm *comm, struct vc_request **req, int n);
/* Non-blocking: takes ownership of *s (moved) and tmp (malloc'd or NULL). */
int coll_exec_start(coll_sched_t *s, void *sbuf, void *rbuf, void *tmp,
                    struct vc_comm *comm, int tag, struct vc_request **out);
/* Persistent: the same ownership; *out is an inactive request (done, on no
 * queue) that keeps s and tmp until it is freed (req_free). */
int coll_exec_init(coll_sched_t *s, void *sbuf, void *rbuf, void *tmp,
                   struct vc_comm *comm, int tag, struct vc_request **out);
/* Persistent barrier / allreduce through the node's flag slot set slot
 * (coll_flags_pset_take, which gave starts: the set's count so far; the
 * request gives the set back when released): an inactive request like
 * coll_exec_init's. */
int coll_exec_flags_init(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
                         size_t count, vc_dtype_t dt, vc_op_t op, int slot, uint64_t starts,
                         int tag, struct vc_request **out);
/* the slot set a persistent request runs through, 0 if none (tests) */
int coll_exec_flags_set(const struct vc_request *r);
/* Persistent allreduce through segment g (coll_shmseg_create on a one-node
 * comm; the request owns it from here on success): an inactive request
 * like coll_exec_init's. */
int coll_exec_seg_init(struct vc_comm *comm, struct coll_shmseg *g, const void *sbuf,
                       void *rbuf, size_t count, vc_dtype_t dt, vc_op_t op,
                       const struct ops_user *ufn, int tag, struct vc_request **out);
/* vc_start: an inactive persistent request from round 0 (VC_ERR_REQUEST
 * for any other request); no allocation, no building. */
int coll_exec_restart(struct vc_request *r);
/* the world's fini: free every persistent request still allocated */
void coll_exec_free_kept(coll_state_t *cs);

/* Tags. Every collective message travels on the communicator's collective
 * context; the tag tells calls apart. Regular (blocking and non-blocking)
 * calls take the lower half of 0..VC_TAG_UB in call order, which all ranks
 * share. A persistent request takes its tag once, at init, from the upper
 * half, by its own counter (inits come in the same order on every rank):
 * its starts may come in any order and still pair with the same request
 * on the peers, and no regular call can ever match them. */
#define COLL_TAG_HALF ((uint32_t)VC_TAG_UB / 2 + 1)     /* 0x20000000 */
static inline int coll_next_tag(struct vc_comm *comm)
{
    return (int)(comm->coll_seq++ & (COLL_TAG_HALF - 1));
}
static inline int coll_next_persistent_tag(struct vc_comm *comm)
{
    return (int)(COLL_TAG_HALF | (comm->coll_pers_seq++ & (COLL_TAG_HALF - 1)));
}

#endif
