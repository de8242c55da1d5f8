/*
 * registry.h -- every collective algorithm as one descriptor, and the
 * facts selection decides on.
 *
 * An algorithm is a name, a pure schedule builder (sched.h) and what it
 * promises: whether it combines in rank order (so non-commutative ops may
 * use it), whether it composes node and leader phases, which forms of the
 * call it serves, and what it needs of a call to run at all (fits). The
 * "shm" and "flags" algorithms also run blocking calls through shared
 * memory (run); where they cannot, the call goes on as a schedule. They
 * serve the blocking form, and "flags" the non-blocking one of the
 * collectives it can start (start); a persistent call needs a schedule
 * the executor can restart.
 *
 * Selection (select.c) is one route for every form: a forced algorithm
 * (VCOLL_<COLL>_ALG or vc_coll_set_alg, per communicator) if it fits and
 * serves the form, else the first rule of the table in force (rules.c)
 * whose conditions hold and whose algorithm fits.
 */
#ifndef VC_COLL_REGISTRY_H
#define VC_COLL_REGISTRY_H

#include <stddef.h>
#include "sched.h"

/* what a descriptor promises */
enum {
    ALG_RANK_ORDERED = 1,   /* x0 op x1 op ... op x(p-1), any association */
    ALG_NODE_AWARE = 2,     /* node and leader phases (hier.c) */
    ALG_SHARED = 4,         /* runs blocking calls through shared memory (run) */
};

/* the forms of a call: blocking, non-blocking (started at once), persistent
   (vc_<name>_init: the schedule is built once and started many times) */
enum { FORM_BLOCKING = 1, FORM_NONBLOCKING = 2, FORM_PERSISTENT = 4, FORM_ALL = 7 };

/* What selection knows about a call: only facts every member holds alike
 * (the communicator's layout, the op, the sizes MPI requires to match),
 * so every member picks the same algorithm. */
typedef struct coll_query {
    int kind, form;
    int ranks;          /* communicator size */
    int ppn, nodes;     /* most members on one node, nodes (0: unknown) */
    int blocked;        /* every node holds consecutive ranks */
    int oversub;        /* some node has more ranks than cores (agreed) */
    /* from this message size a pull (one CMA copy) pays on the nodes'
       machines against streaming through the rings (two copies): the
       measure of a system call's price selection reads. The largest over
       the nodes, agreed at vc_init (UINT64_MAX: never, CMA off; 0:
       unknown, as in the unit simulator). Whether a segment's pipelined
       copies beat messages turns on it: the call's price differs tenfold
       between machines (doc/collectives.md, "Selection") */
    uint64_t pull;
    int noncomm;        /* a non-commutative user op */
    int user_op;        /* any user op */
    int flags_ok;       /* the flag variants can serve this comm and size */
    int flat;           /* a phase of a two-level schedule: flat algorithms only */
    int no_shared;      /* shared memory declined this call: schedules only */
    size_t count, esize;
    /* bytes: one rank's block (bcast, reduce, allreduce, scan: the
       message; allgather, gather, scatter, alltoall, reduce_scatter_block:
       per rank or pair; allgatherv, reduce_scatter: the average); total:
       bytes over the whole communicator (bytes * ranks, or the sum). The
       v-collectives whose counts only some ranks know select on 0. */
    size_t bytes, total;
} coll_query_t;

struct coll_call;

typedef struct coll_alg {
    int kind;
    const char *name;
    coll_build_fn build;        /* NULL: no schedule (run only) */
    unsigned props;             /* ALG_* */
    unsigned forms;             /* FORM_*: the forms selection may use it for */
    /* can it run this call at all (count vs ranks, element size)? NULL: yes */
    int (*fits)(const coll_query_t *q);
    /* ALG_SHARED: run a blocking call; 1 = ran (*rc its result), 0 = not
       here (the same answer on every member), go on as a schedule */
    int (*run)(const struct coll_call *c, int *rc);
    /* ALG_SHARED serving FORM_NONBLOCKING: start a non-blocking call; 1 =
       started (*req, or *rc an error), 0 = not here (the same on every
       member), go on as a schedule */
    int (*start)(const struct coll_call *c, struct vc_request **req, int *rc);
} coll_alg_t;

/* A blocking call as the shared-memory runners take it. */
typedef struct coll_call {
    int kind;
    struct vc_comm *comm;
    const void *sbuf;   /* may be VC_IN_PLACE */
    void *rbuf;
    size_t count;
    vc_dtype_t dt;
    vc_op_t op;
    int root;
    struct coll_comm *cc;   /* comm's collective state (comm_priv.h) */
    const struct coll_vec *v;   /* a vector call's arrays (coll.h), else NULL */
} coll_call_t;

/* the algorithms of kind, in registry order (the order of the
   VCOLL_<COLL>_ALG values: index i + 1, 0 = auto) */
int coll_algs(int kind, const coll_alg_t *const **list);
const coll_alg_t *coll_alg_find(int kind, const char *name);
/* index of a in its kind's list + 1 (0 for NULL = auto) */
int coll_alg_number(const coll_alg_t *a);
/* "auto|binomial|..." for messages */
const char *coll_alg_choices(int kind, char *buf, size_t len);
/* does a serve q: form, rank order, flat-only, fits */
int coll_alg_usable(const coll_alg_t *a, const coll_query_t *q);

/* ---- selection (select.c) ---- */
struct coll_layout;
/* the facts of a call on a communicator with layout L (its size, nodes,
   oversubscription); total_count: allgatherv's sum of counts */
void coll_query_init(coll_query_t *q, int kind, int form, const struct coll_layout *L,
                     size_t count, size_t esize, size_t total_count, int noncomm,
                     int user_op);
/* auto: the rules table in force, else the first usable algorithm */
const coll_alg_t *coll_select(const coll_query_t *q);
/* a phase of a two-level schedule (flat schedules only) */
const coll_alg_t *coll_select_flat(int kind, int size, size_t count, size_t esize,
                                   int oversub, int noncomm);

/* "barrier", "bcast", ... and back (-1: no such collective) */
const char *coll_kind_name(int kind);
int coll_kind_of(const char *name);

#endif
