/*
 * reduce_scatter_recursive_halving.c -- reduce_scatter(_block) in
 * log2(p) rounds for small and medium vectors with commutative ops (the
 * partners at distance p/2 combine first, so the association is not rank
 * order).
 *
 * Not a power of two: the fold (fold.h) -- odd ranks < 2*rem hand their
 * whole input over and later get their block back; a keeper owns both
 * blocks of its pair as one core rank. Halving at distance m: partners
 * share core ranks [G, G+2m), G = nr & ~(2m-1); the one with bit m clear
 * keeps the lower half, and the kept half is "lower group op upper group",
 * so each block's expression depends on p alone. Block sizes may differ
 * (reduce_scatter): a core rank's window covers its original blocks,
 * contiguous in the vector.
 *
 * Buffers: the whole vector accumulates in TMP[0,N) (RBUF holds only my
 * block), incoming halves land in TMP[N,2N).
 */
#include <stdlib.h>
#include "fold.h"

typedef struct { const size_t *off; const coll_fold_t *f; } layout_t;

/* byte range of core ranks [n0, n1): their original blocks */
static void win(const coll_args_t *a, const void *ctx, int n0, int n1, size_t *o,
                size_t *len)
{
    const layout_t *l = ctx;
    size_t b = l->off[coll_fold_v(l->f, n0)], e = l->off[coll_fold_v(l->f, n1)];
    *o = b * a->esize;
    *len = (e - b) * a->esize;
}

int coll_reduce_scatter_recursive_halving(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, r = a->rank;
    size_t es = a->esize;
    size_t *off = coll_rs_offsets(a, s);
    coll_fold_t f;
    int cur;
    size_t cur_off;

    if (!off)
        return sched_done(s);
    coll_input(a, &cur, &cur_off);
    size_t N = off[p] * es, mine = (off[r + 1] - off[r]) * es;
    if (!N || p == 1) {
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, N);
        goto out;
    }
    coll_fold_init(&f, a, 0);
    if (!coll_fold_in(s, &f, &cur, &cur_off, N, COLL_TMP, N)) {
        coll_fold_out(s, &f, off);
        goto out;
    }
    layout_t lay = {off, &f};
    for (int m = f.pof2 / 2; m > 0; m >>= 1) {
        coll_halving_step(s, a, win, &lay, f.nr, m, coll_fold_peer(&f, f.nr ^ m), cur,
                          cur_off, COLL_TMP, N);
        sched_round(s);
        cur = COLL_TMP;   /* later steps only read inside the kept window */
        cur_off = 0;
    }
    /* a folded-in odd neighbour gets its block; my block to RBUF */
    coll_fold_out(s, &f, off);
    sched_copy(s, COLL_RBUF, 0, COLL_TMP, off[r] * es, mine);
out:
    free(off);
    return sched_done(s);
}
