libvcoll_int_la_SOURCES += src/dtype/dtype.h src/dtype/dtype.c src/dtype/reduce.c
