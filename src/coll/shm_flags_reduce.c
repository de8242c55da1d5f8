/*
 * shm_flags_reduce.c -- small blocking reduce for a world on one node
 * through the node's flag slots: the algorithm "flags" of reduce.
 *
 * A non-root writes its vector into its line and leaves, as a gather's
 * does (shm_flags_rooted.c); the root folds the lines as they appear, in
 * rank order (x0 op x1 op ... op x(p-1), its own input taken from its
 * buffer), so it gets the bits the flags allreduce gives every rank.
 * Through messages a non-root's block costs a match, a header and a
 * request at the root; here a line read. The root publishes an empty line,
 * so every rank's line of call k says it is past call k-1 (slot reuse:
 * shm_flags.c; the non-roots, which read no line, settle before their next
 * flags call).
 */
#include <stdint.h>
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "comm_priv.h"
#include "shm_run.h"
#include "shm_slots.h"
#include "dtype/dtype.h"
#include "net/net.h"

int coll_flags_reduce(const coll_call_t *c)
{
    struct vc_comm *comm = c->comm;
    coll_comm_t *cc = c->cc;
    int p = comm->size, me = comm->rank, root = c->root, tag, rc;
    size_t es = dtype_size(c->dt), bytes = c->count * es, cap;
    uint64_t k;
    unsigned char *line;
    if ((rc = coll_flags_begin(c, &k, &tag, &line, &cap)))
        return rc;
    if (me != root) {
        /* in place is the root's alone (the API refuses it elsewhere) */
        coll_flags_publish(comm, 0, c->sbuf, bytes, k);
        return VC_SUCCESS;
    }
    coll_flags_publish_empty(comm, k);
    const void *in = c->sbuf == VC_IN_PLACE ? c->rbuf : c->sbuf;
    if (!bytes) {
        /* nothing to fold, but the lines of call k must still be seen
           before the slots are reused: coll_flags_settle does that */
        return VC_SUCCESS;
    }
    /* aligned as the widest element: the kernels read it as typed
       elements (the slots' data is 8-byte aligned, as for allreduce) */
    uint8_t acc[NET_SHM_SLOT_BYTES] __attribute__((aligned(16)));
    for (int r = 0; r < p; r++) {
        const void *src = in;
        if (r != root) {
            int first;
            const unsigned char *line_r;
            if ((rc = coll_flags_await_line(comm, r, k, cc->layout.oversub, 0, NULL, &first,
                                            &line_r)))
                return rc;
            src = line_r;
        }
        if (r == 0)
            core_copy(acc, src, bytes);
        else
            dtype_reduce3(acc, acc, src, c->count, c->dt, c->op);
    }
    core_copy(c->rbuf, acc, bytes);
    cc->flags_seen = k;     /* every line of call k seen */
    return VC_SUCCESS;
}
