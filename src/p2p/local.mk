libvcoll_int_la_SOURCES += src/p2p/p2p.h src/p2p/proto.h src/p2p/p2p_state.h \
	src/p2p/p2p.c src/p2p/backlog.c src/p2p/wait.c
