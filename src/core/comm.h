/*
 * comm.h -- the object behind vc_comm_t.
 * A communicator is a group (world ranks in comm-rank order) plus a context
 * id. Point-to-point traffic travels on ctx, collective traffic on ctx + 1,
 * so a collective's messages never match a user's receive.
 */
#ifndef VC_COMM_H
#define VC_COMM_H

#include <stdint.h>
#include "vcoll.h"

#define COMM_MAGIC 0x7663434du
#define COMM_FREED 0x64656164u

struct vc_comm {
    uint32_t magic;
    uint32_t ctx;          /* even; ctx+1 is used for collectives */
    int rank, size;
    int *world;            /* world rank of each comm rank; NULL = identity (world) */
    uint32_t coll_seq;     /* collective sequence number: tags for coll traffic */
    uint32_t coll_pers_seq;    /* persistent collectives initialised: their tags */
    void *coll_priv;       /* collective layer's per-comm data (scratch, tables) */
    /* the layers' state its calls run on (the library's; set by the
       lifecycle on the world, copied to every communicator made from it) */
    struct p2p_state *p2p;
    struct coll_state *coll;
};

static inline int comm_world_rank(const struct vc_comm *c, int r)
{
    return c->world ? c->world[r] : r;
}

/* validation used by every public call: VC_SUCCESS or VC_ERR_COMM
   (inline: every call asks) */
static inline int comm_check(vc_comm_t c)
{
    return !c || c->magic != COMM_MAGIC ? VC_ERR_COMM : VC_SUCCESS;
}

#endif
