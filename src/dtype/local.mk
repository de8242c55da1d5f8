libvcoll_int_la_SOURCES += src/dtype/dtype.h src/dtype/dtype.c src/dtype/reduce.c \
	src/dtype/reduce_table.h src/dtype/reduce_kernels.h src/dtype/reduce_avx2.c src/dtype/reduce_avx512.c
