/*
 * comm_create_group.c -- vc_comm_create_group: a communicator made by its
 * members alone, so a subset of a large communicator (an MPI
 * sub-communicator met for the first time, say) needs nobody else.
 *
 * The members agree on a context id as vc_comm_split does (the maximum of
 * next_ctx), but over the parent's point-to-point traffic with the caller's
 * tag, through the first listed rank: creation is rare and the group may be
 * any subset, so a linear exchange is enough.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "core/ctx.h"

int coll_make_comm(uint32_t ctx, int rank, int size, int *world, struct vc_comm **out);

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

static int agree_ctx(vc_comm_t comm, int n, const int ranks[], int me, int tag,
                     uint32_t *ctx)
{
    uint32_t v = vc_ctx.next_ctx;
    int rc;
    if (me != 0) {
        if ((rc = vc_send(&v, 1, VC_UINT32, ranks[0], tag, comm)))
            return rc;
        return vc_recv(ctx, 1, VC_UINT32, ranks[0], tag, comm, VC_STATUS_IGNORE);
    }
    uint32_t max = v;
    for (int i = 1; i < n; i++) {
        if ((rc = vc_recv(&v, 1, VC_UINT32, ranks[i], tag, comm, VC_STATUS_IGNORE)))
            return rc;
        if (v > max)
            max = v;
    }
    for (int i = 1; i < n; i++)
        if ((rc = vc_send(&max, 1, VC_UINT32, ranks[i], tag, comm)))
            return rc;
    *ctx = max;
    return VC_SUCCESS;
}

int vc_comm_create_group(vc_comm_t comm, int n, const int ranks[], int tag,
                         vc_comm_t *newcomm)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    if (!newcomm)
        return VC_ERR_ARG;
    *newcomm = VC_COMM_NULL;
    if (tag < 0 || tag > VC_TAG_UB)
        return VC_ERR_TAG;
    int me, rc = check_list(comm, n, ranks, &me);
    if (rc)
        return rc;
    uint32_t ctx;
    if ((rc = agree_ctx(comm, n, ranks, me, tag, &ctx)))
        return rc;
    vc_ctx.next_ctx = ctx + 2;
    int *world = malloc((size_t)n * sizeof *world);
    if (!world)
        return VC_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        world[i] = comm_world_rank(comm, ranks[i]);
    rc = coll_make_comm(ctx, me, n, world, newcomm);
    if (rc)
        free(world);
    return rc;
}
