/*
 * vcmpi.h -- the MPI drop-in (libvcoll_mpi_<mpi>.so): MPI collectives
 * intercepted through the PMPI profiling interface and run on vcoll.
 *
 * Built once per MPI from the same sources. Every intercepted call either
 * runs on vcoll ("taken") or hands the very same arguments to PMPI_*
 * ("fallback"); the choice must come out the same on every rank of the
 * communicator, so it only looks at what MPI requires to match there: the
 * call, the communicator (whether it has a twin), and for reductions the
 * datatype and op. Never at one rank's memory layout or sizes: data of any
 * layout is packed locally around the vcoll call (stage.c).
 */
#ifndef VCMPI_H
#define VCMPI_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "vcoll.h"
#include "weak.h"

/* every intercepted function, for the statistics */
#define VCMPI_FUNCS(X) \
    X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Allgather) X(Allgatherv) \
    X(Gather) X(Gatherv) X(Scatter) X(Scatterv) X(Alltoall) X(Alltoallv) \
    X(Reduce_scatter) X(Reduce_scatter_block) X(Scan) X(Exscan) X(Alltoallw) \
    X(Ibarrier) X(Ibcast) X(Ireduce) X(Iallreduce) X(Iallgather) X(Iallgatherv) \
    X(Igather) X(Igatherv) X(Iscatter) X(Iscatterv) X(Ialltoall) X(Ialltoallv) \
    X(Ireduce_scatter) X(Ireduce_scatter_block) X(Iscan) X(Iexscan) \
    X(Barrier_init) X(Bcast_init) X(Reduce_init) X(Allreduce_init) X(Allgather_init) \
    X(Allgatherv_init) X(Gather_init) X(Gatherv_init) X(Scatter_init) X(Scatterv_init) \
    X(Alltoall_init) X(Alltoallv_init) X(Reduce_scatter_init) X(Reduce_scatter_block_init) \
    X(Scan_init) X(Exscan_init) X(Alltoallw_init) \
    X(Neighbor_allgather) X(Neighbor_allgatherv) X(Neighbor_alltoall) \
    X(Neighbor_alltoallv) X(Neighbor_alltoallw) \
    X(Ineighbor_allgather) X(Ineighbor_allgatherv) X(Ineighbor_alltoall) \
    X(Ineighbor_alltoallv) X(Ineighbor_alltoallw) \
    X(Neighbor_allgather_init) X(Neighbor_allgatherv_init) X(Neighbor_alltoall_init) \
    X(Neighbor_alltoallv_init) X(Neighbor_alltoallw_init)

enum {
#define VCMPI_ENUM(n) FN_##n,
    VCMPI_FUNCS(VCMPI_ENUM)
#undef VCMPI_ENUM
    FN_COUNT
};

/* an MPI communicator's vcoll twin, cached as an MPI attribute */
typedef struct vcmpi_comm {
    vc_comm_t vc;            /* VC_COMM_NULL: this communicator falls back */
    const char *why;         /* ... and why */
    struct vcmpi_comm *prev, *next;
} vcmpi_comm_t;

/* flatten.c: one element of a datatype as byte segments in type-map
   order, shared by reference (the type's cache and the calls in flight) */
typedef struct vcmpi_seg {
    MPI_Aint off;
    size_t len;
} vcmpi_seg_t;
typedef struct vcmpi_flat {
    int refs;
    size_t n;
    vcmpi_seg_t seg[];
} vcmpi_flat_t;
/* NULL when the walk cannot follow dt or the list would be long */
vcmpi_flat_t *vcmpi_flatten(MPI_Datatype dt, size_t size);
void vcmpi_flat_hold(vcmpi_flat_t *f);
void vcmpi_flat_drop(vcmpi_flat_t *f);
/* dir 0: count elements at user into packed; 1: back */
void vcmpi_flat_copy(int dir, char *user, size_t count, MPI_Aint extent,
                     const vcmpi_flat_t *f, char *packed);

/* What vcoll needs of a datatype (types.c), the same on every rank that
   has the same type. */
enum { VCMPI_OPS_ALL, VCMPI_OPS_LOGICAL, VCMPI_OPS_SUM };
typedef struct vcmpi_tinfo {
    size_t size;             /* bytes of data per element (packed) */
    MPI_Aint extent, true_lb;
    int contig;              /* elements back to back, no holes: no packing */
    int red;                 /* reducible on vcoll: nv elements of vtype each */
    int direct;              /* ... in place as MPI lays it out (predefined) */
    int kind;                /* VCMPI_OPS_*: which ops */
    vc_dtype_t vtype;
    size_t nv;
    vcmpi_flat_t *flat;      /* the layout, when not contiguous (or NULL:
                                MPI_Pack packs it); owned by the cache */
} vcmpi_tinfo_t;

/* stage.c: a call's data as vcoll sees it, and the unpacks and frees due
   when the call is over (at once, or at a non-blocking call's completion) */
typedef struct vcmpi_unpack {
    char *packed;
    void *user;
    int count;
    MPI_Datatype dt;
    vcmpi_tinfo_t ti;
} vcmpi_unpack_t;
#define VCMPI_STAGE_FREES 8
#define VCMPI_STAGE_DUPS 2
#define VCMPI_STAGE_INLINE 1024
typedef struct vcmpi_stage {
    MPI_Comm comm;
    int nonblocking;         /* datatypes must outlive the call: dup'ed */
    int persistent;          /* packs are redone at every start: kept in pk */
    vcmpi_unpack_t *un, *pk;
    int nun, capun, npk, cappk;
    void *frees[VCMPI_STAGE_FREES];
    int nfree;
    MPI_Datatype dup[VCMPI_STAGE_DUPS], dup_of[VCMPI_STAGE_DUPS];
    int ndup;
    vc_op_t vop;             /* a vcoll op made for this call (has_vop) */
    int has_vop;
    MPI_Op held_op;          /* an MPI op kept alive for the call (held) */
    int held;
    /* a blocking call's small scratch (count arrays, small packs): the
       stage lives on the wrapper's stack for exactly that call, so this
       saves a malloc and a free per v-collective */
    size_t ninline;
    unsigned char inline_buf[VCMPI_STAGE_INLINE] __attribute__((aligned(16)));
} vcmpi_stage_t;

/* does the call hold anything to unpack, free or release at its end? */
static inline int vcmpi_stage_busy(const vcmpi_stage_t *s)
{
    return s->nun || s->nfree || s->ndup || s->has_vop || s->held || s->un || s->npk ||
           s->pk;
}

/* a non-blocking collective in flight: a generalized MPI request the
   application waits on, completed when vcoll's request is. A persistent
   one (MPI_<Coll>_init) is instead a persistent zero-byte receive from
   oneself on the drop-in's own MPI_COMM_SELF twin, tag ptag: MPI_Start
   posts it and starts vcoll's request, and the drop-in sends the message
   that completes it when vcoll's request is done. So MPI's own waits,
   tests, MPI_Request_get_status and arrays of mixed requests handle it as
   the persistent request it is, inactive between starts.
   That receive and its message cost about 1.5 us a start (np 4, 8 B
   allreduce: 6.0-6.5 us a start against 4.5 for the blocking call), so it
   is posted only once the request has been handed to MPI: in an array
   (Waitall, Testany, ...). Until then MPI_Start, Wait, Test and
   Request_get_status serve it from vcoll's state alone (mside 0), MPI's
   receive staying inactive. */
typedef struct vcmpi_req {
    MPI_Request mreq;
    vc_request_t vreq;
    MPI_Comm comm;
    vcmpi_stage_t *stage;    /* unpacked and freed at completion (persistent:
                                repacked at every start, unpacked at every
                                completion, freed with the request) */
    int done, err;
    int persistent, ptag;
    int mside;               /* persistent: MPI's receive is posted at every
                                start (sticky, from its first array call), so
                                a completion sends its message */
} vcmpi_req_t;

#define VCMPI_NTYPES 56

/* The drop-in's state. The interposed MPI_* entry points are free functions
 * with MPI's signatures, so this one struct is where they find it. */
struct vcmpi {
    int ready;               /* setup ran: priv and keyval exist */
    int on;                  /* vcoll started, and usable on every rank */
    int started;             /* vcoll started here (so finalize it) */
    int rank;                /* in MPI_COMM_WORLD */
    int size;                /* of MPI_COMM_WORLD (vcoll's world is the same) */
    int mpi_thread, vc_thread;
    int stats, debug;
    int alias_checks;        /* alias.c: the MPI fails aliased buffers itself */
    MPI_Comm priv;           /* dup of world for the drop-in's own traffic */
    MPI_Comm self;           /* dup of MPI_COMM_SELF: persistent requests' receives */
    int next_ptag;
    int keyval;
    uint32_t next_tag;       /* twins made on vcoll's world (comm.c: agree_tag) */
    struct vcmpi_tag_hold *tag_holds;   /* tags being agreed by other threads */
    vcmpi_comm_t *comms;     /* every twin made, to free at MPI_Finalize */
    vcmpi_req_t **reqs;
    int nreq, capreq;
    int nactive;             /* reqs not yet complete (atomic) */
    pthread_mutex_t lock;    /* comms, reqs, next_tag, tag_holds */
    pthread_mutex_t poll_lock;   /* one thread drives vcoll's requests */
    /* progress.c: how vcoll moves while the program blocks in MPI */
    int mpi_drives;          /* MPI's engine polls vcoll (Open MPI's callback) */
    struct {                 /* else the stand-in thread, while armed */
        pthread_mutex_t m;   /* started, quit, warned; c's */
        pthread_mutex_t busy;    /* held across each of its polls */
        pthread_cond_t c;
        pthread_t t;
        int armed;           /* threads in a blocking MPI call (atomic) */
        int started, quit, warned;
    } standin;
    uint64_t taken[FN_COUNT], fallback[FN_COUNT];
    /* types.c: predefined MPI types vcoll reduces, filled at MPI_Init
       (MPICH's handles are constants, Open MPI's are addresses: both
       compare with ==) */
    struct { MPI_Datatype mpi; vc_dtype_t vc; int mult, kind; } types[VCMPI_NTYPES];
    int ntypes;
    int type_keyval;         /* vcmpi_tinfo_t cached on derived types */
    /* ops.c: MPI ops that calls in flight still run; MPI_Op_free of one
       is put off until the last of them ends (under lock) */
    struct vcmpi_held_op { MPI_Op op; int uses, freed; } *held_ops;
    int nheld, capheld;
};
extern struct vcmpi vcmpi;

/* comm.c: the vcoll twin of comm, made by its constructor; VC_COMM_NULL
   with *why set when this call must fall back */
vc_comm_t vcmpi_comm(MPI_Comm comm, const char **why);
/* my rank and the size of a twin (either may be NULL); nonzero on error.
   The world's come from the drop-in's own copy, without two library
   calls that validate (a small collective's whole cost is a few hundred
   instructions) */
static inline int vcmpi_rank_size(vc_comm_t vc, int *me, int *n)
{
    if (vc == VC_COMM_WORLD) {
        if (me)
            *me = vcmpi.rank;
        if (n)
            *n = vcmpi.size;
        return 0;
    }
    return (me && vc_comm_rank(vc, me)) || (n && vc_comm_size(vc, n));
}
void vcmpi_comm_made(MPI_Comm parent, int tag, MPI_Comm newcomm);
int vcmpi_comm_setup(void);
void vcmpi_comm_free_all(void);

/* types.c */
void vcmpi_types_setup(void);
const char *vcmpi_tinfo(MPI_Datatype dt, vcmpi_tinfo_t *ti);
MPI_Aint vcmpi_type_size(MPI_Datatype dt);
const char *vcmpi_op(MPI_Op op, const vcmpi_tinfo_t *ti, vc_op_t *out);

/* stage.c. src: count elements to send, *out where vcoll reads them
   (packed if need be). dst1: where vcoll writes count elements (a temporary
   unpacked at finish when not contiguous; load = pack the current contents
   first, for in-place data). dst: the same into a temporary of the caller's
   (stage_alloc), for the blocks of a v-collective. MPI error codes. */
void vcmpi_stage_init(vcmpi_stage_t *s, MPI_Comm comm, int nonblocking);
void *vcmpi_stage_alloc(vcmpi_stage_t *s, size_t bytes);
int vcmpi_stage_src(vcmpi_stage_t *s, const void *buf, int count, MPI_Datatype dt,
                    const vcmpi_tinfo_t *ti, const void **out);
int vcmpi_stage_dst1(vcmpi_stage_t *s, void *buf, int count, MPI_Datatype dt,
                     const vcmpi_tinfo_t *ti, int load, void **out);
int vcmpi_stage_dst(vcmpi_stage_t *s, void *buf, int count, MPI_Datatype dt,
                    const vcmpi_tinfo_t *ti, int load, char *packed);
/* n blocks of a vector argument: byte counts and displacements into v
   (counts, then displacements), *vbuf the data where it lies when the
   type is contiguous, else a packed temporary (in: packed now; out:
   unpacked at the end; both: in place) */
int vcmpi_stage_vec(vcmpi_stage_t *s, int n, const void *buf, const int *cnt, const int *dsp,
                    MPI_Datatype dt, int in, int out, void **vbuf, size_t *v);
/* allx.c: blocks of b bytes each, n to receive into rb (in place: loaded)
   and sblocks to send from sb */
int vcmpi_stage_all(vcmpi_stage_t *s, int n, int sblocks, const void *sb, int sc,
                    MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, const void **vs,
                    void **vr, size_t *b);
/* count elements into packed, now; and back out of it */
int vcmpi_pack(const void *buf, int count, MPI_Datatype dt, const vcmpi_tinfo_t *ti,
               char *packed);
int vcmpi_unpack(void *buf, int count, MPI_Datatype dt, const vcmpi_tinfo_t *ti,
                 const char *packed);
/* a datatype that must live as long as the call (a dup when non-blocking) */
int vcmpi_stage_keep_type(vcmpi_stage_t *s, MPI_Datatype dt, MPI_Datatype *kept);
/* large_rt.c (MPI 4): a large count as (int count, same-signature type),
   arrays of counts or displacements as ints (*whole when one does not
   fit: the call goes to MPI's own _c form) */
#if MPI_VERSION >= 4
int vcmpi_big(MPI_Count count, MPI_Datatype dt, int *c, MPI_Datatype *t, int *made);
void vcmpi_unbig(MPI_Datatype *t, int made);
int *vcmpi_ints_count(const MPI_Count *src, int n, int *whole, int *rc);
int *vcmpi_ints_aint(const MPI_Aint *src, int n, int *whole, int *rc);
#endif
int vcmpi_comm_n(MPI_Comm comm);
int vcmpi_at_root(int root, MPI_Comm comm);

/* ops.c: keep op alive until vcmpi_op_release (MPI_ERR_NO_MEM if no room) */
int vcmpi_op_hold(MPI_Op op);
void vcmpi_op_release(MPI_Op op);
/* a persistent call's stage: pack its inputs again (at a start); unpack
   its outputs (at a completion) */
int vcmpi_stage_repack(vcmpi_stage_t *s);
int vcmpi_stage_unpack(vcmpi_stage_t *s);
/* ok: unpack (the call succeeded); then free everything */
int vcmpi_stage_finish(vcmpi_stage_t *s, int ok);


#define VCMPI_BUF(b) ((b) == MPI_IN_PLACE ? VC_IN_PLACE : (void *)(b))
#define VCMPI_CBUF(b) ((b) == MPI_IN_PLACE ? VC_IN_PLACE : (const void *)(b))

/* alias.c: a call with the same memory as send and receive buffer in a
   shape the MPI itself rejects on the calling rank before communicating
   (MPICH; Open MPI checks none): the caller hands it to the MPI, which
   fails it. sb == rb (not in place), for the caller to pair with its
   nonzero count; block: one's block is this rank's block of many (me),
   same type, same nonzero count (gather, allgather; scatter with the
   sides swapped); vblock: the same with many's counts and displacements */
#if defined(MPICH)
#define VCMPI_ALIAS_CHECKS 1
void vcmpi_alias_setup(void);
#define vcmpi_alias_checks() (vcmpi.alias_checks)
int vcmpi_alias_block(const void *one, int oc, MPI_Datatype ot, const void *many, int mc,
                      MPI_Datatype mt, int me);
int vcmpi_alias_vblock(const void *one, int oc, MPI_Datatype ot, const void *many,
                       const int mcs[], const int ds[], MPI_Datatype mt, int me);
#else
#define VCMPI_ALIAS_CHECKS 0
#define vcmpi_alias_setup() ((void)0)
#define vcmpi_alias_checks() 0
#define vcmpi_alias_block(one, oc, ot, many, mc, mt, me) 0
#define vcmpi_alias_vblock(one, oc, ot, many, mcs, ds, mt, me) 0
#endif
static inline int vcmpi_aliased(const void *sb, const void *rb)
{
    return VCMPI_ALIAS_CHECKS && vcmpi_alias_checks() && sb == rb && sb != MPI_IN_PLACE;
}
#define VCMPI_ALIASED "send and receive buffer are one: the MPI reports it"

/* error.c: vcoll error -> MPI error class through comm's error handler */
int vcmpi_error(MPI_Comm comm, int vcrc);
/* an MPI error class of the drop-in's own, the same way */
int vcmpi_mpi_error(MPI_Comm comm, int cls);

/* request.c: st is a heap stage (or NULL), owned by the request */
int vcmpi_req_start(MPI_Comm comm, vc_request_t vr, vcmpi_stage_t *st, MPI_Request *req);
/* ... and the persistent form: vr is an inactive vcoll persistent request */
int vcmpi_preq_init(MPI_Comm comm, vc_request_t vr, vcmpi_stage_t *st, MPI_Request *req);

/* Persistent collectives (MPI-4's MPI_<Coll>_init; Open MPI 4.1 names them
 * MPIX_<Coll>_init, in its pcollreq extension). The entry points run the
 * same body as the non-blocking form with vcmpi_pinit set (and the info to
 * pass on when falling back): VCMPI_TRY then makes vcoll's persistent
 * request and VCMPI_FALLBACK MPI's. Thread-local: threads may init at once. */
extern __thread int vcmpi_pinit;
extern __thread MPI_Info vcmpi_pinfo;
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if defined(MPICH) && MPI_VERSION >= 4
#define VCMPI_HAVE_PCOLL 1
#define VCMPI_PINIT(name) MPI_##name##_init
#define VCMPI_PPINIT(name) PMPI_##name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define VCMPI_HAVE_PCOLL 1
#define VCMPI_PINIT(name) MPIX_##name##_init
#define VCMPI_PPINIT(name) PMPIX_##name##_init
#else
#define VCMPI_HAVE_PCOLL 0
#endif
/* MPI's persistent form of a collective as the fallback (pcall), or an
   error where this MPI has none (then no program can call the entry).
   After VCMPI_HAVE_PCOLL: an #if on an undefined name reads 0. */
#if VCMPI_HAVE_PCOLL
#define VCMPI_PMPI(name, ...) VCMPI_PPINIT(name)(__VA_ARGS__, vcmpi_pinfo, R_)
#else
#define VCMPI_PMPI(name, ...) MPI_ERR_INTERN
#endif
/* the body of a persistent entry point: call, with the flags set */
#define VCMPI_PERSIST(info, call)                                               \
    do {                                                                        \
        vcmpi_pinit = 1;                                                        \
        vcmpi_pinfo = (info);                                                   \
        int rc_p_ = (call);                                                     \
        vcmpi_pinit = 0;                                                        \
        return rc_p_;                                                           \
    } while (0)
/* the statistics' entry of a persistent call: the non-blocking one's
   counterpart (the two lists are in the same order) */
static inline int vcmpi_fn(int fn)
{
    /* the thread-local flag last: reading it is a __tls_get_addr call in a
       shared library, which a blocking call need not pay */
    if (fn >= FN_Ibarrier && fn <= FN_Iexscan && vcmpi_pinit)
        return fn - FN_Ibarrier + FN_Barrier_init;
    if (fn >= FN_Ineighbor_allgather && fn <= FN_Ineighbor_alltoallw && vcmpi_pinit)
        return fn - FN_Ineighbor_allgather + FN_Neighbor_allgather_init;
    return fn;
}
/* progress.c: drive vcoll's outstanding requests once (any thread; skips
   when another thread is at it) */
void vcmpi_poll(void);
/* wait for an MPI request while vcoll's requests keep moving */
int vcmpi_block(MPI_Request *req, MPI_Status *status);
void vcmpi_progress_setup(void);
void vcmpi_progress_teardown(void);
/* a blocking MPI call (a collective that fell back, a constructor) runs
   between these when vcoll requests are outstanding and MPI's engine does
   not poll vcoll: the stand-in thread polls it meanwhile. arm: 0 when no
   thread could be had (warned once) */
int vcmpi_standin_arm(void);
void vcmpi_standin_disarm(void);

/* stats.c: the counters are read only for VCOLL_MPI_STATS=1, so only
   then paid for. Not a locked add: that drains the store buffer, so a
   root returning from a bcast waited for every line it had just written
   to reach the reader's core (np 2, bcast 1-4 KiB through either MPI's
   drop-in: 0.15-0.25 us a call, and every compare-dropin.sh table runs
   with the stats on). A relaxed load and store cannot drain it; under
   MPI_THREAD_MULTIPLE two threads counting at once may lose one count */
static inline void vcmpi_count(uint64_t *c)
{
    if (vcmpi.stats)
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}
static inline void vcmpi_count_taken(int fn)
{
    vcmpi_count(&vcmpi.taken[fn]);
}
void vcmpi_fallback_log(int fn, const char *why);
/* a call the MPI runs: counted, and logged only under VCOLL_LOG=debug
   (the log call's frame alone cost a zero-count call more than the
   call itself) */
static inline void vcmpi_fallback(int fn, const char *why)
{
    vcmpi_count(&vcmpi.fallback[fn]);
    if (vcmpi.debug)
        vcmpi_fallback_log(fn, why);
}
/* The end of a vcoll attempt. Returns 0 when vcoll refused the arguments
   before any communication (arithmetic on MPI_BYTE and the like: the same
   refusal on every rank), so the caller falls back; otherwise 1, with the
   MPI return code in *ret. req = NULL for a blocking call. st: the call's
   stage, finished here (blocking) or handed to the request. */
int vcmpi_finish(int fn, MPI_Comm comm, int rc, MPI_Request *req, vc_request_t vr,
                 vcmpi_stage_t *st, int *ret);
void vcmpi_report(void);

/* The body every intercepted collective shares. vc: the twin (or
 * VC_COMM_NULL, why set); stage: what the caller prepared (err: an MPI
 * error while preparing it, raised on this rank alone: MPI_ERR_NO_MEM is
 * not a reason to fall back, which other ranks would not do). Runs the
 * non-blocking (icall, which writes &vr) or blocking (bcall) form and
 * returns unless vcoll refused the arguments; the caller's PMPI_* call
 * follows. */
#define VCMPI_TRY(fn, have, vc, why, comm, req, stage, err, icall, bcall, pcall)   \
    do {                                                                        \
        int ret_, rc_, fn_ = vcmpi_fn(fn);                                      \
        vc_request_t vr = VC_REQUEST_NULL;                                      \
        if (!(have) && !(why))                                                  \
            (why) = "not in this libvcoll";                                     \
        if ((vc) == VC_COMM_NULL || (why)) {                                    \
            vcmpi_stage_finish(&(stage), 0);                                    \
            vcmpi_fallback(fn_, why);                                            \
            break;                                                              \
        }                                                                       \
        if (err) {                                                              \
            vcmpi_stage_finish(&(stage), 0);                                    \
            return vcmpi_mpi_error(comm, err);                                  \
        }                                                                       \
        rc_ = !(req) ? (bcall) : vcmpi_pinit ? (pcall) : (icall);               \
        /* the common end, inline: blocking, done, nothing to unpack */         \
        if (!rc_ && !(req) && !vcmpi_stage_busy(&(stage))) {                    \
            vcmpi_count_taken(fn_);                                             \
            return MPI_SUCCESS;                                                 \
        }                                                                       \
        if (vcmpi_finish(fn_, comm, rc_, req, vr, &(stage), &ret_))             \
            return ret_;                                                        \
    } while (0)
static inline int vcmpi_pending(void)
{
    return __atomic_load_n(&vcmpi.nactive, __ATOMIC_ACQUIRE) != 0;
}
/* vcoll requests are outstanding and MPI's engine will not move them:
   a blocking MPI call must, one way or another (progress.c) */
static inline int vcmpi_must_drive(void)
{
    return vcmpi_pending() && !vcmpi.mpi_drives;
}
/* rc = a blocking MPI call that may wait for other ranks, with vcoll's
   requests kept moving meanwhile (by the stand-in when arm holds) */
#define VCMPI_BLOCKING_IF(rc, arm, call)                                        \
    do {                                                                        \
        int armed_ = (arm) && vcmpi_standin_arm();                              \
        (rc) = (call);                                                          \
        if (armed_)                                                             \
            vcmpi_standin_disarm();                                             \
    } while (0)
#define VCMPI_BLOCKING(rc, call) VCMPI_BLOCKING_IF(rc, vcmpi_must_drive(), call)
/* the same for a call that waits in the process manager (PMIx: spawn,
   accept, connect, join), where Open MPI's engine does not run its
   callbacks either (its own non-blocking collectives stall there too):
   the stand-in polls vcoll even where that engine drives it */
#define VCMPI_BLOCKING_PM(rc, call) VCMPI_BLOCKING_IF(rc, vcmpi_pending(), call)

/* The fallback: the non-blocking form (icall, whose request argument is
 * written R_) for a non-blocking call, the persistent one (pcall) for a
 * persistent init; for a blocking one the plain call (bcall) on every
 * rank, whatever it has outstanding: MPI matches a blocking collective
 * only with the blocking one. */
#define VCMPI_FALLBACK(req, icall, bcall, pcall)                                \
    do {                                                                        \
        MPI_Request *R_ = (req);                                                \
        int rc_;                                                                \
        if (R_)                                                                 \
            return vcmpi_pinit ? (pcall) : (icall);                             \
        VCMPI_BLOCKING(rc_, bcall);                                             \
        return rc_;                                                             \
    } while (0)

/* error.c */
void vcmpi_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
