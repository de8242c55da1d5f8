/* hier.c -- composing flat schedules into two-level ones (see hier.h). */
#include <stdlib.h>
#include <string.h>
#include "hier.h"
#include "registry.h"

int coll_hier_init(coll_hier_t *h, const coll_args_t *a, int root)
{
    memset(h, 0, sizeof *h);
    h->L = a->layout;
    if (h->L && h->L->size != a->size)
        return VC_ERR_ARG;
    if (!h->L) {
        int *zero = calloc((size_t)a->size, sizeof *zero);
        int rc = zero ? coll_layout_build(&h->own, a->size, zero) : VC_ERR_NOMEM;
        free(zero);
        if (rc)
            return rc;
        h->L = &h->own;
    }
    const coll_layout_t *L = h->L;
    h->nnodes = L->nnodes;
    h->node = L->node[a->rank];
    h->local = L->local[a->rank];
    h->nlocal = coll_layout_ppn(L, h->node);
    h->mates = &L->members[L->start[h->node]];
    h->oversub = L->oversub;
    h->heads = malloc((size_t)h->nnodes * sizeof *h->heads);
    if (!h->heads) {
        coll_hier_fini(h);
        return VC_ERR_NOMEM;
    }
    for (int n = 0; n < h->nnodes; n++)
        h->heads[n] = coll_layout_leader(L, n);
    if (root >= 0)
        h->heads[L->node[root]] = root;
    h->head_local = L->local[h->heads[h->node]];
    h->is_head = h->head_local == h->local;
    return VC_SUCCESS;
}

void coll_hier_fini(coll_hier_t *h)
{
    free(h->heads);
    coll_layout_free(&h->own);
    memset(h, 0, sizeof *h);
}

void coll_bufmap_ident(coll_bufmap_t *m)
{
    for (int b = 0; b < COLL_NBUF; b++) {
        m->buf[b] = b;
        m->off[b] = 0;
    }
}

void coll_hier_args(const coll_args_t *a, coll_args_t *sub, int kind, int rank,
                    int size, int root, size_t count, int inplace)
{
    coll_args_set(sub, kind, rank, size, root, count, a->dt, a->op, inplace);
    sub->ufn = a->ufn;
    sub->noncomm = a->noncomm;
}

/* append t to s, translating peers through group and buffers through m */
static int append(coll_sched_t *s, const coll_sched_t *t, const int *group,
                  const coll_bufmap_t *m)
{
    sched_round(s);
    for (int i = 0; i < t->nrounds; i++) {
        for (int k = t->round[i]; k < t->round[i + 1]; k++) {
            const coll_step_t *st = &t->steps[k];
            int d = m->buf[st->dbuf], x = m->buf[st->abuf], y = m->buf[st->bbuf];
            size_t doff = m->off[st->dbuf] + st->doff, aoff = m->off[st->abuf] + st->aoff;
            switch (st->kind) {
            case STEP_SEND:
                sched_send(s, x, aoff, st->bytes, group[st->peer]);
                break;
            case STEP_RECV:
                sched_recv(s, d, doff, st->bytes, group[st->peer]);
                break;
            case STEP_COPY:
                sched_copy(s, d, doff, x, aoff, st->bytes);
                break;
            case STEP_REDUCE:
                sched_reduce(s, d, doff, x, aoff, y, m->off[st->bbuf] + st->boff, st->bytes);
                break;
            }
        }
        sched_round(s);
    }
    if (t->tmp_bytes)
        sched_need_tmp(s, m->off[COLL_TMP] + t->tmp_bytes);
    return s->err;
}

int coll_hier_phase(coll_sched_t *s, int kind, const coll_args_t *sub,
                    const int *group, int oversub, const coll_bufmap_t *map)
{
    coll_sched_t t;
    const coll_alg_t *alg = coll_select_flat(kind, sub->size, sub->count, sub->esize,
                                             oversub, sub->noncomm);
    int rc;

    if (s->err)
        return s->err;
    if (!alg)
        return s->err = VC_ERR_INTERNAL;
    sched_init(&t, sub);
    rc = alg->build(sub, &t);
    if (!rc)
        rc = append(s, &t, group, map);
    sched_free(&t);
    if (rc && !s->err)
        s->err = rc;
    return rc;
}

int coll_hier_node_bcast(coll_sched_t *s, const coll_args_t *a, const coll_hier_t *h,
                         size_t off, size_t count)
{
    coll_args_t sub;
    coll_bufmap_t m;

    if (h->nlocal == 1)
        return s->err;
    coll_hier_args(a, &sub, COLL_BCAST, h->local, h->nlocal, h->head_local, count, 0);
    coll_bufmap_ident(&m);
    m.off[COLL_RBUF] = off;
    return coll_hier_phase(s, COLL_BCAST, &sub, h->mates, h->oversub, &m);
}

int coll_hier_one_node(coll_sched_t *s, int kind, const coll_args_t *a,
                       const coll_hier_t *h)
{
    coll_args_t sub = *a;
    coll_bufmap_t m;

    sub.layout = NULL;
    coll_bufmap_ident(&m);
    coll_hier_phase(s, kind, &sub, h->mates, h->oversub, &m);
    return sched_done(s);
}
