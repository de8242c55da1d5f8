/*
 * neighbor_direct.c -- the neighborhood collectives in one round: every
 * receive from a source posted, then every send to a destination, then
 * the blocks a rank sends itself copied locally. A neighbourhood is
 * small and fixed, so there is nothing to combine or forward: the
 * fastest schedule puts every edge on the wire at once and lets the
 * transports overlap them (the shared-memory and RDMA paths run the
 * edges in parallel).
 *
 * Pairing (graph.h): receives go in source order and sends in the
 * graph's send order, so messages between two ranks pair as MPI says,
 * for repeated edges too. Empty blocks are skipped on both sides (the
 * k-th send and the k-th receive of a pair carry the same count under
 * MPI rules, so skipping both keeps the rest paired). Edges to oneself
 * pair the same way, k-th with k-th, as copies. VC_PROC_NULL edges carry
 * nothing and leave their receive block untouched.
 *
 * The four collectives differ only in where blocks are: allgather(v)
 * sends its one input block on every edge; alltoall(v) sends block i on
 * edge i; the v forms take counts and displacements per edge.
 */
#include "graph.h"
#include "sched.h"

/* elements and displacement of send block i and receive block j */
typedef void (*nbr_lay_fn)(const coll_args_t *a, int i, size_t *cnt, size_t *dsp);

static void send_one(const coll_args_t *a, int i, size_t *cnt, size_t *dsp)
{
    (void)i;
    *cnt = a->count;
    *dsp = 0;
}

static void send_ith(const coll_args_t *a, int i, size_t *cnt, size_t *dsp)
{
    *cnt = a->count;
    *dsp = (size_t)i * a->count;
}

static void send_v(const coll_args_t *a, int i, size_t *cnt, size_t *dsp)
{
    *cnt = a->counts[i];
    *dsp = a->displs[i];
}

static void recv_v(const coll_args_t *a, int j, size_t *cnt, size_t *dsp)
{
    *cnt = a->rcounts[j];
    *dsp = a->rdispls[j];
}

/* the next edge at or after *k (in send order) that goes to oneself, or -1 */
static int next_self_send(const coll_graph_t *g, int me, int *k)
{
    for (; *k < g->outdeg; (*k)++) {
        int i = coll_graph_send_index(g, *k);
        if (g->dst[i] == me) {
            (*k)++;
            return i;
        }
    }
    return -1;
}

static int build(const coll_args_t *a, coll_sched_t *s, nbr_lay_fn slay, nbr_lay_fn rlay)
{
    const coll_graph_t *g = a->graph;
    size_t es = a->esize, cnt, dsp;
    if (!g)
        return VC_ERR_COMM;
    for (int j = 0; j < g->indeg; j++) {
        int peer = g->src[j];
        rlay(a, j, &cnt, &dsp);
        if (peer != VC_PROC_NULL && peer != a->rank && cnt)
            sched_recv(s, COLL_RBUF, dsp * es, cnt * es, peer);
    }
    for (int k = 0; k < g->outdeg; k++) {
        int i = coll_graph_send_index(g, k), peer = g->dst[i];
        slay(a, i, &cnt, &dsp);
        if (peer != VC_PROC_NULL && peer != a->rank && cnt)
            sched_send(s, COLL_SBUF, dsp * es, cnt * es, peer);
    }
    /* edges to myself: the k-th source listing of me takes the k-th
       destination listing of me (in send order) */
    int k = 0;
    for (int j = 0; j < g->indeg; j++) {
        if (g->src[j] != a->rank)
            continue;
        int i = next_self_send(g, a->rank, &k);
        if (i < 0)
            break;
        size_t sc, sd;
        slay(a, i, &sc, &sd);
        rlay(a, j, &cnt, &dsp);
        sched_copy(s, COLL_RBUF, dsp * es, COLL_SBUF, sd * es, (sc < cnt ? sc : cnt) * es);
    }
    sched_round(s);
    return sched_done(s);
}

int coll_neighbor_allgather_direct(const coll_args_t *a, coll_sched_t *s)
{
    return build(a, s, send_one, send_ith);
}

int coll_neighbor_allgatherv_direct(const coll_args_t *a, coll_sched_t *s)
{
    if (a->graph && a->graph->indeg && (!a->rcounts || !a->rdispls))
        return VC_ERR_ARG;
    return build(a, s, send_one, recv_v);
}

int coll_neighbor_alltoall_direct(const coll_args_t *a, coll_sched_t *s)
{
    return build(a, s, send_ith, send_ith);
}

int coll_neighbor_alltoallv_direct(const coll_args_t *a, coll_sched_t *s)
{
    const coll_graph_t *g = a->graph;
    if (g && ((g->indeg && (!a->rcounts || !a->rdispls)) ||
              (g->outdeg && (!a->counts || !a->displs))))
        return VC_ERR_ARG;
    return build(a, s, send_v, recv_v);
}
