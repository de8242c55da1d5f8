/*
 * registry.c -- the one list of collective algorithms. Adding one is its
 * builder's file plus one line here; selection (rules.c) then names it.
 * Within a collective the order is vcoll_info's listing and the numbers
 * the unit tests count by (coll_talg.h): the algorithms with a schedule
 * first, then those that run only through shared memory.
 */
#include <stdio.h>
#include <string.h>
#include "registry.h"
#include "shm_run.h"

/* Rabenseifner, reduce rsag and the allreduce ring cut the vector into
   blocks for a power-of-two core of the ranks: fewer elements than that
   and some ranks would have nothing to halve */
static int count_covers_pof2(const coll_query_t *q)
{
    return q->count >= (size_t)coll_pof2_floor(q->ranks);
}

enum { RO = ALG_RANK_ORDERED, NODE = ALG_NODE_AWARE, SHARED = ALG_SHARED };
enum { ALL = FORM_ALL, BLK = FORM_BLOCKING, NB = FORM_NONBLOCKING };

static const coll_alg_t algs[] = {
    {COLL_BARRIER, "dissemination", coll_barrier_dissemination, RO, ALL, NULL, NULL, NULL},
    {COLL_BARRIER, "linear", coll_barrier_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_BARRIER, "hier", coll_barrier_hier, RO | NODE, ALL, NULL, NULL, NULL},
    {COLL_BARRIER, "shm", NULL, RO | NODE | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_BARRIER, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},
    {COLL_BARRIER, "flags_release", NULL, RO | SHARED, BLK, coll_flags_fits,
     coll_flags_release_run, NULL},

    {COLL_BCAST, "binomial", coll_bcast_binomial, RO, ALL, NULL, NULL, NULL},
    {COLL_BCAST, "scatter_allgather", coll_bcast_scatter_allgather, RO, ALL, NULL, NULL, NULL},
    {COLL_BCAST, "hier", coll_bcast_hier, RO | NODE, ALL, NULL, NULL, NULL},
    {COLL_BCAST, "shm", NULL, RO | NODE | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_BCAST, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},

    /* binomial roots its tree at rank 0 for non-commutative ops, then
       sends the result to the root; hier builds flat rank-ordered phases
       for them; rsag halves at distance p/2 first (x0 meets x(p/2)) */
    {COLL_REDUCE, "binomial", coll_reduce_binomial, RO, ALL, NULL, NULL, NULL},
    {COLL_REDUCE, "rsag", coll_reduce_rsag, 0, ALL, count_covers_pof2, NULL, NULL},
    {COLL_REDUCE, "hier", coll_reduce_hier, RO | NODE, ALL, NULL, NULL, NULL},
    {COLL_REDUCE, "linear", coll_reduce_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_REDUCE, "shm", NULL, RO | NODE | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_REDUCE, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},

    /* ring: block b's chain starts at rank b; Rabenseifner as rsag */
    {COLL_ALLREDUCE, "recursive_doubling", coll_allreduce_recursive_doubling, RO, ALL, NULL,
     NULL, NULL},
    {COLL_ALLREDUCE, "rabenseifner", coll_allreduce_rabenseifner, 0, ALL, count_covers_pof2,
     NULL, NULL},
    {COLL_ALLREDUCE, "ring", coll_allreduce_ring, 0, ALL, count_covers_pof2, NULL, NULL},
    {COLL_ALLREDUCE, "linear", coll_allreduce_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLREDUCE, "hier", coll_allreduce_hier, RO | NODE, ALL, NULL, NULL, NULL},
    {COLL_ALLREDUCE, "shm", NULL, RO | NODE | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_ALLREDUCE, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},

    {COLL_ALLGATHER, "ring", coll_allgather_ring, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLGATHER, "recursive_doubling", coll_allgather_recursive_doubling, RO, ALL, NULL,
     NULL, NULL},
    {COLL_ALLGATHER, "hier", coll_allgather_hier, RO | NODE, ALL, NULL, NULL, NULL},
    {COLL_ALLGATHER, "shm", NULL, RO | NODE | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_ALLGATHER, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},

    {COLL_GATHER, "binomial", coll_gather_binomial, RO, ALL, NULL, NULL, NULL},
    {COLL_GATHER, "linear", coll_gather_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_GATHER, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},
    {COLL_GATHERV, "linear", coll_gatherv_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_GATHERV, "flags", NULL, RO | SHARED, BLK, coll_flags_fits, coll_flags_run, NULL},
    {COLL_SCATTER, "binomial", coll_scatter_binomial, RO, ALL, NULL, NULL, NULL},
    {COLL_SCATTER, "linear", coll_scatter_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_SCATTER, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},
    {COLL_SCATTERV, "linear", coll_scatterv_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_SCATTERV, "flags", NULL, RO | SHARED, BLK, coll_flags_fits, coll_flags_run, NULL},
    {COLL_ALLGATHERV, "ring", coll_allgatherv_ring, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLGATHERV, "recursive_doubling", coll_allgatherv_recursive_doubling, RO, ALL,
     NULL, NULL, NULL},
    {COLL_ALLGATHERV, "shm", NULL, RO | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_ALLGATHERV, "flags", NULL, RO | SHARED, BLK, coll_flags_fits, coll_flags_run, NULL},
    {COLL_ALLTOALL, "bruck", coll_alltoall_bruck, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLTOALL, "pairwise", coll_alltoall_pairwise, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLTOALL, "linear", coll_alltoall_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLTOALL, "shm", NULL, RO | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_ALLTOALL, "flags", NULL, RO | SHARED, BLK | NB, coll_flags_fits, coll_flags_run,
     coll_flags_nb_start},
    {COLL_ALLTOALLV, "pairwise", coll_alltoallv_pairwise, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLTOALLV, "linear", coll_alltoallv_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_ALLTOALLV, "shm", NULL, RO | SHARED, BLK, coll_shm_fits, coll_shm_run, NULL},
    {COLL_ALLTOALLV, "flags", NULL, RO | SHARED, BLK, coll_flags_fits, coll_flags_run, NULL},
    /* one builder per algorithm serves both reduce_scatter kinds; only
       pairwise, linear and flags combine in rank order */
    {COLL_REDUCE_SCATTER_BLOCK, "recursive_halving", coll_reduce_scatter_recursive_halving,
     0, ALL, NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER_BLOCK, "pairwise", coll_reduce_scatter_pairwise, RO, ALL, NULL,
     NULL, NULL},
    {COLL_REDUCE_SCATTER_BLOCK, "ring", coll_reduce_scatter_ring, 0, ALL, NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER_BLOCK, "linear", coll_reduce_scatter_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER_BLOCK, "flags", NULL, RO | SHARED, BLK, coll_flags_fits,
     coll_flags_run, NULL},
    {COLL_REDUCE_SCATTER, "recursive_halving", coll_reduce_scatter_recursive_halving, 0, ALL,
     NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER, "pairwise", coll_reduce_scatter_pairwise, RO, ALL, NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER, "ring", coll_reduce_scatter_ring, 0, ALL, NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER, "linear", coll_reduce_scatter_linear, RO, ALL, NULL, NULL, NULL},
    {COLL_REDUCE_SCATTER, "flags", NULL, RO | SHARED, BLK, coll_flags_fits, coll_flags_run, NULL},
    {COLL_SCAN, "recursive_doubling", coll_scan_recursive_doubling, RO, ALL, NULL, NULL, NULL},
    {COLL_EXSCAN, "recursive_doubling", coll_exscan_recursive_doubling, RO, ALL, NULL, NULL, NULL},
    {COLL_NEIGHBOR_ALLGATHER, "direct", coll_neighbor_allgather_direct, RO, ALL, NULL, NULL, NULL},
    {COLL_NEIGHBOR_ALLGATHER, "shm", NULL, RO | SHARED, BLK, coll_nbr_shm_fits,
     coll_nbr_shm_run, NULL},
    {COLL_NEIGHBOR_ALLGATHERV, "direct", coll_neighbor_allgatherv_direct, RO, ALL, NULL,
     NULL, NULL},
    {COLL_NEIGHBOR_ALLTOALL, "direct", coll_neighbor_alltoall_direct, RO, ALL, NULL, NULL, NULL},
    {COLL_NEIGHBOR_ALLTOALL, "shm", NULL, RO | SHARED, BLK, coll_nbr_shm_fits,
     coll_nbr_shm_run, NULL},
    {COLL_NEIGHBOR_ALLTOALLV, "direct", coll_neighbor_alltoallv_direct, RO, ALL, NULL, NULL, NULL},
};
#define NALGS (int)(sizeof algs / sizeof algs[0])

/* per collective, pointers into algs in order; built once (the table is
   constant, so any thread building it writes the same values) */
static const coll_alg_t *by_kind[COLL_NKINDS][NALGS];
static int nby_kind[COLL_NKINDS];
static int built;

static void build(void)
{
    if (__atomic_load_n(&built, __ATOMIC_ACQUIRE))
        return;
    int n[COLL_NKINDS] = {0};
    for (int i = 0; i < NALGS; i++)
        by_kind[algs[i].kind][n[algs[i].kind]++] = &algs[i];
    for (int k = 0; k < COLL_NKINDS; k++)
        nby_kind[k] = n[k];
    __atomic_store_n(&built, 1, __ATOMIC_RELEASE);
}

int coll_algs(int kind, const coll_alg_t *const **list)
{
    if (kind < 0 || kind >= COLL_NKINDS)
        return 0;
    build();
    if (list)
        *list = by_kind[kind];
    return nby_kind[kind];
}

const coll_alg_t *coll_alg_find(int kind, const char *name)
{
    const coll_alg_t *const *l;
    int n = coll_algs(kind, &l);
    for (int i = 0; name && i < n; i++)
        if (!strcmp(l[i]->name, name))
            return l[i];
    return NULL;
}

int coll_alg_number(const coll_alg_t *a)
{
    const coll_alg_t *const *l;
    int n = a ? coll_algs(a->kind, &l) : 0;
    for (int i = 0; i < n; i++)
        if (l[i] == a)
            return i + 1;
    return 0;
}

const char *coll_alg_choices(int kind, char *buf, size_t len)
{
    const coll_alg_t *const *l;
    int n = coll_algs(kind, &l);
    size_t used = (size_t)snprintf(buf, len, "auto");
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "|%s", l[i]->name);
    return buf;
}

int coll_alg_usable(const coll_alg_t *a, const coll_query_t *q)
{
    if (!a || !(a->forms & (unsigned)q->form))
        return 0;
    if (q->noncomm && !(a->props & ALG_RANK_ORDERED))
        return 0;
    if (q->flat && (a->props & (ALG_NODE_AWARE | ALG_SHARED)))
        return 0;
    if ((a->props & ALG_SHARED)
            ? q->no_shared || !(q->form == FORM_BLOCKING ||
                                (q->form == FORM_NONBLOCKING && a->start))
            : !a->build)
        return 0;
    return !a->fits || a->fits(q);
}

static const char *const kind_names[COLL_NKINDS] = {
    "barrier", "bcast", "reduce", "allreduce", "allgather", "gather", "gatherv",
    "scatter", "scatterv", "allgatherv", "alltoall", "alltoallv",
    "reduce_scatter_block", "reduce_scatter", "scan", "exscan", "neighbor_allgather",
    "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv"};

const char *coll_kind_name(int kind)
{
    return kind >= 0 && kind < COLL_NKINDS ? kind_names[kind] : "?";
}

int coll_kind_of(const char *name)
{
    for (int k = 0; name && k < COLL_NKINDS; k++)
        if (!strcmp(kind_names[k], name))
            return k;
    return -1;
}
