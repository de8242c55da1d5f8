/*
 * allgatherv_ring.c -- p-1 rounds, each passing one block to the right
 * neighbour, every block received straight into RBUF at its displacement.
 * Bandwidth optimal for any p and any mix of counts; the large choice.
 * Every rank knows every count, so an empty block is skipped by its sender
 * and its receiver alike (a round may then carry nothing at all).
 */
#include "sched.h"

int coll_allgatherv_ring(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    const size_t *cnt = a->counts, *dsp = a->displs;
    size_t es = a->esize;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + 2 * p) % p;
        if (cnt[rb])
            sched_recv(s, COLL_RBUF, dsp[rb] * es, cnt[rb] * es, prev);
        if (cnt[sb])
            sched_send(s, k ? COLL_RBUF : in, k ? dsp[sb] * es : in_off, cnt[sb] * es, next);
        sched_round(s);
    }
    /* after the first round's send, which reads the input in place */
    sched_copy(s, COLL_RBUF, dsp[r] * es, in, in_off, cnt[r] * es);
    return sched_done(s);
}
