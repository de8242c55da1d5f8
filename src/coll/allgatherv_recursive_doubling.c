/*
 * allgatherv_recursive_doubling.c -- Bruck's allgather for uneven blocks:
 * ceil(log2 p) rounds for any p, the small-total choice.
 *
 * Blocks are kept packed and rotated in TMP: slot i holds rank (r+i)%p's
 * block, slots back to back in that order. At distance d I send my first
 * min(d, p-d) slots (one contiguous run) to r-d and receive r+d's first
 * slots into mine from slot d on; both ends compute the same byte count
 * from the shared counts, and skip the message when it is empty. Packing
 * keeps each round one message whatever the displacements; a final pass
 * copies each block to its displacement in RBUF.
 */
#include "sched.h"

/* bytes of slots [0, n) in rank r's rotated TMP */
static size_t run_bytes(const coll_args_t *a, int r, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += a->counts[(r + i) % a->size];
    return t * a->esize;
}

int coll_allgatherv_recursive_doubling(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    const size_t *cnt = a->counts, *dsp = a->displs;
    size_t es = a->esize, total = coll_vec_total(cnt, p) * es;
    int in;
    size_t in_off;

    coll_input(a, &in, &in_off);
    if (p == 1 || !total) {
        sched_copy(s, COLL_RBUF, dsp[r] * es, in, in_off, cnt[r] * es);
        return sched_done(s);
    }
    sched_need_tmp(s, total);
    sched_copy(s, COLL_TMP, 0, in, in_off, cnt[r] * es);
    sched_round(s);
    for (int d = 1; d < p; d <<= 1) {
        int nb = d < p - d ? d : p - d;
        size_t rbytes = run_bytes(a, (r + d) % p, nb);
        size_t sbytes = run_bytes(a, r, nb);
        if (rbytes)
            sched_recv(s, COLL_TMP, run_bytes(a, r, d), rbytes, (r + d) % p);
        if (sbytes)
            sched_send(s, COLL_TMP, 0, sbytes, (r - d + p) % p);
        sched_round(s);
    }
    size_t off = 0;
    for (int i = 0; i < p; i++) {
        int q = (r + i) % p;
        if (!(i == 0 && a->inplace))
            sched_copy(s, COLL_RBUF, dsp[q] * es, COLL_TMP, off, cnt[q] * es);
        off += cnt[q] * es;
    }
    return sched_done(s);
}
