check_PROGRAMS += test/unit/test_core
test_unit_test_core_SOURCES = test/unit/test_core.c
test_unit_test_core_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_core
include test/unit/coll.mk
include test/unit/topo.mk
check_PROGRAMS += test/unit/test_nodes
test_unit_test_nodes_SOURCES = test/unit/test_nodes.c
test_unit_test_nodes_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_nodes
