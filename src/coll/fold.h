/*
 * fold.h -- the non-power-of-two fold of the recursive halving/doubling
 * builders (allreduce_recursive_doubling, allreduce_rabenseifner,
 * reduce_rsag, reduce_scatter_recursive_halving), written once so the four
 * cannot drift apart in who pairs with whom or in which operand comes first.
 *
 * p ranks, pof2 = largest power of two <= p, rem = p - pof2. Ranks are
 * first numbered v = (rank - shift) mod p (shift = reduce's root, so the
 * root is v 0 and always stays in; 0 elsewhere). Among v < 2*rem each odd
 * v hands its data to v-1 and sits out the core; even v combines
 * "mine op v+1's" (rank order) and joins the power-of-two core as core rank
 * nr = v/2; v >= 2*rem join as nr = v - rem. Core rank nr is thus fold rank
 * coll_fold_v(nr), and the data of core rank nr is that of fold ranks
 * [coll_fold_v(nr), coll_fold_v(nr + 1)), in order.
 *
 * Usage (the odd rank's part ends after coll_fold_out; reduce's odd ranks,
 * which need no result, just stop after coll_fold_in):
 *
 *     coll_fold_init(&f, a, shift);
 *     if (!coll_fold_in(s, &f, &cur, &cur_off, bytes, acc, rv)) {
 *         coll_fold_out(s, &f, NULL);
 *         return sched_done(s);
 *     }
 *     ... the core over f.nr, f.pof2, peers coll_fold_peer(&f, x) ...
 *     coll_fold_out(s, &f, NULL);
 */
#ifndef VC_COLL_FOLD_H
#define VC_COLL_FOLD_H

#include "sched.h"

typedef struct coll_fold {
    int p, pof2, rem;
    int shift;      /* fold rank v is comm rank (v + shift) % p */
    int v;          /* my fold rank */
    int nr;         /* my core rank; -1 once coll_fold_in handed my data over */
    int acc;        /* coll_fold_in: where a keeper combined the pair's data (at 0) */
    size_t bytes;   /* coll_fold_in: the data each rank brings */
    size_t esize;
} coll_fold_t;

void coll_fold_init(coll_fold_t *f, const coll_args_t *a, int shift);
/* fold rank of core rank nr (the even one of a folded pair); nr may be
   pof2, giving p: the end of core rank pof2-1's span */
int coll_fold_v(const coll_fold_t *f, int nr);
/* comm rank of core rank nr (0 <= nr < pof2) */
int coll_fold_peer(const coll_fold_t *f, int nr);
/* The prologue, in its own round. An odd v < 2*rem sends `bytes` of
   *cur at *cur_off to v-1 (the round is left open) and gets 0: it is out
   of the core. Everyone else gets 1 with f->nr set; an even v < 2*rem has
   received its partner's data into TMP at rv and combined it into acc at 0
   (*cur, *cur_off then name acc, 0). */
int coll_fold_in(coll_sched_t *s, coll_fold_t *f, int *cur, size_t *cur_off,
                 size_t bytes, int acc, size_t rv);
/* The epilogue: a folded pair's odd rank gets its result back in RBUF at 0
   from the keeper's acc -- the whole vector (blocks NULL), or only its own
   block: elements [blocks[q], blocks[q+1]) of the vector, q its comm rank
   (coll_rs_offsets). Both sides call it; empty blocks are skipped on both;
   ranks outside a pair do nothing. */
void coll_fold_out(coll_sched_t *s, const coll_fold_t *f, const size_t *blocks);

#endif
