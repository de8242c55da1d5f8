# src/lifecycle: what vc_init / vc_finalize do, which wires every layer
# together; above all of them, included by none but the API.
libvcoll_int_la_SOURCES += src/lifecycle/lifecycle.h src/lifecycle/init.c
