# src/coll: collectives as schedules (sched.h), one file per algorithm,
# selection (registry, rules), the one route, executor, communicator
# dup/split/free (the public calls are src/api's).
libvcoll_int_la_SOURCES += \
	src/coll/coll.h src/coll/sched.h src/coll/sched.c src/coll/exec.c \
	src/coll/fold.h src/coll/fold.c \
	src/coll/registry.h src/coll/registry.c src/coll/select.c \
	src/coll/rules.h src/coll/rules.c src/coll/rules_builtin.c src/coll/shm_run.h src/coll/shm_slots.h \
	src/coll/setup.c src/coll/route.c src/coll/comm_split.c src/coll/comm_graph.c src/coll/graph.h \
	src/coll/barrier_dissemination.c src/coll/barrier_linear.c \
	src/coll/bcast_binomial.c src/coll/bcast_scatter_allgather.c \
	src/coll/reduce_binomial.c src/coll/reduce_rsag.c src/coll/reduce_linear.c \
	src/coll/allreduce_recursive_doubling.c src/coll/allreduce_rabenseifner.c \
	src/coll/allreduce_ring.c src/coll/allreduce_linear.c \
	src/coll/allgather_ring.c src/coll/allgather_recursive_doubling.c \
	src/coll/gather_binomial.c src/coll/gather_linear.c src/coll/gatherv_linear.c \
	src/coll/scatter_binomial.c src/coll/scatter_linear.c src/coll/scatterv_linear.c \
	src/coll/allgatherv_ring.c src/coll/allgatherv_recursive_doubling.c \
	src/coll/alltoall_bruck.c src/coll/alltoall_pairwise.c src/coll/alltoall_linear.c \
	src/coll/alltoallv_linear.c \
	src/coll/alltoallv_pairwise.c src/coll/neighbor_direct.c src/coll/neighbor_shm.c \
	src/coll/reduce_scatter_recursive_halving.c \
	src/coll/reduce_scatter_pairwise.c src/coll/reduce_scatter_ring.c src/coll/reduce_scatter_linear.c \
	src/coll/scan_recursive_doubling.c src/coll/exscan_recursive_doubling.c \
	src/coll/shm_flags.c src/coll/shm_flags_nb.c src/coll/shm_flags_rooted.c src/coll/shm_flags_alltoallv.c src/coll/shm_flags_reduce.c src/coll/shm_flags_reduce_scatter.c src/coll/shm_seg.h src/coll/shm_seg.c src/coll/shm_alltoallv.c src/coll/shm_reduce.c \
	src/coll/shm_node.c src/coll/comm_priv.h \
	src/coll/layout.h src/coll/layout.c src/coll/hier.h src/coll/hier.c \
	src/coll/barrier_hier.c src/coll/bcast_hier.c src/coll/reduce_hier.c \
	src/coll/allreduce_hier.c src/coll/allgather_hier.c
libvcoll_int_la_SOURCES += src/coll/comm_create_group.c
