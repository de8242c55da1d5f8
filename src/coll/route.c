/*
 * route.c -- one route for every collective call and form (the API has
 * validated it: src/api/coll*.c): the facts of the call, one decision
 * (select.c, registry.c), and either the shared-memory runner the
 * algorithm has (blocking calls) or its schedule, built (or reused) and
 * run. Also the per-communicator state the route keeps.
 *
 * Small-message path cost: blocking calls reuse the last schedule built for
 * the same (kind, algorithm, count, dtype, op, root, in-place and, for the
 * vector forms, the contents of the count and displacement arrays) on this
 * communicator and a per-communicator scratch buffer, so a repeated
 * allreduce or gatherv does no malloc and no schedule building. Non-blocking calls own
 * a fresh schedule and scratch (several may be in flight at once);
 * persistent ones (vc_<name>_init) too, built once here and kept by the
 * request for every start (exec.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "comm_priv.h"
#include "graph.h"
#include "rules.h"
#include "shm_run.h"
#include "boot/boot.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"
#include "core/log.h"
#include "core/ops.h"

#define SCRATCH_KEEP_MAX (4u << 20)   /* larger scratch is freed after use */

/* state only, no communication (also the lazy path if core never called
   coll_comm_init); the layout comes from the job-wide node map, which every
   rank holds alike, so it needs no exchange */
coll_comm_t *coll_priv_alloc(struct vc_comm *c)
{
    coll_comm_t *cc = calloc(1, sizeof *cc);
    int *ids = malloc((size_t)c->size * sizeof *ids);
    if (!cc || !ids) {
        free(cc);
        free(ids);
        return NULL;
    }
    const int *node_of = c->coll->boot->node_of;
    for (int r = 0; r < c->size; r++)
        ids[r] = node_of ? node_of[comm_world_rank(c, r)] : 0;
    int rc = coll_layout_build(&cc->layout, c->size, ids);
    free(ids);
    if (rc) {
        free(cc);
        return NULL;
    }
    for (int k = 0; k < COLL_NKINDS; k++)
        cc->forced[k] = coll_cfg_forced(c->coll, k);
    c->coll_priv = cc;
    return cc;
}

int coll_comm_init(struct vc_comm *c)
{
    coll_comm_t *cc = coll_priv_alloc(c);
    if (!cc)
        return VC_ERR_NOMEM;
    /* Algorithm choice must be the same on every rank, and nodes may differ
       (3 ranks here, 1 there): vc_init agreed on the flag without sending
       anything (a collective here would connect every rank to log p peers
       before the application addressed any) */
    cc->layout.oversub = c->coll->any_node_oversub;
    cc->layout.pull = c->coll->node_pull;
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
    for (int k = 0; k < COLL_NKINDS; k++) {
        sched_free(&cc->cache[k].s);
        free(cc->cache[k].vkey);
    }
    free(cc->scratch);
    coll_layout_free(&cc->layout);
    coll_shmseg_free(cc->seg);
    coll_graph_free(cc->graph);
    free(cc);
    c->coll_priv = NULL;
}

void coll_comm_fini(struct vc_comm *c)
{
    coll_comm_t *cc = c->coll_priv;
    coll_state_t *cs = c->coll;
    if (c->ctx == 0) {      /* the world: every communicator made goes too */
        /* and every persistent request the user did not free (MPI says
           the user frees them; a leak check stays clean either way) */
        coll_exec_free_kept(cs);
        /* the world's node communicator is in the list freed below */
        if (cc)
            node_release(cc, c);
        for (int i = 0; i < cs->nmade; i++) {
            struct vc_comm *m = cs->made[i];
            priv_free(m);
            free(m->world);
            m->magic = COMM_FREED;
            free(m);
        }
        free(cs->made);
        cs->made = NULL;
        cs->nmade = cs->capmade = 0;
    }
    priv_free(c);
}

/* used by comm_split.c */
int coll_comm_register(struct vc_comm *c)
{
    coll_state_t *w = c->coll;
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

/* VCOLL_<COLL>_ALG, checked at vc_init (coll_setup), as a descriptor */
const coll_alg_t *coll_cfg_forced(const coll_state_t *cs, int kind)
{
    const char *name = kind < CFG_NCOLL && cs->coll_alg ? cs->coll_alg[kind] : "auto";
    return strcmp(name, "auto") ? coll_alg_find(kind, name) : NULL;
}

const coll_alg_t *coll_choose(coll_comm_t *cc, const coll_query_t *q)
{
    const coll_alg_t *f = cc->forced[q->kind], *a = f;
    /* a forced algorithm that cannot serve the call (a non-commutative op
       it would reorder, a form it has no schedule for, shared memory that
       declined) gives way to auto, as on every member */
    if (!coll_alg_usable(f, q))
        a = coll_select(q);
    if (f && a != f)
        LOG_DEBUG("coll: %s forced to %s, which cannot serve this call: %s instead",
                  coll_kind_name(q->kind), f->name, a ? a->name : "none");
    return a;
}

/* the query of a call on comm; flags_ok asks the node's slots */
static void query(coll_query_t *q, int kind, int form, struct vc_comm *comm,
                  const coll_comm_t *cc, size_t count, size_t esize, size_t tcount,
                  int noncomm, int user_op)
{
    coll_query_init(q, kind, form, &cc->layout, count, esize, tcount, noncomm, user_op);
    q->flags_ok =
        coll_shm_eligible(comm, coll_flags_need(kind, q->bytes, q->total, comm->size));
}

int coll_run(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
             size_t count, vc_dtype_t dt, vc_op_t op, int root,
             struct vc_request **req)
{
    return coll_run_v(kind, comm, sbuf, rbuf, count, dt, op, root, NULL, req);
}

/* A vector call's arrays: counts and displs have one entry per destination
   (the communicator's size, a neighbourhood's out-degree), rcounts and
   rdispls one per source. */
static unsigned vec_arrays(int kind, const struct vc_comm *comm, const coll_comm_t *cc,
                           const coll_vec_t *v, const size_t *arr[4], size_t len[4])
{
    int nbr = coll_kind_neighbor(kind) && cc->graph;
    size_t out = nbr ? (size_t)cc->graph->outdeg : (size_t)comm->size;
    size_t in = nbr ? (size_t)cc->graph->indeg : (size_t)comm->size;
    arr[0] = v ? v->counts : NULL;
    arr[1] = v ? v->displs : NULL;
    arr[2] = v ? v->rcounts : NULL;
    arr[3] = v ? v->rdispls : NULL;
    len[0] = len[1] = out;
    len[2] = len[3] = in;
    unsigned mask = 0;
    for (int i = 0; i < 4; i++)
        if (arr[i])
            mask |= 1u << i;
    return mask;
}

/* the arrays are those the cached schedule was built from */
static int vec_match(const coll_cache_t *ce, const size_t *const arr[4], const size_t len[4],
                     unsigned mask)
{
    if (ce->vmask != mask)
        return 0;
    const size_t *k = ce->vkey;
    for (int i = 0; i < 4; i++) {
        if (!arr[i])
            continue;
        if (memcmp(k, arr[i], len[i] * sizeof *k))
            return 0;
        k += len[i];
    }
    return 1;
}

static int vec_keep(coll_cache_t *ce, const size_t *const arr[4], const size_t len[4],
                    unsigned mask)
{
    size_t n = 0;
    for (int i = 0; i < 4; i++)
        n += arr[i] ? len[i] : 0;
    if (n > ce->vkey_cap) {
        size_t *k = realloc(ce->vkey, n * sizeof *k);
        if (!k)
            return VC_ERR_NOMEM;
        ce->vkey = k;
        ce->vkey_cap = n;
    }
    size_t *k = ce->vkey;
    for (int i = 0; i < 4; i++)
        if (arr[i]) {
            memcpy(k, arr[i], len[i] * sizeof *k);
            k += len[i];
        }
    ce->vmask = mask;
    return VC_SUCCESS;
}

/* shared: the shared-memory algorithms may run it. The library's own
   collectives while it sets one of them up (a communicator split, a
   segment's creation) must not: they would re-enter the setup. */
static int route(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf, size_t count,
                 vc_dtype_t dt, vc_op_t op, int root, const coll_vec_t *v,
                 struct vc_request **req, int form, int shared)
{
    /* scatter(v)'s root says "in place" with rbuf; everyone else with sbuf */
    int inplace = sbuf == VC_IN_PLACE || rbuf == VC_IN_PLACE;
    size_t esize = dtype_size(dt);
    const ops_user_t *ufn = NULL;
    int commutative = 1;
    coll_args_t a;
    int rc;

    if (kind == COLL_BARRIER) {
        esize = 1;
        dt = VC_BYTE;
        count = 0;
    }
    if (ops_is_user(op) && (rc = ops_lookup(comm->coll->ops, op, &ufn, &commutative)))
        return rc;
    if (count == 0 && kind != COLL_BARRIER && form == FORM_BLOCKING &&
        !coll_kind_vector(kind) && kind < COLL_NKINDS_FLAT)
        /* nothing to move on any member (these kinds' counts agree between
           members by contract), and MPI asks no collective but the barrier
           to synchronise: done, on every member alike, after the checks,
           without the memo, the selection or a segment's sequence word */
        return VC_SUCCESS;
    coll_comm_t *cc = coll_priv(comm);
    if (!cc)
        return VC_ERR_NOMEM;
    /* one decision from facts every member holds alike: allgatherv's
       count is mine alone, so it selects on the total; reduce_scatter's
       count is the average block (the API's), rounded down, so its exact
       total, which sizes its line in the flag slots, comes from the
       counts too */
    int user = ops_is_user(op);
    int by_total = kind == COLL_ALLGATHERV || kind == COLL_REDUCE_SCATTER;
    size_t tcount =
        by_total && v && v->counts ? coll_vec_total(v->counts, comm->size) : count;
    coll_memo_t *m = &cc->memo[kind][form >> 1];     /* 1, 2, 4 -> 0, 1, 2 */
    const coll_alg_t *alg = m->alg;
    coll_query_t q;
    if (!shared || !alg || m->count != count || m->esize != esize || m->tcount != tcount ||
        m->user_op != user || m->noncomm != !commutative) {
        query(&q, kind, form, comm, cc, count, esize, tcount, !commutative, user);
        q.no_shared = !shared;
        alg = coll_choose(cc, &q);
        if (shared)
            *m = (coll_memo_t){count, esize, tcount, user, !commutative, alg};
    }
    if (alg && (alg->props & ALG_SHARED)) {
        coll_call_t call = {kind, comm, sbuf, rbuf, count, dt, op, root, cc, v};
        if (form == FORM_BLOCKING ? alg->run(&call, &rc) : alg->start(&call, req, &rc))
            return rc;
        /* declined (no segment here), on every member alike */
        query(&q, kind, form, comm, cc, count, esize, tcount, !commutative, user);
        q.no_shared = 1;
        alg = coll_choose(cc, &q);
    }
    if (!alg)
        return VC_ERR_INTERNAL;     /* every collective has an algorithm for any call */
    /* A persistent barrier or allreduce that a blocking call would run
       through shared memory does so too, on resources of its own: a small
       one through a slot set of the node's flag slots when one is free on
       every rank (agreed in coll_flags_pset_take), a larger allreduce of
       a one-node communicator through a segment made now (within half of
       VCOLL_SHM_COLL_MAX; agreed in its creation, else messages). The
       same facts on every member, so the same choice. */
    if (form == FORM_PERSISTENT && (kind == COLL_BARRIER || kind == COLL_ALLREDUCE)) {
        coll_query_t qb;
        query(&qb, kind, FORM_BLOCKING, comm, cc, count, esize, tcount, !commutative, user);
        const coll_alg_t *b = coll_choose(cc, &qb);
        int set = -1;
        uint64_t starts = 0;
        if (b && b->run == coll_flags_run &&
            (rc = coll_flags_pset_take(comm, count * esize, &set, &starts)))
            return rc;
        if (set > 0) {
            LOG_DEBUG("coll: %s_init on comm ctx %u (size %d): flags, slot set %d",
                      coll_kind_name(kind), comm->ctx, comm->size, set);
            rc = coll_exec_flags_init(kind, comm, sbuf, rbuf, count, dt, op, set, starts,
                                      coll_next_persistent_tag(comm), req);
            if (rc)
                coll_flags_pset_give(comm, set, starts);
            return rc;
        }
        /* (eligible: every member on my node) */
        if (kind == COLL_ALLREDUCE && count && b && b->run == coll_shm_run &&
            coll_shmseg_eligible(comm)) {
            /* half the node's budget at most: a program that makes many
               must not leave its communicators' own segments no room */
            struct coll_shmseg *g;
            if ((rc = coll_shmseg_create_within(comm, comm->coll->shm_coll_max / 2, &g)))
                return rc;
            if (g) {
                LOG_DEBUG("coll: allreduce_init on comm ctx %u (size %d): shm, a segment "
                          "of its own, count %zu", comm->ctx, comm->size, count);
                rc = coll_exec_seg_init(comm, g, sbuf, rbuf, count, dt, op, ufn,
                                        coll_next_persistent_tag(comm), req);
                if (rc)
                    coll_shmseg_free(g);
                return rc;
            }
        }
    }
    if (sbuf == VC_IN_PLACE)
        sbuf = NULL;
    if (rbuf == VC_IN_PLACE)
        rbuf = NULL;
    int tag = form == FORM_PERSISTENT ? coll_next_persistent_tag(comm) : coll_next_tag(comm);

    if (form != FORM_BLOCKING) {
        coll_sched_t s;
        coll_args_set(&a, kind, comm->rank, comm->size, root, count, dt, op, inplace);
        a.ufn = ufn;
        a.noncomm = !commutative;
        a.layout = &cc->layout;
        a.graph = cc->graph;
        if (v)
            coll_args_vec(&a, kind, v->counts, v->displs, v->rcounts, v->rdispls);
        LOG_DEBUG("coll: %s%s%s on comm ctx %u (size %d): %s, count %zu",
                  form == FORM_NONBLOCKING ? "i" : "", coll_kind_name(kind),
                  form == FORM_PERSISTENT ? "_init" : "", comm->ctx, comm->size, alg->name,
                  count);
        sched_init(&s, &a);
        if ((rc = alg->build(&a, &s))) {
            sched_free(&s);
            return rc;
        }
        void *tmp = NULL;
        if (s.tmp_bytes && !(tmp = malloc(s.tmp_bytes))) {
            sched_free(&s);
            return VC_ERR_NOMEM;
        }
        if (form == FORM_PERSISTENT)
            return coll_exec_init(&s, (void *)sbuf, rbuf, tmp, comm, tag, req);
        if (form == FORM_NONBLOCKING)
            return coll_exec_start(&s, (void *)sbuf, rbuf, tmp, comm, tag, req);
        void *base[COLL_NBUF] = {(void *)sbuf, rbuf, tmp};
        rc = coll_exec_blocking(&s, base, comm, tag);
        sched_free(&s);
        free(tmp);
        return rc;
    }

    /* the cache key is checked on the raw arguments: a hit costs a few
       compares, no argument struct, no building (a user op's value names
       its function and generation, so it is a key like any other). A
       vector form's schedule was built from the arrays' contents, so they
       are part of the key: a memcmp of what building reads anyway. */
    coll_cache_t *ce = &cc->cache[kind];
    const size_t *arr[4];
    size_t len[4];
    unsigned vmask = 0;
    int vec = coll_kind_vector(kind);
    if (vec)
        vmask = vec_arrays(kind, comm, cc, v, arr, len);
    if (!ce->valid || ce->alg != alg || ce->count != count || ce->dt != (int)dt ||
        ce->op != (int)op || ce->root != root || ce->inplace != inplace ||
        (vec && !vec_match(ce, arr, len, vmask))) {
        ce->valid = 0;
        LOG_DEBUG("coll: %s on comm ctx %u (size %d): %s, count %zu",
                  coll_kind_name(kind), comm->ctx, comm->size, alg->name, count);
        coll_args_set(&a, kind, comm->rank, comm->size, root, count, dt, op, inplace);
        a.ufn = ufn;
        a.noncomm = !commutative;
        a.layout = &cc->layout;
        a.graph = cc->graph;
        if (v)
            coll_args_vec(&a, kind, v->counts, v->displs, v->rcounts, v->rdispls);
        sched_reset(&ce->s, &a);
        if ((rc = alg->build(&a, &ce->s)) || (vec && (rc = vec_keep(ce, arr, len, vmask))))
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

/* ---- selection for the API: which algorithm a call would take, and
   forcing one on a communicator (vc_coll_which, vc_coll_set_alg) ---- */

int coll_which(struct vc_comm *comm, int kind, size_t count, size_t esize, const char **name)
{
    coll_comm_t *cc = coll_priv(comm);
    if (!cc)
        return VC_ERR_NOMEM;
    coll_query_t q;
    query(&q, kind, FORM_BLOCKING, comm, cc, kind == COLL_BARRIER ? 0 : count, esize,
          count * (size_t)comm->size, 0, 0);
    const coll_alg_t *a = coll_choose(cc, &q);
    *name = a ? a->name : "none";
    return VC_SUCCESS;
}

int coll_set_alg(struct vc_comm *comm, const char *collective, const char *algorithm)
{
    int kind = coll_kind_of(collective);
    const coll_alg_t *a = kind >= 0 ? coll_alg_find(kind, algorithm) : NULL;
    int bad = kind < 0 || (!a && strcmp(algorithm, "auto"));
    /* every member must force the same, or the members would run
       different schedules: agree first, then change on all or none */
    uint64_t h = coll_hash_str(coll_hash_str(0, collective ? collective : ""), algorithm);
    uint64_t mine[3] = {h, ~h, (uint64_t)bad}, all[3];
    int rc = coll_run(COLL_ALLREDUCE, comm, mine, all, 3, VC_UINT64, VC_MAX, 0, NULL);
    if (rc)
        return rc;
    if (all[2] || all[0] != ~all[1])
        return VC_ERR_ARG;
    coll_comm_t *cc = coll_priv(comm);
    if (!cc)
        return VC_ERR_NOMEM;
    cc->forced[kind] = a;
    memset(cc->memo[kind], 0, sizeof cc->memo[kind]);
    return VC_SUCCESS;
}

int coll_run_v(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
               size_t count, vc_dtype_t dt, vc_op_t op, int root,
               const coll_vec_t *v, struct vc_request **req)
{
    return route(kind, comm, sbuf, rbuf, count, dt, op, root, v, req,
                 req ? FORM_NONBLOCKING : FORM_BLOCKING, 1);
}

int coll_run_form(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
                  size_t count, vc_dtype_t dt, vc_op_t op, int root,
                  const coll_vec_t *v, struct vc_request **req, int form)
{
    return route(kind, comm, sbuf, rbuf, count, dt, op, root, v,
                 form == FORM_BLOCKING ? NULL : req, form, 1);
}

int coll_run_msgs(int kind, struct vc_comm *comm, const void *sbuf, void *rbuf,
                  size_t count, vc_dtype_t dt, vc_op_t op, int root)
{
    return route(kind, comm, sbuf, rbuf, count, dt, op, root, NULL, NULL, FORM_BLOCKING, 0);
}

