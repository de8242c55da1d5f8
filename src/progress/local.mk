# src/progress: the progress loop, back-off, peer liveness and the
# dead-peer table, below p2p and coll (transports and pollers register).
libvcoll_int_la_SOURCES += src/progress/progress.h src/progress/poll.c \
	src/progress/backoff.c src/progress/live.c
