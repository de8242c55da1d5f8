/*
 * graph.h -- the neighbour graph a communicator may carry (made by
 * vc_comm_create_graph or vc_comm_create_cart; comm_graph.c), read by the
 * neighborhood schedules (neighbor_direct.c) and by vc_neighbors.
 */
#ifndef VC_COLL_GRAPH_H
#define VC_COLL_GRAPH_H

typedef struct coll_graph {
    int cart;               /* made by vc_comm_create_cart */
    int indeg, outdeg;
    int *src, *dst;         /* ranks of the communicator, or VC_PROC_NULL at a
                               non-periodic Cartesian edge; rbuf blocks follow
                               src, sbuf blocks dst */
    int maxout;             /* the largest outdeg of any member: agreed when the
                               communicator was made (the segment algorithm,
                               neighbor_shm.c, sizes its slots by it) */
    int ndims;              /* Cartesian: dims[], periods[] (0/1) */
    int *dims, *periods;
} coll_graph_t;

/* The order in which a rank sends its blocks. Messages between two ranks
 * pair up in posting order, so sending in dst order and receiving in src
 * order pairs the k-th listing on one side with the k-th on the other,
 * MPI's rule for a graph. A Cartesian communicator pairs differently: my
 * block 2d comes from the -1 neighbour's block 2d+1 and my block 2d+1 from
 * the +1 neighbour's block 2d, also when both neighbours are one rank (two
 * ranks in a periodic dimension) or myself (one). Sending each pair in
 * swapped order (2d+1 to the +1 neighbour first, then 2d to the -1 one)
 * makes posting order realise exactly that. */
static inline int coll_graph_send_index(const coll_graph_t *g, int k)
{
    return g->cart ? k ^ 1 : k;
}

/* the graphs, made without communication (the unit tests build them for
   every simulated rank); NULL: out of memory */
coll_graph_t *coll_graph_new(int indeg, const int *src, int outdeg, const int *dst);
/* (maxout: the graph's own outdeg, all one rank knows without an
   agreement; vc_comm_create_graph agrees on it) */
/* rank's neighbours on a grid (dims multiply to the size; periods 0/1) */
coll_graph_t *coll_graph_cart(int ndims, const int *dims, const int *periods, int rank);

struct vc_comm;
/* the graph comm carries, or NULL (no topology) */
const coll_graph_t *coll_comm_graph(struct vc_comm *comm);
/* a copy onto a duplicate (vc_comm_dup keeps the topology, as MPI's) */
int coll_graph_copy(struct vc_comm *to, const coll_graph_t *g);
void coll_graph_free(coll_graph_t *g);

#endif
