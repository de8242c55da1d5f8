/*
 * coll_talg.h -- the unit tests' view of the algorithm registry by number
 * (1 = a collective's first algorithm, as VCOLL_<COLL>_ALG counts them).
 * The algorithms that run only through shared memory come last in each
 * collective's list (registry.c), so 1 .. tnsched(kind) - 1 are exactly
 * the ones with a schedule the simulator can run.
 */
#ifndef VC_TEST_COLL_TALG_H
#define VC_TEST_COLL_TALG_H

#include <string.h>
#include "coll/registry.h"
#include "coll/layout.h"

static inline const coll_alg_t *talg(int kind, int i)
{
    const coll_alg_t *const *l;
    int n = coll_algs(kind, &l);
    return i >= 1 && i <= n ? l[i - 1] : NULL;
}

/* one past the last algorithm with a schedule */
static inline int tnsched(int kind)
{
    int i = 1;
    while (talg(kind, i) && talg(kind, i)->build)
        i++;
    return i;
}

static inline int tindex(int kind, const char *name)
{
    return coll_alg_number(coll_alg_find(kind, name));
}

static inline int trank_ordered(int kind, int i)
{
    return talg(kind, i) && (talg(kind, i)->props & ALG_RANK_ORDERED);
}

/* the flat auto choice for p ranks and a message of bytes (count elements) */
static inline int tselect(int kind, int p, size_t bytes, size_t count, int oversub,
                          int noncomm)
{
    size_t es = count ? bytes / count : 1;
    if (!count)
        count = bytes;
    return coll_alg_number(coll_select_flat(kind, p, count, es ? es : 1, oversub, noncomm));
}

/* the auto choice for a blocking call of count elements of esize bytes on
   layout L (L->oversub as agreed); no_shared: as if shared memory had
   declined (the schedules' rows) */
static inline const char *tchoose(const coll_layout_t *L, int kind, size_t count,
                                  size_t esize, int noncomm, int no_shared)
{
    coll_query_t q;
    coll_query_init(&q, kind, FORM_BLOCKING, L, count, esize, count, noncomm, noncomm);
    q.no_shared = no_shared;
    const coll_alg_t *a = coll_select(&q);
    return a ? a->name : "none";
}

#endif
