/*
 * weak.h -- vcoll entry points the drop-in may find missing at run time.
 *
 * libvcoll 0.1 had five collectives and no thread levels; a newer drop-in
 * loaded beside such a libvcoll.so must still work. These references are
 * weak: a missing one reads as NULL and that call falls back to MPI
 * ("not in this libvcoll"), instead of the whole program failing to load.
 */
#ifndef VCMPI_WEAK_H
#define VCMPI_WEAK_H

#include "vcoll.h"

#pragma weak vc_init_thread
#pragma weak vc_gather
#pragma weak vc_gatherv
#pragma weak vc_scatter
#pragma weak vc_scatterv
#pragma weak vc_allgatherv
#pragma weak vc_alltoall
#pragma weak vc_alltoallv
#pragma weak vc_reduce_scatter_block
#pragma weak vc_reduce_scatter
#pragma weak vc_scan
#pragma weak vc_exscan
#pragma weak vc_ireduce
#pragma weak vc_iallgather
#pragma weak vc_igather
#pragma weak vc_igatherv
#pragma weak vc_iscatter
#pragma weak vc_iscatterv
#pragma weak vc_iallgatherv
#pragma weak vc_ialltoall
#pragma weak vc_ialltoallv
#pragma weak vc_ireduce_scatter_block
#pragma weak vc_ireduce_scatter
#pragma weak vc_iscan
#pragma weak vc_iexscan
#pragma weak vc_op_create_ctx
#pragma weak vc_dtype_opaque
/* 0.3: persistent and neighborhood collectives */
#pragma weak vc_barrier_init
#pragma weak vc_bcast_init
#pragma weak vc_reduce_init
#pragma weak vc_allreduce_init
#pragma weak vc_allgather_init
#pragma weak vc_allgatherv_init
#pragma weak vc_gather_init
#pragma weak vc_gatherv_init
#pragma weak vc_scatter_init
#pragma weak vc_scatterv_init
#pragma weak vc_alltoall_init
#pragma weak vc_alltoallv_init
#pragma weak vc_reduce_scatter_init
#pragma weak vc_reduce_scatter_block_init
#pragma weak vc_scan_init
#pragma weak vc_exscan_init
#pragma weak vc_neighbor_allgather
#pragma weak vc_ineighbor_allgather
#pragma weak vc_neighbor_allgather_init
#pragma weak vc_neighbor_allgatherv
#pragma weak vc_ineighbor_allgatherv
#pragma weak vc_neighbor_allgatherv_init
#pragma weak vc_neighbor_alltoall
#pragma weak vc_ineighbor_alltoall
#pragma weak vc_neighbor_alltoall_init
#pragma weak vc_neighbor_alltoallv
#pragma weak vc_ineighbor_alltoallv
#pragma weak vc_neighbor_alltoallv_init
#pragma weak vc_comm_create_graph
#pragma weak vc_neighbors_count
#pragma weak vc_comm_create_cart
#pragma weak vc_start
#pragma weak vc_request_free

/* the forms present: the blocking one (b) and the non-blocking one (i), and
   for a persistent call (vcmpi_pinit, vcmpi.h) the persistent one (p).
   The thread-local flag is read last, only when the persistent form is
   missing: in a shared library each read is a __tls_get_addr call, which
   every blocking call paid before its own work (callgrind, np 2 scatterv
   through the drop-in: one call and 11 instructions in it per call) */
#define VCMPI_HAVE3(b, i, p) \
    ((void *)(b) != NULL && (void *)(i) != NULL && \
     (((void *)(p) != NULL && (void *)vc_start != NULL) || !vcmpi_pinit))

#endif
