/*
 * hier.h -- building two-level (node-aware) schedules out of flat ones.
 *
 * A hierarchical algorithm runs flat algorithms on sub-groups of the
 * communicator: the members of one node, and one acting leader per node.
 * coll_hier_phase builds the flat schedule for the sub-group with sub-group
 * ranks (so every existing builder is reused unchanged), then appends it
 * to the composite schedule with each peer translated to its comm rank and
 * each symbolic buffer (SBUF/RBUF/TMP of the sub-schedule) moved to a
 * place in the composite's buffers. Each phase starts and ends on a round
 * boundary, so the round semantics of sched.h hold for the composite.
 *
 * Every member builds the same phases over the same groups, with the same
 * flat algorithm (chosen by coll_select_flat from sub-group facts all members
 * share), so the translated schedules match across ranks.
 */
#ifndef VC_COLL_HIER_H
#define VC_COLL_HIER_H

#include "sched.h"
#include "layout.h"

/* where the sub-schedule's buffer b lives in the composite: buf[b] at off[b] */
typedef struct coll_bufmap {
    int buf[COLL_NBUF];
    size_t off[COLL_NBUF];
} coll_bufmap_t;

typedef struct coll_hier {
    const coll_layout_t *L; /* the args' layout, or own (one node) */
    coll_layout_t own;
    int nnodes, node;       /* node count, my node */
    int local, nlocal;      /* my index in my node, its member count */
    const int *mates;       /* comm ranks of my node, local order */
    int *heads;             /* [nnodes] acting leader of each node */
    int head_local;         /* my node's acting leader, local index */
    int is_head;
    int oversub;
} coll_hier_t;

/* Acting leaders: the lowest rank of each node, except that on the root's
 * node (root >= 0) the root leads, so rooted data never takes an extra
 * intra-node hop. Returns VC_SUCCESS, VC_ERR_NOMEM or VC_ERR_ARG (layout of
 * another size). */
int coll_hier_init(coll_hier_t *h, const coll_args_t *a, int root);
void coll_hier_fini(coll_hier_t *h);

/* identity map: SBUF, RBUF, TMP at offset 0 each */
void coll_bufmap_ident(coll_bufmap_t *m);

/* Arguments of a sub-group collective: a's dtype, op and user function,
 * the given geometry, no layout. */
void coll_hier_args(const coll_args_t *a, coll_args_t *sub, int kind, int rank,
                    int size, int root, size_t count, int inplace);

/* Append the flat algorithm auto-selection picks for sub (oversub as the
 * sub-group is), run over group[0 .. sub->size) (group[i] = comm rank of
 * sub-rank i), buffers moved by map. */
int coll_hier_phase(coll_sched_t *s, int kind, const coll_args_t *sub,
                    const int *group, int oversub, const coll_bufmap_t *map);

/* Broadcast count elements of RBUF at off from my node's acting leader to
 * the rest of my node (the last phase of most hierarchical algorithms). */
int coll_hier_node_bcast(coll_sched_t *s, const coll_args_t *a, const coll_hier_t *h,
                         size_t off, size_t count);

/* A communicator on one node: the flat algorithm auto-selection picks for
 * the whole call (members in rank order, so no translation is needed);
 * returns sched_done(s). */
int coll_hier_one_node(coll_sched_t *s, int kind, const coll_args_t *a,
                       const coll_hier_t *h);

#endif
