/*
 * comm_priv.h -- the collective layer's per-communicator state (behind
 * vc_comm.coll_priv), shared by api.c and the segment collectives'
 * dispatch (shm_node.c).
 */
#ifndef VC_COLL_COMM_PRIV_H
#define VC_COLL_COMM_PRIV_H

#include "coll.h"
#include "layout.h"
#include "registry.h"

typedef struct coll_cache {
    int valid, dt, op, root, inplace;
    const coll_alg_t *alg;
    size_t count;
    /* a vector call's arrays as they were when s was built (a copy: the
       caller may change its own between calls); vmask: which were given */
    size_t *vkey, vkey_cap;
    unsigned vmask;
    coll_sched_t s;
} coll_cache_t;

/* the last choice per collective and form, keyed by what of a call can
   change it on this communicator (the rest of the query is the
   communicator's): a repeated call costs a few compares, no query and no
   walk of the rules */
typedef struct coll_memo {
    size_t count, esize, tcount;
    int user_op, noncomm;
    const coll_alg_t *alg;      /* NULL: nothing remembered */
} coll_memo_t;

typedef struct coll_comm {
    coll_cache_t cache[COLL_NKINDS];
    /* VCOLL_<COLL>_ALG or vc_coll_set_alg (agreed by all members); NULL = auto */
    const coll_alg_t *forced[COLL_NKINDS];
    coll_memo_t memo[COLL_NKINDS][3];    /* by form: blocking, non-blocking, persistent */
    void *scratch;
    size_t scratch_len;
    uint64_t shm_seq;   /* calls of the shared-memory flag variants */
    uint64_t flags_seen;    /* the last of those that I know every rank has
                               started (its line is there, or its message of
                               that call came): shm_flags.c */
    /* the non-blocking calls through the flag slots (shm_flags_nb.c):
       started so far, the last whose lines every rank has published, and
       the unfinished ones in issue order (list_init'ed on first use) */
    uint64_t nb_seq, nb_seen;
    list_t nbf_q;
    uint64_t nb_calls;          /* of them, for the tests */
    coll_layout_t layout;   /* which members share a node (hier algorithms) */
    struct coll_shmseg *seg;    /* segment collectives (shm_seg.h), members on one node */
    int seg_state;              /* 0 not tried yet, 1 seg ready, -1 not here */
    /* the segment algorithms on a communicator over several nodes: my
       node's members as a communicator of their own (made on first use,
       released with this one) */
    struct vc_comm *node;
    int node_state;             /* 0 not made yet, 1 made, -1 failed */
    uint64_t seg_calls[COLL_NKINDS];  /* calls that ran through a segment
                                         or the node's slots (gather/scatter(v),
                                         allgather(v), reduce_scatter(_block)
                                         flags) */
    size_t seg_logged[COLL_NKINDS];   /* count + 1 of the last one logged */
    struct coll_graph *graph;   /* neighbour graph (graph.h), or NULL */
} coll_comm_t;

/* the state of c, made on first use (no communication); inline because
   every call asks */
coll_comm_t *coll_priv_alloc(struct vc_comm *c);
static inline coll_comm_t *coll_priv(struct vc_comm *c)
{
    return c->coll_priv ? (coll_comm_t *)c->coll_priv : coll_priv_alloc(c);
}
/* VCOLL_<COLL>_ALG as a descriptor (NULL = auto): each communicator's start */
const coll_alg_t *coll_cfg_forced(const coll_state_t *cs, int kind);
/* the algorithm for a call: forced if usable, else the rules */
const coll_alg_t *coll_choose(coll_comm_t *cc, const coll_query_t *q);
/* used by comm_split.c */
int coll_comm_register(struct vc_comm *c);
void coll_comm_release_cache(struct vc_comm *c);
/* the members of comm on my node as a communicator (comm_split.c);
   collective over comm */
int coll_comm_node(struct vc_comm *comm, const coll_layout_t *L, struct vc_comm **out);

#endif
