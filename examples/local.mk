noinst_PROGRAMS += examples/hello examples/pingpong
examples_hello_SOURCES = examples/hello.c
examples_hello_LDADD = libvcoll.la
examples_pingpong_SOURCES = examples/pingpong.c
examples_pingpong_LDADD = libvcoll.la
EXTRA_DIST += examples/Makefile.example
