/*
 * nodes.c -- facts about the job's node layout that every rank can compute
 * alike from boot_info_t, so job-wide choices need no extra exchange.
 */
#include <stdlib.h>
#include "boot/boot.h"

int boot_max_remote_peers(const boot_info_t *b)
{
    if (!b || b->size <= 1 || !b->node_of || b->nnodes <= 1)
        return 0;
    int *count = calloc((size_t)b->nnodes, sizeof(int));
    if (!count)
        return b->size - 1;     /* the safe side: assume the worst layout */
    for (int r = 0; r < b->size; r++)
        if (b->node_of[r] >= 0 && b->node_of[r] < b->nnodes)
            count[b->node_of[r]]++;
    int smallest = b->size;
    for (int n = 0; n < b->nnodes; n++)
        if (count[n] > 0 && count[n] < smallest)
            smallest = count[n];
    free(count);
    return b->size - smallest;
}
