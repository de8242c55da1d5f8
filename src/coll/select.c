/*
 * select.c -- one decision per call: the facts of the call (a query), then
 * the algorithm. The data it decides on is the rules table in force
 * (rules.c; built-in rows in rules_builtin.c, measured and argued in
 * doc/collectives.md, "Selection"); the algorithms and what they can serve
 * are the registry's (registry.c). Nothing here knows an algorithm by name.
 */
#include <pthread.h>
#include <string.h>
#include "registry.h"
#include "rules.h"
#include "layout.h"

void coll_query_init(coll_query_t *q, int kind, int form, const coll_layout_t *L,
                     size_t count, size_t esize, size_t total_count, int noncomm,
                     int user_op)
{
    memset(q, 0, sizeof *q);
    q->kind = kind;
    q->form = form;
    q->ranks = L->size;
    q->ppn = L->max_ppn;
    q->nodes = L->nnodes;
    q->blocked = L->blocked;
    q->oversub = L->oversub;
    q->pull = L->pull;
    q->noncomm = noncomm;
    q->user_op = user_op;
    q->esize = esize;
    q->count = count;
    switch (kind) {
    case COLL_BARRIER:
    case COLL_GATHERV:      /* only the root knows all the counts */
    case COLL_SCATTERV:
    case COLL_ALLTOALLV:    /* counts differ per rank */
    case COLL_NEIGHBOR_ALLGATHERV:
    case COLL_NEIGHBOR_ALLTOALLV:
        break;
    case COLL_ALLGATHERV:   /* everyone knows every count: the average */
    case COLL_REDUCE_SCATTER:
        q->total = total_count * esize;
        q->bytes = L->size ? q->total / (size_t)L->size : 0;
        q->count = L->size ? total_count / (size_t)L->size : 0;
        break;
    default:
        q->bytes = count * esize;
        q->total = q->bytes * (size_t)L->size;
        break;
    }
}

/* Used before vc_init has loaded a table (the unit simulator, vcoll_info
   without a job): the built-in rules, parsed once. */
static coll_rules_t builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void load_builtin(void)
{
    char err[256];
    coll_rules_parse(&builtin, coll_rules_builtin, strlen(coll_rules_builtin),
                     "built-in rules", 1, err, sizeof err);
}

const coll_rules_t *coll_rules_current(void)
{
    const coll_rules_t *t = coll_rules_in_force();
    if (t->n)
        return t;
    pthread_once(&builtin_once, load_builtin);
    return &builtin;
}

const coll_alg_t *coll_select(const coll_query_t *q)
{
    const coll_rule_t *r = coll_rules_match(coll_rules_current(), q);
    if (r)
        return r->alg;
    /* no rule serves it (a file's rows cover a form or op the built-in
       ones would have): the first registered algorithm that can */
    const coll_alg_t *const *l;
    int n = coll_algs(q->kind, &l);
    for (int i = 0; i < n; i++)
        if (coll_alg_usable(l[i], q))
            return l[i];
    return NULL;
}

const coll_alg_t *coll_select_flat(int kind, int size, size_t count, size_t esize,
                                   int oversub, int noncomm)
{
    /* a phase of a two-level schedule: its group is one node's members or
       one rank per node, which the facts below do not say, so rules with
       ppn or nodes conditions do not apply (0 matches no such range) */
    coll_query_t q;
    memset(&q, 0, sizeof q);
    q.kind = kind;
    q.form = FORM_NONBLOCKING;   /* schedules only */
    q.flat = 1;
    q.ranks = size;
    q.oversub = oversub;
    q.noncomm = noncomm;
    q.user_op = noncomm;
    q.count = count;
    q.esize = esize;
    q.bytes = count * esize;
    q.total = q.bytes * (size_t)size;
    return coll_select(&q);
}
