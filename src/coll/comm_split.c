/*
 * comm_split.c -- communicator dup, split and free (the API validates
 * and locks; src/api/comm.c), and the agreement on a new communicator's
 * context id they share with comm_create_group.c.
 *
 * Context ids: every process keeps next_ctx (coll_state_t) (even; all ids below it
 * are in use or retired locally). Creating a communicator takes the maximum
 * over the parent of each member's lowest free id, so the id is free on
 * every member; everyone in the parent then moves next_ctx past it. Ids only
 * need to be unique per process, which is what matching looks at, so
 * disjoint groups from one split may share an id. ctx carries point-to-point
 * traffic, ctx+1 the collectives.
 *
 * Under VC_THREAD_MULTIPLE two threads may create communicators at once
 * (from different parents, or groups from one parent with two tags), and
 * both agreements can end on the same id (each waits with the lock
 * released). So the agreed id is checked: every member says whether it is
 * still free for it and holds it (ctx_resv) until a second round (an
 * allreduce; a group's linear exchange) has heard everyone; if anyone said
 * no, all retry above it. Always two rounds, whatever the thread level,
 * since members of one parent may have been granted different levels.
 *
 * Freed communicators are kept as tombstones (magic COMM_FREED) until
 * vc_finalize, so a stale handle gives VC_ERR_COMM instead of reading freed
 * memory, and a non-blocking operation still in flight keeps a valid rank
 * map.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "comm_priv.h"
#include "graph.h"

/* also used by comm_create_group.c; takes ownership of world on success */
int coll_make_comm(const struct vc_comm *parent, uint32_t ctx, int rank, int size, int *world,
                   struct vc_comm **out)
{
    struct vc_comm *c = calloc(1, sizeof *c);
    int rc;
    if (!c)
        return VC_ERR_NOMEM;
    c->magic = COMM_MAGIC;
    c->p2p = parent->p2p;
    c->coll = parent->coll;
    c->ctx = ctx;
    c->rank = rank;
    c->size = size;
    c->world = world;
    if ((rc = coll_comm_init(c)) || (rc = coll_comm_register(c))) {
        coll_comm_release_cache(c);
        free(c);
        return rc;
    }
    *out = c;
    return VC_SUCCESS;
}

struct ctx_resv {
    uint32_t id;
    struct ctx_resv *next;
};

static int ctx_held(const coll_state_t *cs, uint32_t id)
{
    for (const struct ctx_resv *r = cs->ctx_resv; r; r = r->next)
        if (r->id == id)
            return 1;
    return 0;
}

/* Agree on a context id free on every member: reduce() takes my value and
   VC_MAX or VC_MIN and gives the members' maximum or minimum (an allreduce
   over the parent here, a linear exchange over a group in
   comm_create_group.c).
   key: the same on every member and, but for a rare hash collision,
   different between two creations a process may run at once (the
   parent's id; mixed with create_group's tag).
   Two creations that each held the candidate first on a different process
   both fail; retrying both from cand + 2 would meet again, and again if
   the same process keeps getting there first (a group's exchange has its
   first listed rank finish each round first), so each retries a stride of
   its own further on. */
int coll_ctx_agree(coll_ctx_reduce_fn reduce, void *arg, coll_state_t *cs, uint32_t key,
                   uint32_t *out)
{
    uint32_t from = 0;
    for (uint32_t tries = 1;; tries++) {
        uint32_t mine = from > cs->next_ctx ? from : cs->next_ctx, cand, all;
        while (ctx_held(cs, mine))
            mine += 2;
        int rc = reduce(arg, mine, VC_MAX, &cand);
        if (rc)
            return rc;
        /* the reduction let other threads in: cand may be taken by now */
        uint32_t ok = cand >= cs->next_ctx && !ctx_held(cs, cand);
        struct ctx_resv hold = {cand, cs->ctx_resv};
        if (ok)
            cs->ctx_resv = &hold;
        rc = reduce(arg, ok, VC_MIN, &all);
        if (ok) {   /* unlink: other threads may have pushed above it */
            struct ctx_resv **pp = &cs->ctx_resv;
            while (*pp != &hold)
                pp = &(*pp)->next;
            *pp = hold.next;
        }
        if (rc)
            return rc;
        if (all) {
            if (cand + 2 > cs->next_ctx)
                cs->next_ctx = cand + 2;
            *out = cand;
            return VC_SUCCESS;
        }
        from = cand + 2 * (1 + (uint32_t)((key + 1) * 2654435761u * tries) % 61);
    }
}

static int allreduce_u32(void *comm, uint32_t in, vc_op_t op, uint32_t *out)
{
    return coll_run_msgs(COLL_ALLREDUCE, comm, &in, out, 1, VC_UINT32, op, 0);
}

static int ctx_agree(struct vc_comm *comm, uint32_t *out)
{
    /* (two dups or splits of one parent never run at once: MPI's rule) */
    return coll_ctx_agree(allreduce_u32, comm, comm->coll, comm->ctx, out);
}

int coll_comm_dup(struct vc_comm *comm, struct vc_comm **newcomm)
{
    uint32_t ctx;
    int rc = ctx_agree(comm, &ctx);
    if (rc)
        return rc;

    int *world = NULL;
    if (comm->world) {
        world = malloc((size_t)comm->size * sizeof *world);
        if (!world)
            return VC_ERR_NOMEM;
        memcpy(world, comm->world, (size_t)comm->size * sizeof *world);
    }
    rc = coll_make_comm(comm, ctx, comm->rank, comm->size, world, newcomm);
    if (rc) {
        free(world);
        return rc;
    }
    /* a duplicate keeps the topology, as MPI_Comm_dup does */
    const coll_graph_t *g = comm->coll_priv ? ((coll_comm_t *)comm->coll_priv)->graph : NULL;
    return g ? coll_graph_copy(*newcomm, g) : VC_SUCCESS;
}

/* Like a split by node with key = rank, but from the layout every member
   already holds: no allgather, only the context agreement. */
int coll_comm_node(struct vc_comm *comm, const coll_layout_t *L, struct vc_comm **out)
{
    uint32_t ctx;
    int rc = ctx_agree(comm, &ctx);
    if (rc)
        return rc;
    int node = L->node[comm->rank], n = coll_layout_ppn(L, node);
    const int *mates = &L->members[L->start[node]];
    int *world = malloc((size_t)n * sizeof *world);
    if (!world)
        return VC_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        world[i] = comm_world_rank(comm, mates[i]);
    rc = coll_make_comm(comm, ctx, L->local[comm->rank], n, world, out);
    if (rc)
        free(world);
    return rc;
}

typedef struct { int32_t color, key; } split_ent_t;

int coll_comm_split(struct vc_comm *comm, int color, int key, struct vc_comm **newcomm)
{
    int p = comm->size;
    split_ent_t me = {color, key};
    split_ent_t *all = malloc((size_t)p * sizeof *all);
    coll_key_rank_t *mem = malloc((size_t)p * sizeof *mem);
    uint32_t ctx;
    int rc = VC_ERR_NOMEM;
    if (!all || !mem)
        goto out;
    /* one id for every group of the split: they are disjoint */
    if ((rc = ctx_agree(comm, &ctx)))
        goto out;
    /* one allgather carries colors and keys: 2 x 32 bits */
    rc = coll_run_msgs(COLL_ALLGATHER, comm, &me, all, 2, VC_UINT32, VC_SUM, 0);
    if (rc)
        goto out;

    int bad = 0, n = 0, myrank = -1;
    for (int i = 0; i < p; i++)
        if (all[i].color < 0 && all[i].color != VC_UNDEFINED)
            bad = 1;
    /* every rank saw every color, so a bad one fails the call everywhere
       alike and nobody is left waiting */
    if (bad) {
        rc = VC_ERR_ARG;
        goto out;
    }
    if (color == VC_UNDEFINED) {
        rc = VC_SUCCESS;
        goto out;
    }
    for (int i = 0; i < p; i++)
        if (all[i].color == color) {
            mem[n].key = all[i].key;
            mem[n].rank = i;
            n++;
        }
    qsort(mem, (size_t)n, sizeof *mem, coll_key_rank_cmp);
    int *world = malloc((size_t)n * sizeof *world);
    if (!world) {
        rc = VC_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        world[i] = comm_world_rank(comm, mem[i].rank);
        if (mem[i].rank == comm->rank)
            myrank = i;
    }
    rc = coll_make_comm(comm, ctx, myrank, n, world, newcomm);
    if (rc)
        free(world);
out:
    free(all);
    free(mem);
    return rc;
}

void coll_comm_free(struct vc_comm *comm)
{
    comm->magic = COMM_FREED;
    coll_comm_release_cache(comm);
}
