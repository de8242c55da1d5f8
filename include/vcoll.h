/*
 * vcoll -- MPI-style point-to-point and collective communication over
 * InfiniBand/RoCE verbs and shared memory.
 *
 * Every call returns VC_SUCCESS or a VC_ERR_* code (see vc_strerror); errors
 * are never fatal unless a peer or the fabric fails underneath the job.
 */
#ifndef VCOLL_H
#define VCOLL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VC_VERSION_MAJOR 0
#define VC_VERSION_MINOR 3
#define VC_VERSION_PATCH 0
/* e.g. "0.3.0 (verbs rc ud shm)": the transports compiled in. */
const char *vc_version_string(void);

typedef struct vc_comm *vc_comm_t;
typedef struct vc_request *vc_request_t;
#define VC_COMM_NULL ((vc_comm_t)0)
#define VC_REQUEST_NULL ((vc_request_t)0)

/* The world communicator: valid from vc_init to vc_finalize. */
extern struct vc_comm vc_comm_world_obj;
#define VC_COMM_WORLD ((vc_comm_t)&vc_comm_world_obj)

typedef enum {
    VC_BYTE, VC_INT8, VC_UINT8, VC_INT16, VC_UINT16, VC_INT32, VC_UINT32,
    VC_INT64, VC_UINT64, VC_FLOAT, VC_DOUBLE,
    /* pairs for VC_MINLOC / VC_MAXLOC, laid out as MPI's: the value, then an
       int32 index (struct { float v; int32_t i; } and so on, C padding) */
    VC_FLOAT_INT, VC_DOUBLE_INT, VC_INT32_INT, VC_INT64_INT
} vc_dtype_t;

typedef enum {
    VC_SUM, VC_PROD, VC_MIN, VC_MAX,
    VC_BAND, VC_BOR, VC_BXOR, VC_LAND, VC_LOR, VC_LXOR,
    VC_MINLOC, VC_MAXLOC    /* pair types only; ties pick the smaller index.
                               A NaN value ties with everything (the index
                               decides), so with NaN the result depends on
                               the combination order -- still the same bits
                               on every rank */
    /* vc_op_create hands out further values for user functions */
} vc_op_t;

typedef struct {
    int source;   /* rank in the communicator */
    int tag;
    int error;    /* VC_SUCCESS or a VC_ERR_* */
    size_t bytes; /* bytes actually received */
} vc_status_t;

#define VC_ANY_SOURCE (-1)
#define VC_ANY_TAG (-1)
#define VC_UNDEFINED (-32766)
#define VC_IN_PLACE ((void *)1)
#define VC_STATUS_IGNORE ((vc_status_t *)0)
#define VC_TAG_UB 0x3fffffff

enum {
    VC_SUCCESS = 0,
    VC_ERR_ARG,             /* invalid argument not covered below  */
    VC_ERR_RANK,            /* rank / root out of range            */
    VC_ERR_TAG,             /* tag out of range                    */
    VC_ERR_DTYPE,           /* unknown datatype                    */
    VC_ERR_OP,              /* unknown op, or op not valid for dtype */
    VC_ERR_COUNT,           /* count * size overflows              */
    VC_ERR_BUFFER,          /* NULL buffer with count > 0          */
    VC_ERR_TRUNCATE,        /* message longer than receive buffer  */
    VC_ERR_COMM,            /* invalid or freed communicator       */
    VC_ERR_REQUEST,         /* invalid request                     */
    VC_ERR_NOMEM,
    VC_ERR_NOT_INITIALIZED, /* call before vc_init / after vc_finalize */
    VC_ERR_BOOTSTRAP,       /* launcher / PMIx problem             */
    VC_ERR_TRANSPORT,       /* device, QP, CQ or shm failure       */
    VC_ERR_PEER_FAILED,     /* a peer died or became unreachable   */
    VC_ERR_TIMEOUT,
    VC_ERR_UNSUPPORTED,
    VC_ERR_INTERNAL
};
const char *vc_strerror(int err);

/* lifecycle */
int vc_init(int *argc, char ***argv);
/* Thread levels, as MPI's. vc_init_thread grants at most what was required
   (VC_THREAD_MULTIPLE is granted: any thread may call anything at any time);
   vc_init grants VC_THREAD_SINGLE. As in MPI, under VC_THREAD_MULTIPLE two
   threads must not call collectives on one communicator at once, nor wait on
   one request: give each thread its own vc_comm_dup. */
enum { VC_THREAD_SINGLE = 0, VC_THREAD_FUNNELED, VC_THREAD_SERIALIZED,
       VC_THREAD_MULTIPLE };
int vc_init_thread(int *argc, char ***argv, int required, int *provided);
int vc_query_thread(int *provided);
int vc_finalize(void);
int vc_initialized(int *flag);
/* Bootstrap through the caller instead of a launcher: the next vc_init or
   vc_init_thread learns rank and size from here and exchanges its start-up
   data (host names, endpoint blobs) only by calling allgather, which must
   gather len bytes from every rank into all (rank r's at all + r * len) and
   return 0, or non-zero on failure. Every rank calls it with the same len,
   in the same order. Meant for hosts that already run a parallel job, e.g.
   an MPI library under a launcher without PMIx (MPICH's hydra). Call it
   before vc_init; it applies to that one vc_init. */
typedef int vc_allgather_fn(const void *mine, void *all, size_t len, void *ctx);
int vc_bootstrap_exchange(int rank, int size, vc_allgather_fn *allgather, void *ctx);
int vc_abort(vc_comm_t comm, int errorcode);
double vc_wtime(void);

/* communicators */
int vc_comm_rank(vc_comm_t comm, int *rank);
int vc_comm_size(vc_comm_t comm, int *size);
int vc_comm_dup(vc_comm_t comm, vc_comm_t *newcomm);
int vc_comm_split(vc_comm_t comm, int color, int key, vc_comm_t *newcomm);
int vc_comm_free(vc_comm_t *comm);
/* As MPI_Comm_create_group: collective over the n ranks of comm listed in
   ranks[] only (not the whole of comm), each passing the same list and tag;
   the new communicator's rank i is ranks[i]. The tag (0..VC_TAG_UB) keeps
   concurrent creations with overlapping members apart, and travels on
   comm's point-to-point traffic, so it must not clash with the caller's own
   messages there. The caller must be in the list. */
int vc_comm_create_group(vc_comm_t comm, int n, const int ranks[], int tag,
                         vc_comm_t *newcomm);

/* Collective algorithms. Which one a call gets is decided by a rules table
   (built in, or written by vcoll_tune: see VCOLL_TUNE_FILE and
   doc/collectives.md); these calls list the algorithms and force one.
   vc_coll_alg_name: the name of algorithm index (0, 1, ...) of collective
   ("barrier", "bcast", "reduce", "allreduce", "allgather", "gather",
   "gatherv", "scatter", "scatterv", "allgatherv", "alltoall", "alltoallv",
   "reduce_scatter_block", "reduce_scatter", "scan", "exscan"); VC_ERR_ARG
   past the last one or for an unknown collective. Needs no vc_init.
   vc_coll_set_alg: from now on collective on comm uses algorithm ("auto"
   or NULL: the rules table again), where it can serve the call (an
   algorithm that would reorder a non-commutative op, or that has no
   non-blocking form, gives way to the table for that call). Collective
   over comm: every member must pass the same names, or every member gets
   VC_ERR_ARG and nothing changes. VCOLL_<COLL>_ALG sets the starting choice
   of every communicator.
   vc_coll_which: the algorithm a blocking call of collective on comm with
   count elements of dtype per rank (v-collectives: count each) gets now,
   forced or from the table, with a commutative op. One that runs through
   shared memory ("shm") may still find no segment when called, and then
   runs what the table says next. Local; the same answer on every member. */
int vc_coll_alg_name(const char *collective, int index, const char **name);
int vc_coll_which(vc_comm_t comm, const char *collective, size_t count, vc_dtype_t dtype,
                  const char **name);
int vc_coll_set_alg(vc_comm_t comm, const char *collective, const char *algorithm);

/* datatypes and user reduction ops */
int vc_dtype_size(vc_dtype_t dtype, size_t *size);
/* fn(in, inout, count, dtype) computes inout[i] = in[i] op inout[i]; the
   library calls it with in holding the lower ranks' contribution. A
   non-commutative op is combined in rank order. */
typedef void vc_user_fn(const void *in, void *inout, size_t count, vc_dtype_t dtype);
int vc_op_create(vc_user_fn *fn, int commutative, vc_op_t *op);
int vc_op_free(vc_op_t *op);    /* sets *op to an invalid value */
/* An element of size bytes (1..VC_DTYPE_OPAQUE_MAX) that vcoll moves and
   reduces whole: the collectives never split one, so a user op sees whole
   elements (a struct, a small matrix, another library's datatype). Only
   user ops reduce it (built-in ops: VC_ERR_OP). Creating one is free:
   nothing to release. */
#define VC_DTYPE_OPAQUE_MAX (1 << 24)
int vc_dtype_opaque(size_t size, vc_dtype_t *dtype);
/* A user op whose function gets a context pointer too (the state of
   another library: its op and datatype, say); otherwise as vc_op_create,
   and freed with vc_op_free. */
typedef void vc_user_ctx_fn(const void *in, void *inout, size_t count, vc_dtype_t dtype,
                            void *ctx);
int vc_op_create_ctx(vc_user_ctx_fn *fn, void *ctx, int commutative, vc_op_t *op);

/* point-to-point; count is in elements of dtype */
int vc_send(const void *buf, size_t count, vc_dtype_t dtype, int dest, int tag,
            vc_comm_t comm);
int vc_recv(void *buf, size_t count, vc_dtype_t dtype, int source, int tag,
            vc_comm_t comm, vc_status_t *status);
int vc_isend(const void *buf, size_t count, vc_dtype_t dtype, int dest, int tag,
             vc_comm_t comm, vc_request_t *req);
int vc_irecv(void *buf, size_t count, vc_dtype_t dtype, int source, int tag,
             vc_comm_t comm, vc_request_t *req);
int vc_sendrecv(const void *sbuf, size_t scount, vc_dtype_t sdtype, int dest, int stag,
                void *rbuf, size_t rcount, vc_dtype_t rdtype, int source, int rtag,
                vc_comm_t comm, vc_status_t *status);
int vc_wait(vc_request_t *req, vc_status_t *status);
int vc_test(vc_request_t *req, int *flag, vc_status_t *status);
int vc_waitall(int n, vc_request_t reqs[], vc_status_t statuses[]);
/* index = VC_UNDEFINED when every request is VC_REQUEST_NULL (or an
   inactive persistent request: see vc_start) */
int vc_waitany(int n, vc_request_t reqs[], int *index, vc_status_t *status);
int vc_testany(int n, vc_request_t reqs[], int *index, int *flag, vc_status_t *status);
int vc_testall(int n, vc_request_t reqs[], int *flag, vc_status_t statuses[]);
/* status: source, tag and bytes of the message a matching receive would get */
int vc_probe(int source, int tag, vc_comm_t comm, vc_status_t *status);
int vc_iprobe(int source, int tag, vc_comm_t comm, int *flag, vc_status_t *status);

/* Progress for a library that shares the process (the MPI drop-in).
 * vc_poll: one non-blocking pass -- poll every transport once and advance
 * the outstanding non-blocking operations; *events (may be NULL) gets how
 * many things happened. Lets a caller that waits on something else (an MPI
 * receive) keep vcoll's requests moving.
 * vc_set_idle_hook: fn(arg) is called from vcoll's blocking waits while
 * they find nothing to do (every few idle polls), so the other library can
 * drive its own progress meanwhile: a peer may only reach vcoll's
 * collective after that library moved its data. Called only in the thread
 * that waits, never re-entrantly, and never from vc_poll; fn must not call
 * vcoll. One hook per process; fn = NULL removes it. */
typedef void vc_idle_fn(void *arg);
int vc_poll(int *events);
int vc_set_idle_hook(vc_idle_fn *fn, void *arg);

/* collectives (blocking) */
int vc_barrier(vc_comm_t comm);
int vc_bcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm);
int vc_reduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
              vc_op_t op, int root, vc_comm_t comm);
int vc_allreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_op_t op, vc_comm_t comm);
int vc_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_comm_t comm);
/* One dtype for both sides, counts in elements. Per-rank counts and
   displacements are arrays of comm-size entries; displacements are in
   elements from the buffer start. VC_IN_PLACE as in MPI. */
int vc_gather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
              vc_comm_t comm);
int vc_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
               const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm);
int vc_scatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
               vc_comm_t comm);
int vc_scatterv(const void *sbuf, const size_t scounts[], const size_t displs[],
                void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm);
int vc_allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                  const size_t displs[], vc_dtype_t dtype, vc_comm_t comm);
int vc_alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                vc_comm_t comm);
int vc_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                 void *rbuf, const size_t rcounts[], const size_t rdispls[],
                 vc_dtype_t dtype, vc_comm_t comm);
int vc_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                            vc_op_t op, vc_comm_t comm);
int vc_reduce_scatter(const void *sbuf, void *rbuf, const size_t rcounts[],
                      vc_dtype_t dtype, vc_op_t op, vc_comm_t comm);
int vc_scan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
            vc_comm_t comm);
int vc_exscan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
              vc_comm_t comm);     /* rank 0's rbuf is left untouched */

/* collectives (non-blocking): the same arguments plus the request */
int vc_ibarrier(vc_comm_t comm, vc_request_t *req);
int vc_ibcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm,
              vc_request_t *req);
int vc_iallreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                  vc_op_t op, vc_comm_t comm, vc_request_t *req);
int vc_ireduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
               vc_op_t op, int root, vc_comm_t comm, vc_request_t *req);
int vc_iallgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                  vc_comm_t comm, vc_request_t *req);
int vc_igather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
               vc_comm_t comm, vc_request_t *req);
int vc_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm,
                vc_request_t *req);
int vc_iscatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                vc_comm_t comm, vc_request_t *req);
int vc_iscatterv(const void *sbuf, const size_t scounts[], const size_t displs[],
                 void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm,
                 vc_request_t *req);
int vc_iallgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                   const size_t displs[], vc_dtype_t dtype, vc_comm_t comm,
                   vc_request_t *req);
int vc_ialltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_comm_t comm, vc_request_t *req);
int vc_ialltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                  void *rbuf, const size_t rcounts[], const size_t rdispls[],
                  vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req);
int vc_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count,
                             vc_dtype_t dtype, vc_op_t op, vc_comm_t comm,
                             vc_request_t *req);
int vc_ireduce_scatter(const void *sbuf, void *rbuf, const size_t rcounts[],
                       vc_dtype_t dtype, vc_op_t op, vc_comm_t comm, vc_request_t *req);
int vc_iscan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
             vc_comm_t comm, vc_request_t *req);
int vc_iexscan(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
               vc_comm_t comm, vc_request_t *req);

/* collectives (persistent, MPI-4): the blocking form's arguments plus the
 * request. The init call is collective (the same inits in the same order on
 * every rank: that is where requests are matched), checks its arguments as
 * the non-blocking form does, and returns an INACTIVE request in *req. The
 * algorithm, the schedule and its scratch are fixed at init; buffers,
 * counts and arguments must stay valid and unchanged until vc_request_free
 * (buffer contents may change between starts). vc_start makes it active;
 * starts need not come in the same order on every rank. vc_wait, vc_test
 * and the array forms complete it and leave it inactive (not freed, the
 * handle unchanged); waiting on or testing an inactive request returns at
 * once (flag 1, empty status), and vc_waitany / vc_testany skip inactive
 * requests as they skip VC_REQUEST_NULL. A peer that dies during a start
 * fails that start (VC_ERR_PEER_FAILED). */
int vc_barrier_init(vc_comm_t comm, vc_request_t *req);
int vc_bcast_init(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm,
                  vc_request_t *req);
int vc_reduce_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                   vc_op_t op, int root, vc_comm_t comm, vc_request_t *req);
int vc_allreduce_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                      vc_op_t op, vc_comm_t comm, vc_request_t *req);
int vc_allgather_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                      vc_comm_t comm, vc_request_t *req);
int vc_gather_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                   vc_comm_t comm, vc_request_t *req);
int vc_gatherv_init(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                    const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm,
                    vc_request_t *req);
int vc_scatter_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                    vc_comm_t comm, vc_request_t *req);
int vc_scatterv_init(const void *sbuf, const size_t scounts[], const size_t displs[],
                     void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm,
                     vc_request_t *req);
int vc_allgatherv_init(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                       const size_t displs[], vc_dtype_t dtype, vc_comm_t comm,
                       vc_request_t *req);
int vc_alltoall_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                     vc_comm_t comm, vc_request_t *req);
int vc_alltoallv_init(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                      void *rbuf, const size_t rcounts[], const size_t rdispls[],
                      vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req);
int vc_reduce_scatter_block_init(const void *sbuf, void *rbuf, size_t count,
                                 vc_dtype_t dtype, vc_op_t op, vc_comm_t comm,
                                 vc_request_t *req);
int vc_reduce_scatter_init(const void *sbuf, void *rbuf, const size_t rcounts[],
                           vc_dtype_t dtype, vc_op_t op, vc_comm_t comm, vc_request_t *req);
int vc_scan_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
                 vc_comm_t comm, vc_request_t *req);
int vc_exscan_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, vc_op_t op,
                   vc_comm_t comm, vc_request_t *req);
/* Starting and freeing persistent requests. Errors are local, reported by
 * the calling rank alone: VC_ERR_REQUEST for starting a request that is
 * active or not persistent (vc_startall then starts none), and for
 * vc_request_free of an active, a non-persistent or a NULL request.
 * vc_startall starts the array's requests in any order. vc_request_free
 * releases an inactive persistent request (its schedule and scratch) and
 * sets *req to VC_REQUEST_NULL; requests still allocated at vc_finalize
 * are released there. */
int vc_start(vc_request_t *req);
int vc_startall(int n, vc_request_t reqs[]);
int vc_request_free(vc_request_t *req);

/* Neighborhood collectives (MPI's, on a communicator that carries a
 * neighbour graph).
 *
 * vc_comm_create_graph is collective over comm and makes a communicator
 * with comm's ranks in comm's order (MPI_Dist_graph_create_adjacent with
 * reorder = 0) whose neighbours are sources[] (I receive from them, rbuf
 * blocks in this order) and destinations[] (I send to them, sbuf blocks in
 * this order). An edge may be listed more than once (a multigraph). The
 * lists must agree: a rank that lists b as a destination k times is listed
 * by b as a source k times; otherwise every rank gets VC_ERR_ARG. A
 * neighbour outside 0..size-1 is VC_ERR_RANK on the rank that named it and
 * VC_ERR_ARG on the others (no communicator is made anywhere).
 *
 * vc_comm_create_cart makes a Cartesian grid of ndims dimensions,
 * periodic or not per dimension, whose sizes multiply to comm's size
 * (VC_ERR_ARG on every rank otherwise); ranks keep their order, the last
 * dimension varying fastest (MPI_Cart_create with reorder = 0). Its
 * neighbours, as sources and as destinations: for each dimension d the -1
 * neighbour, then the +1 neighbour; VC_PROC_NULL past a non-periodic edge
 * (nothing is sent there, and its rbuf block is left untouched).
 *
 * vc_comm_dup keeps the graph, vc_comm_split does not, vc_comm_free
 * releases it. vc_neighbors_count and vc_neighbors tell the degrees and
 * the first maxin sources and maxout destinations. Every neighborhood call
 * on a communicator without a graph is VC_ERR_COMM.
 *
 * rbuf holds indegree blocks in sources[] order; alltoall(v)'s sbuf holds
 * outdegree blocks in destinations[] order (allgather(v) sends its one
 * block to every destination). Counts and displacements are in elements,
 * one per edge; there is no in-place form (VC_ERR_BUFFER). With repeated
 * edges between two ranks, the k-th listing on one side pairs with the
 * k-th on the other. On a Cartesian communicator, alltoall(v)'s rbuf block
 * 2d is what the -1 neighbour in dimension d sent as its block 2d+1, and
 * block 2d+1 what the +1 neighbour sent as its block 2d (MPI-4's rule;
 * also when both neighbours are one rank, or oneself). */
#define VC_PROC_NULL (-2)
int vc_comm_create_graph(vc_comm_t comm, int indegree, const int sources[],
                         int outdegree, const int destinations[], vc_comm_t *newcomm);
int vc_comm_create_cart(vc_comm_t comm, int ndims, const int dims[], const int periods[],
                        vc_comm_t *newcomm);
int vc_neighbors_count(vc_comm_t comm, int *indegree, int *outdegree);
int vc_neighbors(vc_comm_t comm, int maxin, int sources[], int maxout, int destinations[]);
int vc_neighbor_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                          vc_comm_t comm);
int vc_neighbor_allgatherv(const void *sbuf, size_t scount, void *rbuf,
                           const size_t rcounts[], const size_t displs[],
                           vc_dtype_t dtype, vc_comm_t comm);
int vc_neighbor_alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                         vc_comm_t comm);
int vc_neighbor_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                          void *rbuf, const size_t rcounts[], const size_t rdispls[],
                          vc_dtype_t dtype, vc_comm_t comm);
int vc_ineighbor_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                           vc_comm_t comm, vc_request_t *req);
int vc_ineighbor_allgatherv(const void *sbuf, size_t scount, void *rbuf,
                            const size_t rcounts[], const size_t displs[],
                            vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req);
int vc_ineighbor_alltoall(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                          vc_comm_t comm, vc_request_t *req);
int vc_ineighbor_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                           void *rbuf, const size_t rcounts[], const size_t rdispls[],
                           vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req);
int vc_neighbor_allgather_init(const void *sbuf, void *rbuf, size_t count,
                               vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req);
int vc_neighbor_allgatherv_init(const void *sbuf, size_t scount, void *rbuf,
                                const size_t rcounts[], const size_t displs[],
                                vc_dtype_t dtype, vc_comm_t comm, vc_request_t *req);
int vc_neighbor_alltoall_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                              vc_comm_t comm, vc_request_t *req);
int vc_neighbor_alltoallv_init(const void *sbuf, const size_t scounts[],
                               const size_t sdispls[], void *rbuf, const size_t rcounts[],
                               const size_t rdispls[], vc_dtype_t dtype, vc_comm_t comm,
                               vc_request_t *req);

#ifdef __cplusplus
}
#endif
#endif
