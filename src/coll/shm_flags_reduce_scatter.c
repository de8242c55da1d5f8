/*
 * shm_flags_reduce_scatter.c -- small blocking reduce_scatter and
 * reduce_scatter_block for a world on one node through the node's flag
 * slots: the algorithm "flags" of both.
 *
 * Every rank publishes its whole input vector in its line, waits for every
 * line, and folds its own block out of the p lines in rank order
 * (x0 op x1 op ... op x(p-1)): the bits the flags allreduce gives for the
 * same elements, and any op's order. One publish and one wait, where
 * linear posts p-1 sends and p-1 receives and recursive halving waits
 * log p rounds for its partners: with ranks outnumbering cores each of
 * those waits is a wait for the scheduler (np 8 on 2 cores through the
 * drop-in, 32-512 B: linear 13.4-15.5 us, 1.03-1.14 of Open MPI;
 * doc/collectives.md). Every rank publishes its line and reads every
 * line, so the slot reuse of shm_flags.c holds as for allreduce; a rank
 * with no block reads none and leaves, and settles before its next line
 * as a gather's non-root does. The whole vector must fit a line: the
 * total is the same on every rank, so route.c asks for it alike
 * (coll_flags_need).
 */
#include <stdint.h>
#include "coll.h"
#include "comm_priv.h"
#include "shm_run.h"
#include "shm_slots.h"
#include "dtype/dtype.h"

int coll_flags_reduce_scatter(const coll_call_t *c)
{
    struct vc_comm *comm = c->comm;
    coll_comm_t *cc = c->cc;
    int p = comm->size, me = comm->rank, rc;
    size_t es = dtype_size(c->dt), off = 0, n, total = 0;
    if (c->kind == COLL_REDUCE_SCATTER_BLOCK) {
        n = c->count;
        off = (size_t)me * n;
        total = (size_t)p * n;
    } else {
        for (int r = 0; r < p; r++) {
            if (r == me)
                off = total;
            total += c->v->counts[r];
        }
        n = c->v->counts[me];
    }
    /* in place, the input vector is in rbuf; the lines are copies of it,
       so my block may be written over once every line is there */
    const void *in = c->sbuf == VC_IN_PLACE ? c->rbuf : c->sbuf;
    uint64_t k = ++cc->shm_seq;
    cc->seg_calls[c->kind]++;
    if (n)
        rc = coll_flags_exchange(comm, cc, in, total * es, k);
    else if (!(rc = coll_flags_settle(comm, cc, k))) {
        /* a rank with no block publishes its vector and leaves: it reads
           nobody's line, like a gather's non-root, and its next call
           settles the slots as theirs does (shm_slots.h). OSU's
           reduce_scatter of 8 B at np 8 gives six ranks no block. */
        coll_flags_publish(comm, 0, in, total * es, k);
        return VC_SUCCESS;
    }
    if (!rc)
        coll_flags_combine(comm, 0, k, off * es, c->rbuf, n, c->dt, c->op);
    return rc;
}
