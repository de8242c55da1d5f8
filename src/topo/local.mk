libvcoll_int_la_SOURCES += src/topo/topo.h src/topo/topo_load.c \
	src/topo/hca_select.c
