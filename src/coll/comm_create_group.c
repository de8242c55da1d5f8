/*
 * comm_create_group.c -- a communicator made by its
 * members alone, so a subset of a large communicator (an MPI
 * sub-communicator met for the first time, say) needs nobody else.
 *
 * The members agree on a context id as vc_comm_split does (comm_split.c:
 * the maximum of next_ctx, held and checked in a second round), but over
 * the parent's point-to-point traffic with the caller's tag, through the
 * first listed rank: creation is rare and the group may be any subset, so
 * a linear exchange is enough.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "p2p/p2p.h"

/* one uint32 over comm's point-to-point traffic (ctx_off 0: the caller's
   tag on its communicator; vcoll.h: the caller keeps it apart from its
   own traffic) */
static int xfer(struct vc_comm *comm, int send, uint32_t *v, int peer, int tag)
{
    struct vc_request *r;
    int rc = send ? p2p_isend(v, sizeof *v, peer, tag, comm, 0, &r)
                  : p2p_irecv(v, sizeof *v, peer, tag, comm, 0, 0, &r);
    if (rc)
        return rc;
    rc = p2p_wait(comm->p2p, r);
    if (!rc && !send && r->status.bytes != sizeof *v)
        rc = VC_ERR_TRUNCATE;
    req_free(r);
    return rc;
}

/* VC_SUCCESS and my index in ranks[], or why the list is unusable */
static int check_list(const struct vc_comm *comm, int n, const int ranks[], int *me)
{
    if (n < 1 || n > comm->size || !ranks)
        return VC_ERR_ARG;
    unsigned char *seen = calloc((size_t)comm->size, 1);
    if (!seen)
        return VC_ERR_NOMEM;
    int rc = VC_SUCCESS;
    *me = -1;
    for (int i = 0; i < n && !rc; i++) {
        if (ranks[i] < 0 || ranks[i] >= comm->size)
            rc = VC_ERR_RANK;
        else if (seen[ranks[i]]++)
            rc = VC_ERR_ARG;
        else if (ranks[i] == comm->rank)
            *me = i;
    }
    free(seen);
    if (!rc && *me < 0)
        rc = VC_ERR_RANK;      /* only members call */
    return rc;
}

/* the group's maximum or minimum of one value each, through the first
   listed rank */
typedef struct {
    struct vc_comm *comm;
    int n, me, tag;
    const int *ranks;
} group_t;

static int group_reduce(void *arg, uint32_t v, vc_op_t op, uint32_t *out)
{
    const group_t *g = arg;
    int rc;
    if (g->me != 0) {
        if ((rc = xfer(g->comm, 1, &v, g->ranks[0], g->tag)))
            return rc;
        return xfer(g->comm, 0, out, g->ranks[0], g->tag);
    }
    uint32_t r = v;
    for (int i = 1; i < g->n; i++) {
        if ((rc = xfer(g->comm, 0, &v, g->ranks[i], g->tag)))
            return rc;
        r = op == VC_MAX ? (v > r ? v : r) : (v < r ? v : r);
    }
    for (int i = 1; i < g->n; i++)
        if ((rc = xfer(g->comm, 1, &r, g->ranks[i], g->tag)))
            return rc;
    *out = r;
    return VC_SUCCESS;
}

int coll_comm_create_group(struct vc_comm *comm, int n, const int ranks[], int tag,
                           struct vc_comm **newcomm)
{
    int me, rc = check_list(comm, n, ranks, &me);
    if (rc)
        return rc;
    /* (held while agreed: two threads making groups at once, from one
       parent with two tags or from two parents, must not both get it) */
    group_t g = {comm, n, me, tag, ranks};
    uint32_t ctx;
    uint32_t key = (comm->ctx * 0x9e3779b1u) ^ ((uint32_t)tag * 0x85ebca77u + 0x165667b1u);
    if ((rc = coll_ctx_agree(group_reduce, &g, comm->coll, key, &ctx)))
        return rc;
    int *world = malloc((size_t)n * sizeof *world);
    if (!world)
        return VC_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        world[i] = comm_world_rank(comm, ranks[i]);
    rc = coll_make_comm(comm, ctx, me, n, world, newcomm);
    if (rc)
        free(world);
    return rc;
}
