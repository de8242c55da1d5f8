/*
 * reduce_rsag.c -- Rabenseifner's reduce for large messages: reduce-scatter
 * by recursive halving, then a binomial gather of the reduced blocks to the
 * root. Each rank reduces and sends ~n bytes in total instead of n*log2(p).
 *
 * Ranks are renumbered relative to the root (vr). With p not a power of
 * two, rem = p - pof2: among vr < 2*rem each odd vr first hands its data to
 * vr-1 and drops out, so the root (vr 0) always stays in. Survivors are
 * numbered nr = vr/2 (vr < 2*rem) or vr - rem.
 *
 * Halving: at distance m (pof2/2 .. 1) partners nr and nr^m share the
 * window of blocks [G, G+2m), G = nr & ~(2m-1); the one with bit m clear
 * keeps the lower half. The kept half is always "lower group op upper
 * group", so each block's expression tree depends only on p and root.
 *
 * Buffers: accumulator = RBUF at the root, TMP[0,n) elsewhere; incoming
 * data lands in TMP after the accumulator.
 */
#include "sched.h"

int coll_reduce_rsag(const coll_args_t *a, coll_sched_t *s)
{
    int p = a->size, root = a->root;
    int vr = (a->rank - root + p) % p;
    size_t n = a->count * a->esize;
    int pof2 = coll_pof2_floor(p), rem = p - pof2;
    int acc = vr == 0 ? COLL_RBUF : COLL_TMP;
    size_t in = vr == 0 ? 0 : n;    /* TMP offset for incoming data */
    int cur;
    size_t cur_off;
    int nr;

    coll_input(a, &cur, &cur_off);
    if (!n)
        return sched_done(s);
    if (p == 1) {
        sched_copy(s, COLL_RBUF, 0, cur, cur_off, n);
        return sched_done(s);
    }
#define REAL(v) (((v) + root) % p)
#define NR2VR(x) ((x) < rem ? 2 * (x) : (x) + rem)

    if (vr < 2 * rem) {
        if (vr & 1) {
            sched_send(s, cur, cur_off, n, REAL(vr - 1));
            return sched_done(s);
        }
        sched_need_tmp(s, in + n);
        sched_recv(s, COLL_TMP, in, n, REAL(vr + 1));
        sched_reduce(s, acc, 0, cur, cur_off, COLL_TMP, in, n);
        sched_round(s);
        cur = acc;
        cur_off = 0;
        nr = vr / 2;
    } else {
        nr = vr - rem;
    }

    /* reduce-scatter by recursive halving */
    for (int m = pof2 / 2; m > 0; m >>= 1) {
        coll_halving_step(s, a, coll_win_blocks, &pof2, nr, m, REAL(NR2VR(nr ^ m)), cur,
                          cur_off, acc, in);
        sched_round(s);
        if (cur != acc) {
            /* only my kept window moved to acc; everything later reads
               from inside it, so switching buffers is safe */
            cur = acc;
            cur_off = 0;
        }
    }

    /* binomial gather of block windows to nr 0 (= vr 0 = root) */
    for (int m = 1; m < pof2; m <<= 1) {
        size_t off, len;
        if (nr & m) {
            coll_win_blocks(a, &pof2, nr, nr + m, &off, &len);
            if (len)
                sched_send(s, acc, off, len, REAL(NR2VR(nr - m)));
            break;
        }
        coll_win_blocks(a, &pof2, nr + m, nr + 2 * m, &off, &len);
        if (len) {
            sched_recv(s, acc, off, len, REAL(NR2VR(nr + m)));
            sched_round(s);
        }
    }
#undef REAL
#undef NR2VR
    return sched_done(s);
}
