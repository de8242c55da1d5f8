/* fold.c -- the non-power-of-two fold (see fold.h). */
#include "fold.h"

void coll_fold_init(coll_fold_t *f, const coll_args_t *a, int shift)
{
    f->p = a->size;
    f->pof2 = coll_pof2_floor(a->size);
    f->rem = f->p - f->pof2;
    f->shift = shift;
    f->v = (a->rank - shift + f->p) % f->p;
    f->nr = -1;
    f->acc = COLL_RBUF;
    f->bytes = 0;
    f->esize = a->esize;
}

int coll_fold_v(const coll_fold_t *f, int nr)
{
    return nr < f->rem ? 2 * nr : nr + f->rem;
}

int coll_fold_peer(const coll_fold_t *f, int nr)
{
    return (coll_fold_v(f, nr) + f->shift) % f->p;
}

/* comm rank of fold rank v */
static int real(const coll_fold_t *f, int v)
{
    return (v + f->shift) % f->p;
}

int coll_fold_in(coll_sched_t *s, coll_fold_t *f, int *cur, size_t *cur_off,
                 size_t bytes, int acc, size_t rv)
{
    int v = f->v;

    f->acc = acc;
    f->bytes = bytes;
    if (v >= 2 * f->rem) {
        f->nr = v - f->rem;
        return 1;
    }
    if (v & 1) {
        sched_send(s, *cur, *cur_off, bytes, real(f, v - 1));
        return 0;
    }
    sched_need_tmp(s, rv + bytes);
    sched_recv(s, COLL_TMP, rv, bytes, real(f, v + 1));
    /* v before v+1: the combine keeps rank order (relative to shift) */
    sched_reduce(s, acc, 0, *cur, *cur_off, COLL_TMP, rv, bytes);
    sched_round(s);
    *cur = acc;
    *cur_off = 0;
    f->nr = v / 2;
    return 1;
}

void coll_fold_out(coll_sched_t *s, const coll_fold_t *f, const size_t *blocks)
{
    int v = f->v;
    if (v >= 2 * f->rem)
        return;
    int odd = real(f, v | 1);
    size_t off = 0, len = f->bytes;
    if (blocks) {
        off = blocks[odd] * f->esize;
        len = (blocks[odd + 1] - blocks[odd]) * f->esize;
    }
    if (v & 1) {
        sched_round(s);   /* after my own hand-over */
        if (len)
            sched_recv(s, COLL_RBUF, 0, len, real(f, v - 1));
    } else if (len) {
        sched_send(s, f->acc, off, len, odd);
    }
}
