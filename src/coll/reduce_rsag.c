/*
 * reduce_rsag.c -- Rabenseifner's reduce for large messages: reduce-scatter
 * by recursive halving, then a binomial gather of the reduced blocks to the
 * root. Each rank reduces and sends ~n bytes in total instead of n*log2(p).
 *
 * Not a power of two: the fold (fold.h) numbered from the root, so the root
 * (fold rank 0) always stays in; the odd ranks that hand their data over
 * need nothing back.
 *
 * Halving: at distance m (pof2/2 .. 1) partners nr and nr^m share the
 * window of blocks [G, G+2m), G = nr & ~(2m-1); the one with bit m clear
 * keeps the lower half. The kept half is always "lower group op upper
 * group", so each block's expression tree depends only on p and root.
 *
 * Buffers: accumulator = RBUF at the root, TMP[0,n) elsewhere; incoming
 * data lands in TMP after the accumulator.
 */
#include "fold.h"

int coll_reduce_rsag(const coll_args_t *a, coll_sched_t *s)
{
    int root_me = a->rank == a->root;
    size_t n = a->count * a->esize;
    int acc = root_me ? COLL_RBUF : COLL_TMP;
    size_t in = root_me ? 0 : n;    /* TMP offset for incoming data */
    coll_fold_t f;
    int cur;
    size_t cur_off;

    coll_input(a, &cur, &cur_off);
    if (!n)
        return sched_done(s);
    if (a->size == 1) {
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, n);
        return sched_done(s);
    }
    coll_fold_init(&f, a, a->root);
    if (!coll_fold_in(s, &f, &cur, &cur_off, n, acc, in))
        return sched_done(s);
    int nr = f.nr, pof2 = f.pof2;

    /* reduce-scatter by recursive halving */
    for (int m = pof2 / 2; m > 0; m >>= 1) {
        coll_halving_step(s, a, coll_win_blocks, &pof2, nr, m, coll_fold_peer(&f, nr ^ m),
                          cur, cur_off, acc, in);
        sched_round(s);
        if (cur != acc) {
            /* only my kept window moved to acc; everything later reads
               from inside it, so switching buffers is safe */
            cur = acc;
            cur_off = 0;
        }
    }

    /* binomial gather of block windows to nr 0 (= fold rank 0 = root) */
    for (int m = 1; m < pof2; m <<= 1) {
        size_t off, len;
        if (nr & m) {
            coll_win_blocks(a, &pof2, nr, nr + m, &off, &len);
            if (len)
                sched_send(s, acc, off, len, coll_fold_peer(&f, nr - m));
            break;
        }
        coll_win_blocks(a, &pof2, nr + m, nr + 2 * m, &off, &len);
        if (len) {
            sched_recv(s, acc, off, len, coll_fold_peer(&f, nr + m));
            sched_round(s);
        }
    }
    return sched_done(s);
}
