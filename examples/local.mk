noinst_PROGRAMS += examples/hello examples/pingpong examples/transpose
examples_hello_SOURCES = examples/hello.c
examples_hello_LDADD = libvcoll.la
examples_pingpong_SOURCES = examples/pingpong.c
examples_pingpong_LDADD = libvcoll.la
EXTRA_DIST += examples/Makefile.example
examples_transpose_SOURCES = examples/transpose.c
examples_transpose_LDADD = libvcoll.la
