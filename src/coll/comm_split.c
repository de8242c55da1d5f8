/*
 * comm_split.c -- vc_comm_dup, vc_comm_split, vc_comm_free.
 *
 * Context ids: every process keeps vc_ctx.next_ctx (even; all ids below it
 * are in use or retired locally). Creating a communicator takes the maximum
 * of next_ctx over the parent, so the id is free on every member; everyone
 * in the parent then moves next_ctx past it. Ids only need to be unique per
 * process, which is what matching looks at, so disjoint groups from one
 * split may share an id. ctx carries point-to-point traffic, ctx+1 the
 * collectives.
 *
 * Freed communicators are kept as tombstones (magic COMM_FREED) until
 * vc_finalize, so a stale handle gives VC_ERR_COMM instead of reading freed
 * memory, and a non-blocking operation still in flight keeps a valid rank
 * map.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "core/ctx.h"

int coll_comm_register(struct vc_comm *c);
void coll_comm_release_cache(struct vc_comm *c);

/* also used by comm_create_group.c; takes ownership of world on success */
int coll_make_comm(uint32_t ctx, int rank, int size, int *world, struct vc_comm **out)
{
    struct vc_comm *c = calloc(1, sizeof *c);
    int rc;
    if (!c)
        return VC_ERR_NOMEM;
    c->magic = COMM_MAGIC;
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

int vc_comm_dup(vc_comm_t comm, vc_comm_t *newcomm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!newcomm)
        return VC_ERR_ARG;
    *newcomm = VC_COMM_NULL;

    uint32_t mine = vc_ctx.next_ctx, ctx;
    int rc = coll_run(COLL_ALLREDUCE, comm, &mine, &ctx, 1, VC_UINT32, VC_MAX, 0, NULL);
    if (rc)
        return rc;
    vc_ctx.next_ctx = ctx + 2;

    int *world = NULL;
    if (comm->world) {
        world = malloc((size_t)comm->size * sizeof *world);
        if (!world)
            return VC_ERR_NOMEM;
        memcpy(world, comm->world, (size_t)comm->size * sizeof *world);
    }
    rc = coll_make_comm(ctx, comm->rank, comm->size, world, newcomm);
    if (rc)
        free(world);
    return rc;
}

typedef struct { int32_t color, key; uint32_t next_ctx; } split_ent_t;
typedef struct { int key, rank; } split_mem_t;

static int mem_cmp(const void *a, const void *b)
{
    const split_mem_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int vc_comm_split(vc_comm_t comm, int color, int key, vc_comm_t *newcomm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!newcomm)
        return VC_ERR_ARG;
    *newcomm = VC_COMM_NULL;

    int p = comm->size;
    split_ent_t me = {color, key, vc_ctx.next_ctx};
    split_ent_t *all = malloc((size_t)p * sizeof *all);
    split_mem_t *mem = malloc((size_t)p * sizeof *mem);
    int rc = VC_ERR_NOMEM;
    if (!all || !mem)
        goto out;
    /* one allgather carries colors, keys and context ids: 3 x 32 bits */
    rc = coll_run(COLL_ALLGATHER, comm, &me, all, 3, VC_UINT32, VC_SUM, 0, NULL);
    if (rc)
        goto out;

    uint32_t ctx = 0;
    int bad = 0, n = 0, myrank = -1;
    for (int i = 0; i < p; i++) {
        if (all[i].next_ctx > ctx)
            ctx = all[i].next_ctx;
        if (all[i].color < 0 && all[i].color != VC_UNDEFINED)
            bad = 1;
    }
    vc_ctx.next_ctx = ctx + 2;
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
    qsort(mem, (size_t)n, sizeof *mem, mem_cmp);
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
    rc = coll_make_comm(ctx, myrank, n, world, newcomm);
    if (rc)
        free(world);
out:
    free(all);
    free(mem);
    return rc;
}

int vc_comm_free(vc_comm_t *comm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!comm)
        return VC_ERR_ARG;
    if (comm_check(*comm) || *comm == VC_COMM_WORLD)
        return VC_ERR_COMM;
    (*comm)->magic = COMM_FREED;
    coll_comm_release_cache(*comm);
    *comm = VC_COMM_NULL;
    return VC_SUCCESS;
}
