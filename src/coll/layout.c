/* layout.c -- a communicator's node layout (see layout.h). */
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "layout.h"

int coll_key_rank_cmp(const void *a, const void *b)
{
    const coll_key_rank_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int coll_layout_build(coll_layout_t *L, int size, const int *node_id)
{
    memset(L, 0, sizeof *L);
    if (size < 1)
        return VC_ERR_ARG;
    size_t n = (size_t)size;
    int *mem = malloc((4 * n + 1) * sizeof *mem);
    coll_key_rank_t *pr = malloc(n * sizeof *pr);
    if (!mem || !pr) {
        free(mem);
        free(pr);
        return VC_ERR_NOMEM;
    }
    L->size = size;
    L->node = mem;
    L->local = mem + n;
    L->members = mem + 2 * n;
    L->start = mem + 3 * n;

    int unknown = 0;
    for (int r = 0; r < size; r++)
        unknown |= node_id[r] < 0;
    /* group by node id (ranks ascending inside a group) ... */
    for (int r = 0; r < size; r++) {
        pr[r].key = unknown ? 0 : node_id[r];
        pr[r].rank = r;
    }
    qsort(pr, n, sizeof *pr, coll_key_rank_cmp);
    /* ... then order the groups by their lowest rank: key = leader, and
       sorting by (leader, rank) keeps each group's ranks together */
    for (int i = 0, lead = 0; i < size; i++) {
        if (i == 0 || pr[i].key != pr[i - 1].key)
            lead = pr[i].rank;
        L->node[pr[i].rank] = lead;   /* scratch: the leader's rank */
    }
    for (int i = 0; i < size; i++)
        pr[i].key = L->node[pr[i].rank];
    qsort(pr, n, sizeof *pr, coll_key_rank_cmp);

    int nn = 0;
    for (int i = 0; i < size; i++) {
        if (i == 0 || pr[i].key != pr[i - 1].key)
            L->start[nn++] = i;
        L->members[i] = pr[i].rank;
        L->node[pr[i].rank] = nn - 1;
        L->local[pr[i].rank] = i - L->start[nn - 1];
    }
    L->start[nn] = size;
    L->nnodes = nn;
    free(pr);

    L->min_ppn = size;
    L->blocked = 1;
    for (int k = 0; k < nn; k++) {
        int c = coll_layout_ppn(L, k);
        if (c < L->min_ppn)
            L->min_ppn = c;
        if (c > L->max_ppn)
            L->max_ppn = c;
        /* nodes are ordered by lowest rank, so consecutive members on
           every node means node k holds exactly [start[k], start[k+1]) */
        if (L->members[L->start[k + 1] - 1] != L->members[L->start[k]] + c - 1)
            L->blocked = 0;
    }
    return VC_SUCCESS;
}

void coll_layout_free(coll_layout_t *L)
{
    free(L->node);
    memset(L, 0, sizeof *L);
}
