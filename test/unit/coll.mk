# collectives: kernels + every algorithm's schedule simulated in-process
check_PROGRAMS += test/unit/test_coll
TESTS += test/unit/test_coll
test_unit_test_coll_SOURCES = test/unit/test_coll.c test/unit/sim.c test/unit/sim.h
test_unit_test_coll_LDADD = libvcoll_int.la $(CUNIT_LIBS) -lm
