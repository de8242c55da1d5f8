/*
 * blocks.c -- whether the blocks of a vector collective's receive buffer
 * (n blocks, cnt[j] elements at dsp[j]) overlap: MPI forbids receiving
 * into one location twice (gatherv, allgatherv, alltoallv and the
 * neighbourhood forms). Empty blocks occupy nothing.
 *
 * Blocks laid out in rank order, the usual case, are checked in one pass
 * with no allocation: with the starts in order, a block overlaps an
 * earlier one iff it starts before the furthest end seen so far. Others
 * are sorted (on the stack up to SORT_STACK blocks).
 */
#include <stdlib.h>
#include "api.h"

#define SORT_STACK 64

typedef struct { size_t lo, hi; } span_t;

static int span_cmp(const void *x, const void *y)
{
    const span_t *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int overlap_sorted(const size_t *cnt, const size_t *dsp, int n)
{
    span_t stack[SORT_STACK], *sp = stack;
    int m = 0, rc = VC_SUCCESS;
    if (n > SORT_STACK && !(sp = malloc((size_t)n * sizeof *sp)))
        return VC_ERR_NOMEM;
    for (int j = 0; j < n; j++)
        if (cnt[j])
            sp[m++] = (span_t){dsp[j], dsp[j] + cnt[j]};
    qsort(sp, (size_t)m, sizeof *sp, span_cmp);
    for (int i = 1; i < m && !rc; i++)
        if (sp[i].lo < sp[i - 1].hi)
            rc = VC_ERR_ARG;
    if (sp != stack)
        free(sp);
    return rc;
}

/* the caller has checked that every dsp[j] + cnt[j] fits in a size_t */
int api_check_disjoint(const size_t *cnt, const size_t *dsp, int n)
{
    size_t last_lo = 0, max_hi = 0;     /* both 0 before the first block, which
                                           so never counts as either */
    int overlap = 0;
    for (int j = 0; j < n; j++) {
        if (!cnt[j])
            continue;
        if (dsp[j] < last_lo)
            return overlap_sorted(cnt, dsp, n);
        if (dsp[j] < max_hi)
            overlap = 1;
        last_lo = dsp[j];
        if (dsp[j] + cnt[j] > max_hi)
            max_hi = dsp[j] + cnt[j];
    }
    return overlap ? VC_ERR_ARG : VC_SUCCESS;
}
