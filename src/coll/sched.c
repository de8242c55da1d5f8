/* sched.c -- building schedules (see sched.h for the round semantics). */
#include <stdlib.h>
#include <string.h>
#include "core/copy.h"
#include "sched.h"
#include "dtype/dtype.h"
#include "core/ops.h"

void coll_args_set(coll_args_t *a, int kind, int rank, int size, int root,
                   size_t count, vc_dtype_t dt, vc_op_t op, int inplace)
{
    memset(a, 0, sizeof *a);
    a->rank = rank;
    a->size = size;
    a->root = root;
    a->count = count;
    a->dt = dt;
    a->op = op;
    a->esize = dtype_size(dt);
    a->inplace = inplace;
    /* MPI's in-place allgather takes my block from its slot in rbuf */
    a->in_off = kind == COLL_ALLGATHER || kind == COLL_GATHER
                    ? (size_t)rank * count * a->esize : 0;
}

void coll_args_vec(coll_args_t *a, int kind, const size_t *counts,
                   const size_t *displs, const size_t *rcounts,
                   const size_t *rdispls)
{
    a->counts = counts;
    a->displs = displs;
    a->rcounts = rcounts;
    a->rdispls = rdispls;
    if ((kind == COLL_GATHERV || kind == COLL_ALLGATHERV) && displs)
        a->in_off = displs[a->rank] * a->esize;
}

void sched_local_step(const coll_sched_t *s, const coll_step_t *st,
                      unsigned char *const *base)
{
    if (st->kind == STEP_COPY) {
        core_copy(base[st->dbuf] + st->doff, base[st->abuf] + st->aoff, st->bytes);
        return;
    }
    if (st->kind != STEP_REDUCE)
        return;
    coll_reduce_kernel(base[st->dbuf] + st->doff, base[st->abuf] + st->aoff,
                       base[st->bbuf] + st->boff, st->bytes / s->esize, s->dt, s->op,
                       s->esize, s->ufn);
}

void coll_reduce_kernel(void *dst, const void *ap, const void *bp, size_t n, vc_dtype_t dt,
                        vc_op_t op, size_t esize, const ops_user_t *ufn)
{
    unsigned char *d = dst;
    const unsigned char *a = ap, *b = bp;
    if (!ufn) {
        dtype_reduce3(d, a, b, n, dt, op);
        return;
    }
    /* user fn(in, inout) computes inout = in op inout, so d = a op b is
       fn(a, copy of b); the bounce buffer makes any aliasing of d with a
       or b safe */
    unsigned char stack[4096] __attribute__((aligned(16))), *bounce = stack;
    size_t per = sizeof stack / esize;
    if (!per) {
        /* an opaque element larger than the stack bounce (vc_dtype_opaque):
           one at a time through the heap, or in place when there is none
           (d == b is then the only aliasing a schedule makes) */
        per = 1;
        bounce = malloc(esize);
    }
    for (size_t i = 0; i < n; i += per) {
        size_t k = n - i < per ? n - i : per, off = i * esize;
        if (!bounce) {
            if (d != b)
                core_copy(d + off, b + off, k * esize);
            ops_call(ufn, a + off, d + off, k, dt);
            continue;
        }
        core_copy(bounce, b + off, k * esize);
        ops_call(ufn, a + off, bounce, k, dt);
        core_copy(d + off, bounce, k * esize);
    }
    if (bounce != stack)
        free(bounce);
}

void sched_init(coll_sched_t *s, const coll_args_t *a)
{
    memset(s, 0, sizeof *s);
    sched_reset(s, a);
}

void sched_reset(coll_sched_t *s, const coll_args_t *a)
{
    s->nsteps = 0;
    s->nrounds = 0;
    s->open = 0;
    s->max_comm = 0;
    s->cur_comm = 0;
    s->tmp_bytes = 0;
    s->folds = 0;
    s->err = VC_SUCCESS;
    s->dt = a->dt;
    s->op = a->op;
    s->esize = a->esize;
    s->ufn = a->ufn;
}

void sched_free(coll_sched_t *s)
{
    free(s->steps);
    free(s->round);
    memset(s, 0, sizeof *s);
}

void sched_round(coll_sched_t *s)
{
    if (!s->open)
        return;
    s->open = 0;
    s->cur_comm = 0;
}

static coll_step_t *add_step(coll_sched_t *s, int kind)
{
    if (s->err)
        return NULL;
    if (s->nsteps == s->cap) {
        int ncap = s->cap ? 2 * s->cap : 16;
        coll_step_t *n = realloc(s->steps, (size_t)ncap * sizeof *n);
        if (!n) {
            s->err = VC_ERR_NOMEM;
            return NULL;
        }
        s->steps = n;
        s->cap = ncap;
    }
    if (!s->open) {
        /* round[] keeps one extra slot for the end marker */
        if (s->nrounds + 2 > s->rcap) {
            int ncap = s->rcap ? 2 * s->rcap : 16;
            int *n = realloc(s->round, (size_t)ncap * sizeof *n);
            if (!n) {
                s->err = VC_ERR_NOMEM;
                return NULL;
            }
            s->round = n;
            s->rcap = ncap;
        }
        s->round[s->nrounds++] = s->nsteps;
        s->open = 1;
    }
    if (kind == STEP_SEND || kind == STEP_RECV) {
        if (++s->cur_comm > s->max_comm)
            s->max_comm = s->cur_comm;
    }
    coll_step_t *st = &s->steps[s->nsteps++];
    s->round[s->nrounds] = s->nsteps;
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    return st;
}

static void add_send(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer, int flags)
{
    coll_step_t *st = add_step(s, STEP_SEND);
    if (!st)
        return;
    st->abuf = (uint8_t)buf;
    st->aoff = off;
    st->bytes = bytes;
    st->peer = peer;
    st->flags = (uint8_t)flags;
}

void sched_send(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer)
{
    add_send(s, buf, off, bytes, peer, 0);
}

void sched_send_fanin(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer)
{
    add_send(s, buf, off, bytes, peer, STEP_F_FANIN);
}

void sched_recv(coll_sched_t *s, int buf, size_t off, size_t bytes, int peer)
{
    coll_step_t *st = add_step(s, STEP_RECV);
    if (!st)
        return;
    st->dbuf = (uint8_t)buf;
    st->doff = off;
    st->bytes = bytes;
    st->peer = peer;
}

void sched_copy(coll_sched_t *s, int dbuf, size_t doff, int sbuf, size_t soff,
                size_t bytes)
{
    if (!bytes || (dbuf == sbuf && doff == soff))
        return;
    coll_step_t *st = add_step(s, STEP_COPY);
    if (!st)
        return;
    st->dbuf = (uint8_t)dbuf;
    st->doff = doff;
    st->abuf = (uint8_t)sbuf;
    st->aoff = soff;
    st->bytes = bytes;
}

void sched_reduce(coll_sched_t *s, int dbuf, size_t doff, int abuf, size_t aoff,
                  int bbuf, size_t boff, size_t bytes)
{
    if (!bytes)
        return;
    coll_step_t *st = add_step(s, STEP_REDUCE);
    if (!st)
        return;
    s->folds = 1;
    st->dbuf = (uint8_t)dbuf;
    st->doff = doff;
    st->abuf = (uint8_t)abuf;
    st->aoff = aoff;
    st->bbuf = (uint8_t)bbuf;
    st->boff = boff;
    st->bytes = bytes;
}

void sched_need_tmp(coll_sched_t *s, size_t bytes)
{
    if (bytes > s->tmp_bytes)
        s->tmp_bytes = bytes;
}

int sched_done(coll_sched_t *s)
{
    sched_round(s);
    return s->err;
}

void coll_input(const coll_args_t *a, int *buf, size_t *off)
{
    if (a->inplace) {
        *buf = COLL_RBUF;
        *off = a->in_off;
    } else {
        *buf = COLL_SBUF;
        *off = 0;
    }
}

void coll_block(size_t count, int n, int i, size_t *first, size_t *cnt)
{
    size_t base = count / (size_t)n, rem = count % (size_t)n;
    size_t ui = (size_t)i;
    *cnt = base + (ui < rem ? 1 : 0);
    *first = ui * base + (ui < rem ? ui : rem);
}

int coll_pof2_floor(int n)
{
    int p = 1;
    while (p <= n / 2)
        p <<= 1;
    return p;
}

int coll_binomial_span(int vr, int p, int *pmask)
{
    int mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    if (vr == 0) {
        *pmask = 0;
        return p;
    }
    *pmask = mask;
    return mask < p - vr ? mask : p - vr;
}

size_t coll_vec_total(const size_t *counts, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += counts[i];
    return t;
}

size_t *coll_rs_offsets(const coll_args_t *a, coll_sched_t *s)
{
    size_t *off = malloc(((size_t)a->size + 1) * sizeof *off);
    if (!off) {
        s->err = VC_ERR_NOMEM;
        return NULL;
    }
    off[0] = 0;
    for (int i = 0; i < a->size; i++)
        off[i + 1] = off[i] + (a->counts ? a->counts[i] : a->count);
    return off;
}

void coll_win_blocks(const coll_args_t *a, const void *ctx, int n0, int n1,
                     size_t *off, size_t *len)
{
    int n = *(const int *)ctx;
    size_t f0, c0, f1, c1;
    coll_block(a->count, n, n0, &f0, &c0);
    coll_block(a->count, n, n1 - 1, &f1, &c1);
    *off = f0 * a->esize;
    *len = (f1 + c1 - f0) * a->esize;
}

void coll_halving_step(coll_sched_t *s, const coll_args_t *a, coll_win_fn win,
                       const void *ctx, int nr, int m, int peer, int cur,
                       size_t cur_off, int acc, size_t rv)
{
    int g = nr & ~(2 * m - 1);
    int lower = !(nr & m);
    int k0 = lower ? g : g + m, s0 = lower ? g + m : g;
    size_t koff, klen, soff, slen;
    win(a, ctx, k0, k0 + m, &koff, &klen);
    win(a, ctx, s0, s0 + m, &soff, &slen);
    if (klen) {
        sched_need_tmp(s, rv + klen);
        sched_recv(s, COLL_TMP, rv, klen, peer);
    }
    if (slen)
        sched_send(s, cur, cur_off + soff, slen, peer);
    if (lower)
        sched_reduce(s, acc, koff, cur, cur_off + koff, COLL_TMP, rv, klen);
    else
        sched_reduce(s, acc, koff, COLL_TMP, rv, cur, cur_off + koff, klen);
}
