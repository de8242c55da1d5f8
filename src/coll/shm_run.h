/*
 * shm_run.h -- the shared-memory algorithms as the registry runs them:
 * "shm" (shm_node.c: node phases through a communicator's segment, leaders
 * by messages) and "flags" (shm_flags.c: a world on one node, small
 * barrier and allreduce through the node's slots).
 */
#ifndef VC_COLL_SHM_RUN_H
#define VC_COLL_SHM_RUN_H

#include "registry.h"

int coll_shm_fits(const coll_query_t *q);
int coll_shm_run(const coll_call_t *c, int *rc);
int coll_flags_fits(const coll_query_t *q);
int coll_flags_run(const coll_call_t *c, int *rc);

#endif
