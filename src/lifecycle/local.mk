# src/lifecycle: vc_init / vc_finalize, which wire every layer together;
# above all of them, included by none.
libvcoll_int_la_SOURCES += src/lifecycle/init.c src/lifecycle/bootstrap.c
