/*
 * api.c -- public collective calls: validate, pick the algorithm, build (or
 * reuse) the schedule, run it.
 *
 * Small-message path cost: blocking calls reuse the last schedule built for
 * the same (kind, algorithm, count, dtype, op, root, in-place) on this
 * communicator and a per-communicator scratch buffer, so a repeated
 * allreduce does no malloc and no schedule building. Non-blocking calls own
 * a fresh schedule and scratch (several may be in flight at once).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "comm_priv.h"
#include "core/ctx.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"
#include "core/log.h"
#include "core/ops.h"

#define SCRATCH_KEEP_MAX (4u << 20)   /* larger scratch is freed after use */

/* state only, no communication (also the lazy path if core never called
   coll_comm_init); the layout comes from the job-wide node map, which every
   rank holds alike, so it needs no exchange */
static coll_comm_t *priv_alloc(struct vc_comm *c)
{
    coll_comm_t *cc = calloc(1, sizeof *cc);
    int *ids = malloc((size_t)c->size * sizeof *ids);
    if (!cc || !ids) {
        free(cc);
        free(ids);
        return NULL;
    }
    for (int r = 0; r < c->size; r++)
        ids[r] = vc_ctx.boot.node_of ? vc_ctx.boot.node_of[comm_world_rank(c, r)] : 0;
    int rc = coll_layout_build(&cc->layout, c->size, ids);
    free(ids);
    if (rc) {
        free(cc);
        return NULL;
    }
    c->coll_priv = cc;
    return cc;
}

coll_comm_t *coll_priv(struct vc_comm *c)
{
    return c->coll_priv ? c->coll_priv : priv_alloc(c);
}

int coll_comm_init(struct vc_comm *c)
{
    coll_comm_t *cc = priv_alloc(c);
    if (!cc)
        return VC_ERR_NOMEM;
    /* Algorithm choice must be the same on every rank, and nodes may differ
       (3 ranks here, 1 there): vc_init agreed on the flag without sending
       anything (a collective here would connect every rank to log p peers
       before the application addressed any) */
    cc->oversub = cc->layout.oversub = vc_ctx.any_node_oversub;
    return VC_SUCCESS;
}

/* a communicator's own node communicator goes with it (its memory stays
   in the world's list until vc_finalize, like any freed communicator) */
static void priv_free(struct vc_comm *c);
static void node_release(coll_comm_t *cc, struct vc_comm *c)
{
    if (cc->node && cc->node != c) {
        cc->node->magic = COMM_FREED;
        priv_free(cc->node);
    }
    cc->node = NULL;
}

static void priv_free(struct vc_comm *c)
{
    coll_comm_t *cc = c->coll_priv;
    if (!cc)
        return;
    node_release(cc, c);
    for (int k = 0; k < COLL_NKINDS; k++)
        sched_free(&cc->cache[k].s);
    free(cc->scratch);
    free(cc->made);
    coll_layout_free(&cc->layout);
    coll_shmseg_free(cc->seg);
    free(cc);
    c->coll_priv = NULL;
}

void coll_comm_fini(struct vc_comm *c)
{
    coll_comm_t *cc = c->coll_priv;
    if (cc && c == VC_COMM_WORLD) {
        /* the world's node communicator is in the list freed below */
        node_release(cc, c);
        for (int i = 0; i < cc->nmade; i++) {
            struct vc_comm *m = cc->made[i];
            priv_free(m);
            free(m->world);
            m->magic = COMM_FREED;
            free(m);
        }
        cc->nmade = 0;
    }
    priv_free(c);
}

/* used by comm_split.c */
int coll_comm_register(struct vc_comm *c)
{
    coll_comm_t *w = VC_COMM_WORLD->coll_priv;
    if (!w && !(w = priv_alloc(VC_COMM_WORLD)))
        return VC_ERR_NOMEM;
    if (w->nmade == w->capmade) {
        int n = w->capmade ? 2 * w->capmade : 8;
        struct vc_comm **m = realloc(w->made, (size_t)n * sizeof *m);
        if (!m)
            return VC_ERR_NOMEM;
        w->made = m;
        w->capmade = n;
    }
    w->made[w->nmade++] = c;
    return VC_SUCCESS;
}

/* comm_split.c: a freed communicator drops its caches at once */
void coll_comm_release_cache(struct vc_comm *c)
{
    priv_free(c);
}

static const char *const kind_names[COLL_NKINDS] = {
    "barrier", "bcast", "reduce", "allreduce", "allgather", "gather", "gatherv",
    "scatter", "scatterv", "allgatherv", "alltoall", "alltoallv",
    "reduce_scatter_block", "reduce_scatter", "scan", "exscan"};

const char *coll_kind_name(int kind)
{
    return kind >= 0 && kind < COLL_NKINDS ? kind_names[kind] : "?";
}

int coll_cfg_alg(int kind)
{
    const vc_config_t *cfg = &vc_ctx.cfg;
    int a = 0;
    switch (kind) {
    case COLL_BARRIER: a = cfg->barrier_alg; break;
    case COLL_BCAST: a = cfg->bcast_alg; break;
    case COLL_REDUCE: a = cfg->reduce_alg; break;
    case COLL_ALLREDUCE: a = cfg->allreduce_alg; break;
    case COLL_ALLGATHER: a = cfg->allgather_alg; break;
    case COLL_GATHER: a = cfg->gather_alg; break;
    case COLL_GATHERV: a = cfg->gatherv_alg; break;
    case COLL_SCATTER: a = cfg->scatter_alg; break;
    case COLL_SCATTERV: a = cfg->scatterv_alg; break;
    case COLL_ALLGATHERV: a = cfg->allgatherv_alg; break;
    case COLL_ALLTOALL: a = cfg->alltoall_alg; break;
    case COLL_ALLTOALLV: a = cfg->alltoallv_alg; break;
    case COLL_REDUCE_SCATTER_BLOCK: a = cfg->reduce_scatter_block_alg; break;
    case COLL_REDUCE_SCATTER: a = cfg->reduce_scatter_alg; break;
    case COLL_SCAN: a = cfg->scan_alg; break;
    case COLL_EXSCAN: a = cfg->exscan_alg; break;
    }
    return a > 0 && a < coll_nalgs(kind) ? a : 0;
}

int coll_run(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
             size_t count, vc_dtype_t dt, vc_op_t op, int root,
             struct vc_request **req)
{
    return coll_run_v(kind, comm, sbuf, rbuf, count, dt, op, root, NULL, req);
}

int coll_run_v(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
               size_t count, vc_dtype_t dt, vc_op_t op, int root,
               const coll_vec_t *v, struct vc_request **req)
{
    /* scatter(v)'s root says "in place" with rbuf; everyone else with sbuf */
    int inplace = sbuf == VC_IN_PLACE || rbuf == VC_IN_PLACE;
    size_t esize = dtype_size(dt);
    int alg = coll_cfg_alg(kind);
    const ops_user_t *ufn = NULL;
    int commutative = 1;
    coll_args_t a;
    int rc;

    if (kind == COLL_BARRIER) {
        esize = 1;
        dt = VC_BYTE;
        count = 0;
    }
    if (ops_is_user(op) && (rc = ops_lookup(op, &ufn, &commutative)))
        return rc;
    if (sbuf == VC_IN_PLACE)
        sbuf = NULL;
    if (rbuf == VC_IN_PLACE)
        rbuf = NULL;
    /* allgatherv's count is mine alone: select on the total, which every
       rank knows, so all pick the same algorithm */
    size_t sel_count = kind == COLL_ALLGATHERV && v && v->counts
                           ? coll_vec_total(v->counts, comm->size) : count;
    /* a forced algorithm that would reorder a non-commutative op gives a
       wrong answer: auto picks a rank-ordered one instead */
    if (!commutative && !coll_rank_ordered(kind, alg))
        alg = 0;
    coll_comm_t *cc = coll_priv(comm);
    if (!cc)
        return VC_ERR_NOMEM;
    if (!alg && coll_select_hier(kind, &cc->layout, sel_count * esize, !commutative))
        alg = coll_alg_index(kind, "hier");
    if (!alg)
        alg = coll_select(kind, comm->size, sel_count * esize, sel_count, cc->oversub,
                          !commutative);
    int tag = coll_next_tag(comm);

    /* vector forms read the caller's arrays while building: never cached */
    if (req || coll_kind_vector(kind)) {
        coll_sched_t s;
        coll_args_set(&a, kind, comm->rank, comm->size, root, count, dt, op, inplace);
        a.ufn = ufn;
        a.noncomm = !commutative;
        a.layout = &cc->layout;
        if (v)
            coll_args_vec(&a, kind, v->counts, v->displs, v->rcounts, v->rdispls);
        LOG_DEBUG("coll: %s%s on comm ctx %u (size %d): %s, count %zu", req ? "i" : "",
                  kind_names[kind], comm->ctx, comm->size, coll_alg_names[kind][alg], count);
        sched_init(&s, &a);
        if ((rc = coll_builders[kind][alg](&a, &s))) {
            sched_free(&s);
            return rc;
        }
        void *tmp = NULL;
        if (s.tmp_bytes && !(tmp = malloc(s.tmp_bytes))) {
            sched_free(&s);
            return VC_ERR_NOMEM;
        }
        if (req)
            return coll_exec_start(&s, (void *)sbuf, rbuf, tmp,
                                   comm, tag, req);
        void *base[COLL_NBUF] = {(void *)sbuf, rbuf, tmp};
        rc = coll_exec_blocking(&s, base, comm, tag);
        sched_free(&s);
        free(tmp);
        return rc;
    }

    /* the cache key is checked on the raw arguments: a hit costs a few
       compares, no argument struct, no building (a user op's value names
       its function and generation, so it is a key like any other) */
    coll_cache_t *ce = &cc->cache[kind];
    if (!ce->valid || ce->alg != alg || ce->count != count || ce->dt != (int)dt ||
        ce->op != (int)op || ce->root != root || ce->inplace != inplace) {
        ce->valid = 0;
        LOG_DEBUG("coll: %s on comm ctx %u (size %d): %s, count %zu",
                  kind_names[kind], comm->ctx, comm->size,
                  coll_alg_names[kind][alg], count);
        coll_args_set(&a, kind, comm->rank, comm->size, root, count, dt, op, inplace);
        a.ufn = ufn;
        a.noncomm = !commutative;
        a.layout = &cc->layout;
        sched_reset(&ce->s, &a);
        if ((rc = coll_builders[kind][alg](&a, &ce->s)))
            return rc;
        ce->valid = 1;
        ce->alg = alg;
        ce->count = count;
        ce->dt = (int)dt;
        ce->op = (int)op;
        ce->root = root;
        ce->inplace = inplace;
    }
    const coll_sched_t *s = &ce->s;
    if (s->tmp_bytes > cc->scratch_len) {
        void *t = malloc(s->tmp_bytes);
        if (!t)
            return VC_ERR_NOMEM;
        free(cc->scratch);
        cc->scratch = t;
        cc->scratch_len = s->tmp_bytes;
    }
    void *base[COLL_NBUF] = {(void *)sbuf, rbuf, cc->scratch};
    rc = coll_exec_blocking(s, base, comm, tag);
    if (cc->scratch_len > SCRATCH_KEEP_MAX) {
        free(cc->scratch);
        cc->scratch = NULL;
        cc->scratch_len = 0;
    }
    return rc;
}

/* ---- argument checking ---- */

int coll_check_buf(const void *buf, size_t count)
{
    return !buf && count ? VC_ERR_BUFFER : VC_SUCCESS;
}

int coll_check_common(vc_comm_t comm)
{
    VC_CHECK_INIT();
    return comm_check(comm) ? VC_ERR_COMM : VC_SUCCESS;
}

int coll_check_op(vc_dtype_t dt, vc_op_t op)
{
    if (!ops_is_user(op))
        return dtype_op_check(dt, op);
    if (!dtype_size(dt))
        return VC_ERR_DTYPE;
    return ops_lookup(op, NULL, NULL);
}

static int check_bcast(void *buf, size_t count, vc_dtype_t dt, int root,
                       vc_comm_t comm)
{
    size_t bytes;
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    if (root < 0 || root >= comm->size)
        return VC_ERR_RANK;
    if ((rc = dtype_bytes(dt, count, &bytes)))
        return rc;
    if (buf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    return coll_check_buf(buf, count);
}

/* shared by reduce (root >= 0) and allreduce (root = -1) */
static int check_reduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt,
                        vc_op_t op, int root, vc_comm_t comm)
{
    size_t bytes;
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    if (root != -1 && (root < 0 || root >= comm->size))
        return VC_ERR_RANK;
    if ((rc = coll_check_op(dt, op)))
        return rc;
    if ((rc = dtype_bytes(dt, count, &bytes)))
        return rc;
    int has_rbuf = root == -1 || root == comm->rank;
    if (rbuf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    if (sbuf == VC_IN_PLACE)        /* MPI: in place only where rbuf is valid */
        return has_rbuf ? coll_check_buf(rbuf, count) : VC_ERR_BUFFER;
    if ((rc = coll_check_buf(sbuf, count)))
        return rc;
    return has_rbuf ? coll_check_buf(rbuf, count) : VC_SUCCESS;
}

/* the flag variants apply only when the user left the algorithm on auto */
static coll_comm_t *shm_variant(struct vc_comm *comm, int kind, size_t bytes)
{
    if (coll_cfg_alg(kind) || !comm->coll_priv || !coll_shm_eligible(comm, bytes))
        return NULL;
    return comm->coll_priv;
}

int vc_barrier(vc_comm_t comm)
{
    VC_API_ENTER();
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    coll_comm_t *cc = shm_variant(comm, COLL_BARRIER, 0);
    if (cc)
        return coll_shm_barrier(&cc->shm_seq);
    if (coll_shm_run(COLL_BARRIER, comm, NULL, NULL, 0, VC_BYTE, VC_SUM, 0, &rc))
        return rc;
    return coll_run(COLL_BARRIER, comm, NULL, NULL, 0, VC_BYTE, VC_SUM, 0, NULL);
}

int vc_ibarrier(vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    return coll_run(COLL_BARRIER, comm, NULL, NULL, 0, VC_BYTE, VC_SUM, 0, req);
}

int vc_bcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm)
{
    VC_API_ENTER();
    int rc = check_bcast(buf, count, dtype, root, comm);
    if (rc || coll_shm_run(COLL_BCAST, comm, NULL, buf, count, dtype, VC_SUM, root, &rc))
        return rc;
    return coll_run(COLL_BCAST, comm, NULL, buf, count, dtype, VC_SUM, root, NULL);
}

int vc_ibcast(void *buf, size_t count, vc_dtype_t dtype, int root, vc_comm_t comm,
              vc_request_t *req)
{
    VC_API_ENTER();
    int rc = check_bcast(buf, count, dtype, root, comm);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    return coll_run(COLL_BCAST, comm, NULL, buf, count, dtype, VC_SUM, root, req);
}

int vc_reduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
              vc_op_t op, int root, vc_comm_t comm)
{
    VC_API_ENTER();
    int rc = check_reduce(sbuf, rbuf, count, dtype, op, root, comm);
    if (rc)
        return rc;
    if (comm->rank == root && sbuf == rbuf)   /* same buffer: treat as in place */
        sbuf = VC_IN_PLACE;
    if (coll_shm_run(COLL_REDUCE, comm, sbuf, comm->rank == root ? rbuf : NULL, count, dtype,
                     op, root, &rc))
        return rc;
    return coll_run(COLL_REDUCE, comm, sbuf, comm->rank == root ? rbuf : NULL,
                    count, dtype, op, root, NULL);
}

int vc_ireduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
               vc_op_t op, int root, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    int rc = check_reduce(sbuf, rbuf, count, dtype, op, root, comm);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    if (comm->rank == root && sbuf == rbuf)
        sbuf = VC_IN_PLACE;
    return coll_run(COLL_REDUCE, comm, sbuf, comm->rank == root ? rbuf : NULL,
                    count, dtype, op, root, req);
}

int vc_allreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_op_t op, vc_comm_t comm)
{
    VC_API_ENTER();
    int rc = check_reduce(sbuf, rbuf, count, dtype, op, -1, comm);
    if (rc)
        return rc;
    if (sbuf == rbuf)
        sbuf = VC_IN_PLACE;
    /* the flag variant reduces with the built-in kernels only */
    coll_comm_t *cc = ops_is_user(op) ? NULL
                      : shm_variant(comm, COLL_ALLREDUCE, count * dtype_size(dtype));
    if (cc)
        return coll_shm_allreduce(sbuf, rbuf, count, dtype, op, &cc->shm_seq);
    if (coll_shm_run(COLL_ALLREDUCE, comm, sbuf, rbuf, count, dtype, op, 0, &rc))
        return rc;
    return coll_run(COLL_ALLREDUCE, comm, sbuf, rbuf, count, dtype, op, 0, NULL);
}

int vc_iallreduce(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                  vc_op_t op, vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    int rc = check_reduce(sbuf, rbuf, count, dtype, op, -1, comm);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    if (sbuf == rbuf)
        sbuf = VC_IN_PLACE;
    return coll_run(COLL_ALLREDUCE, comm, sbuf, rbuf, count, dtype, op, 0, req);
}

static int check_allgather(const void **sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                           vc_comm_t comm)
{
    size_t bytes, total;
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    if ((rc = dtype_bytes(dtype, count, &bytes)))
        return rc;
    /* the receive buffer holds size blocks */
    if ((rc = dtype_bytes(dtype, count * (size_t)comm->size, &total)) ||
        (count && count * (size_t)comm->size / (size_t)comm->size != count))
        return rc ? rc : VC_ERR_COUNT;
    if (rbuf == VC_IN_PLACE)
        return VC_ERR_BUFFER;
    if ((rc = coll_check_buf(rbuf, count)))
        return rc;
    if (*sbuf != VC_IN_PLACE && (rc = coll_check_buf(*sbuf, count)))
        return rc;
    if (*sbuf == (const char *)rbuf + (size_t)comm->rank * bytes && count)
        *sbuf = VC_IN_PLACE;
    return VC_SUCCESS;
}

int vc_allgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                 vc_comm_t comm)
{
    VC_API_ENTER();
    int rc = check_allgather(&sbuf, rbuf, count, dtype, comm);
    if (rc || coll_shm_run(COLL_ALLGATHER, comm, sbuf, rbuf, count, dtype, VC_SUM, 0, &rc))
        return rc;
    return coll_run(COLL_ALLGATHER, comm, sbuf, rbuf, count, dtype, VC_SUM, 0, NULL);
}

int vc_iallgather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype,
                  vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    int rc = check_allgather(&sbuf, rbuf, count, dtype, comm);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    return coll_run(COLL_ALLGATHER, comm, sbuf, rbuf, count, dtype, VC_SUM, 0, req);
}
