# src/api: the public entry points (include/vcoll.h): validate, lock,
# dispatch. The only definitions named vc_*.
libvcoll_int_la_SOURCES += src/api/api.h src/api/lock.c src/api/init.c \
	src/api/bootstrap.c src/api/error.c src/api/dtype.c src/api/ops.c src/api/comm.c \
	src/api/p2p.c src/api/poll.c src/api/coll.c src/api/coll_gather.c \
	src/api/coll_alltoall.c src/api/coll_neighbor.c src/api/blocks.c
