/*
 * alltoallv_pairwise.c -- p-1 rounds; in round k rank r sends its block for
 * r+k and receives the block from r-k. One message out and one in per
 * round keeps every link busy without flooding any receiver, so this is
 * the large-message alltoall, and the only alltoallv (blocks of arbitrary
 * sizes gain nothing from combining). Empty blocks are skipped on both
 * sides, which works because both sides read the same count (the sender's
 * scount is the receiver's rcount under MPI rules).
 *
 * In place (input in RBUF with the receive layout): block r-k lands in
 * round k, but its outgoing content is only sent in round p-k, so the
 * outgoing blocks are first copied to TMP (one copy of the span they
 * cover) and sent from there.
 *
 * alltoall_pairwise.c runs the same rounds with uniform blocks.
 */
#include "sched.h"

int coll_a2a_pairwise(const coll_args_t *a, coll_sched_t *s, coll_a2a_layout_fn lay,
                      int one_round)
{
    int p = a->size, r = a->rank;
    size_t es = a->esize, sc, sd, rc, rd;
    int in = COLL_SBUF;
    size_t lo = (size_t)-1, hi = 0;   /* in place: span of blocks to send */

    if (a->inplace) {
        for (int j = 0; j < p; j++) {
            lay(a, j, &sc, &sd, &rc, &rd);
            if (j == r || !rc)
                continue;
            if (rd < lo)
                lo = rd;
            if (rd + rc > hi)
                hi = rd + rc;
        }
        if (hi) {
            sched_need_tmp(s, (hi - lo) * es);
            sched_copy(s, COLL_TMP, 0, COLL_RBUF, lo * es, (hi - lo) * es);
            sched_round(s);
        }
        in = COLL_TMP;
    } else {
        lay(a, r, &sc, &sd, &rc, &rd);
        sched_copy(s, COLL_RBUF, rd * es, COLL_SBUF, sd * es, (sc < rc ? sc : rc) * es);
    }
    for (int k = 1; k < p; k++) {
        int dst = (r + k) % p, src = (r - k + p) % p;
        lay(a, src, &sc, &sd, &rc, &rd);
        if (rc)
            sched_recv(s, COLL_RBUF, rd * es, rc * es, src);
        lay(a, dst, &sc, &sd, &rc, &rd);
        if (a->inplace) {
            sc = rc;
            sd = rd - lo;   /* rc > 0 puts the block inside the span */
        }
        if (sc)
            sched_send(s, in, sd * es, sc * es, dst);
        if (!one_round)
            sched_round(s);
    }
    return sched_done(s);
}

static void vec_layout(const coll_args_t *a, int j, size_t *sc, size_t *sd, size_t *rc,
                       size_t *rd)
{
    *rc = a->rcounts[j];
    *rd = a->rdispls[j];
    /* in place, MPI ignores the send arrays (they may be NULL) */
    *sc = a->counts ? a->counts[j] : *rc;
    *sd = a->displs ? a->displs[j] : *rd;
}

int coll_alltoallv_build(const coll_args_t *a, coll_sched_t *s, int one_round)
{
    if (!a->rcounts || !a->rdispls || (!a->inplace && (!a->counts || !a->displs)))
        return VC_ERR_ARG;
    return coll_a2a_pairwise(a, s, vec_layout, one_round);
}

int coll_alltoallv_pairwise(const coll_args_t *a, coll_sched_t *s)
{
    return coll_alltoallv_build(a, s, 0);
}
