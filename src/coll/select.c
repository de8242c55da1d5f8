/*
 * select.c -- which algorithm "auto" means, by communicator size and message
 * bytes (allgather: bytes per rank).
 *
 * PROVISIONAL thresholds (MPICH-like defaults) until measured on shm here;
 * see the table in the comment of each function and the coll report.
 */
#include "sched.h"

/* allreduce: recursive doubling while latency dominates; Rabenseifner for
   medium; ring for large vectors (bandwidth optimal, no pof2 folding). */
#define ALLREDUCE_RD_MAX     2048u
#define ALLREDUCE_RING_MIN   (512u * 1024u)
/* bcast: binomial for small messages or few ranks */
#define BCAST_BINOMIAL_MAX   12288u
#define BCAST_MIN_RANKS      8
/* reduce: binomial below this, reduce-scatter + gather above */
#define REDUCE_BINOMIAL_MAX  2048u
/* allgather: recursive doubling / Bruck while the total stays small */
#define ALLGATHER_RD_TOTAL_MAX (80u * 1024u)

int coll_select(int kind, int size, size_t bytes, size_t count)
{
    int pof2 = coll_pof2_floor(size);

    switch (kind) {
    case COLL_BARRIER:
        return 1;
    case COLL_BCAST:
        if (bytes <= BCAST_BINOMIAL_MAX || size < BCAST_MIN_RANKS)
            return 1;                    /* binomial */
        return 2;                        /* scatter_allgather */
    case COLL_REDUCE:
        if (bytes <= REDUCE_BINOMIAL_MAX || count < (size_t)pof2)
            return 1;                    /* binomial */
        return 2;                        /* rsag */
    case COLL_ALLREDUCE:
        if (bytes <= ALLREDUCE_RD_MAX || count < (size_t)pof2 || size == 1)
            return 1;                    /* recursive_doubling */
        if (bytes >= ALLREDUCE_RING_MIN && size > 2)
            return 3;                    /* ring */
        return 2;                        /* rabenseifner */
    case COLL_ALLGATHER:
        if (bytes * (size_t)size <= ALLGATHER_RD_TOTAL_MAX)
            return 2;                    /* recursive_doubling (Bruck) */
        return 1;                        /* ring */
    }
    return 1;
}
