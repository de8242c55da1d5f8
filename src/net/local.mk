libvcoll_int_la_SOURCES += src/net/net.h src/net/self.c src/net/pid_alive.c src/net/plan.c src/net/fault.c \
	src/net/shm/shm.c src/net/shm/shm_ring.h
