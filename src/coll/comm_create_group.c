/*
 * comm_create_group.c -- a communicator made by its
 * members alone, so a subset of a large communicator (an MPI
 * sub-communicator met for the first time, say) needs nobody else.
 *
 * The members agree on a context id as vc_comm_split does (comm_split.c:
 * the maximum of next_ctx, held and checked in a second round), but over
 * the parent's point-to-point traffic with the caller's tag, over a
 * binomial tree on the members' list (the group may be any subset of the
 * parent, so its own collectives do not apply).
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

/* the group's maximum or minimum of one value each */
typedef struct {
    struct vc_comm *comm;
    int n, me, tag;
    const int *ranks;
} group_t;

static uint32_t fold(vc_op_t op, uint32_t a, uint32_t b)
{
    return op == VC_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

/* Over a binomial tree on the list's indices, rooted at the first listed
   rank: each member folds its children's values into its own and passes
   the result up, then the root's answer comes back down. The parent of
   index i is i without its lowest set bit, its children i + 1, i + 2, ...
   below that bit. Why not a linear exchange through the first rank: that
   rank handled 2 (n - 1) messages a round, one after another, and made a
   connection to every member (a twin of a 10,000-rank MPI_Comm_dup through
   the drop-in: 10,000 RC queue pairs on one rank, test/verbs/mp_ondemand.c
   counts them). Here a round is 2 log2 n steps deep and a member talks to
   at most log2 n + 1 others. Messages between two members go one way per
   phase (a child's up, its parent's down), and one sender's messages on
   one tag arrive in order, so rounds cannot mix. */
static int group_reduce(void *arg, uint32_t v, vc_op_t op, uint32_t *out)
{
    const group_t *g = arg;
    int me = g->me, n = g->n, rc, low = 1;
    uint32_t r = v, c;
    /* up: children from the smallest subtree, the one done first */
    for (; low < n && !(me & low); low <<= 1)
        if (me + low < n) {
            if ((rc = xfer(g->comm, 0, &c, g->ranks[me + low], g->tag)))
                return rc;
            r = fold(op, r, c);
        }
    if (me) {
        if ((rc = xfer(g->comm, 1, &r, g->ranks[me - low], g->tag)) ||
            (rc = xfer(g->comm, 0, &r, g->ranks[me - low], g->tag)))
            return rc;
    }
    /* down: the biggest subtree first, its chain is the longest */
    for (low >>= 1; low > 0; low >>= 1)
        if (me + low < n && (rc = xfer(g->comm, 1, &r, g->ranks[me + low], g->tag)))
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
