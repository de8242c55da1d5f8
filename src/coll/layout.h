/*
 * layout.h -- a communicator's node layout: which members share a node.
 *
 * Computed once when a communicator is made (world, dup, split) from the
 * job-wide node map, and the same on every member, because the
 * hierarchical schedules (hier.c) read it for every rank, not only the
 * caller: a rank's schedule must match its peers' schedules exactly.
 *
 * Nodes are numbered 0..nnodes-1 in the order of their lowest comm rank,
 * and a node's leader is its lowest comm rank, so comm rank 0 is always
 * the leader of node 0 and the numbering does not depend on the node ids
 * the launcher happened to hand out.
 */
#ifndef VC_COLL_LAYOUT_H
#define VC_COLL_LAYOUT_H

#include <stdint.h>

typedef struct coll_layout {
    int size;           /* communicator size */
    int nnodes;
    int min_ppn, max_ppn;   /* fewest / most members on one node */
    int blocked;        /* every node holds consecutive comm ranks */
    int oversub;        /* some node has more ranks than cores (agreed) */
    uint64_t pull;      /* one-copy message size on a node (agreed; coll.h) */
    int *node;          /* [size] node of each comm rank */
    int *local;         /* [size] index of each comm rank within its node */
    int *start;         /* [nnodes + 1] node n is members[start[n] .. start[n+1]) */
    int *members;       /* [size] comm ranks by node, ascending within a node */
} coll_layout_t;

/* (key, rank) pairs sorted by key, then rank: the node grouping here and
 * the member order of vc_comm_split */
typedef struct { int key, rank; } coll_key_rank_t;
int coll_key_rank_cmp(const void *a, const void *b);

/* node_id[r]: any integer naming comm rank r's node. If any id is negative
 * (a rank whose node is unknown) the whole communicator counts as one
 * node: every member sees such an entry when any does, so all still agree,
 * and one node is always a correct (if slower) grouping. Returns VC_SUCCESS
 * or VC_ERR_NOMEM (L is then empty). */
int coll_layout_build(coll_layout_t *L, int size, const int *node_id);
void coll_layout_free(coll_layout_t *L);

static inline int coll_layout_ppn(const coll_layout_t *L, int n)
{
    return L->start[n + 1] - L->start[n];
}

static inline int coll_layout_leader(const coll_layout_t *L, int n)
{
    return L->members[L->start[n]];
}

#endif
