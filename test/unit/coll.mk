# collectives: kernels + every algorithm's schedule simulated in-process
check_PROGRAMS += test/unit/test_coll
TESTS += test/unit/test_coll
test_unit_test_coll_SOURCES = test/unit/test_coll.c test/unit/sim.c test/unit/sim.h
test_unit_test_coll_LDADD = libvcoll_int.la $(CUNIT_LIBS) -lm
# gather, gatherv, scatter, scatterv, allgatherv: every algorithm simulated
check_PROGRAMS += test/unit/test_coll_gather
TESTS += test/unit/test_coll_gather
test_unit_test_coll_gather_SOURCES = test/unit/test_coll_gather.c test/unit/sim.c test/unit/sim.h
test_unit_test_coll_gather_LDADD = libvcoll_int.la $(CUNIT_LIBS)
# alltoall(v), reduce_scatter(_block), scan, exscan; non-commutative ops
check_PROGRAMS += test/unit/test_coll_a2a
TESTS += test/unit/test_coll_a2a
test_unit_test_coll_a2a_SOURCES = test/unit/test_coll_a2a.c test/unit/sim.c test/unit/sim.h
test_unit_test_coll_a2a_LDADD = libvcoll_int.la $(CUNIT_LIBS) -lm
# node layouts and the two-level schedules, simulated over many layouts
check_PROGRAMS += test/unit/test_coll_hier
TESTS += test/unit/test_coll_hier
test_unit_test_coll_hier_SOURCES = test/unit/test_coll_hier.c test/unit/sim.c test/unit/sim.h
test_unit_test_coll_hier_LDADD = libvcoll_int.la $(CUNIT_LIBS) -lm
# selection as data: the rules format, matching, the table in force
check_PROGRAMS += test/unit/test_rules
TESTS += test/unit/test_rules
test_unit_test_rules_SOURCES = test/unit/test_rules.c src/tools/tune_pick.c src/tools/tune_pick.h
test_unit_test_rules_LDADD = libvcoll_int.la $(CUNIT_LIBS)
# persistent collectives: the executor restarting a kept schedule on the real p2p
check_PROGRAMS += test/unit/test_persist
TESTS += test/unit/test_persist
test_unit_test_persist_SOURCES = test/unit/test_persist.c test/unit/p2p_world.h
test_unit_test_persist_LDADD = libvcoll_int.la $(CUNIT_LIBS)
# neighborhood collectives: graphs, grids and their schedules simulated
check_PROGRAMS += test/unit/test_coll_neighbor
TESTS += test/unit/test_coll_neighbor
test_unit_test_coll_neighbor_SOURCES = test/unit/test_coll_neighbor.c test/unit/sim.c test/unit/sim.h
test_unit_test_coll_neighbor_LDADD = libvcoll_int.la $(CUNIT_LIBS)
