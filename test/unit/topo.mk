# HCA selection unit test (synthetic hwloc XML topologies in test/unit/topo/)
check_PROGRAMS += test/unit/test_topo
TESTS += test/unit/test_topo
test_unit_test_topo_SOURCES = test/unit/test_topo.c
test_unit_test_topo_CPPFLAGS = $(AM_CPPFLAGS) \
	-DTOPO_XML_DIR='"$(abs_top_srcdir)/test/unit/topo"'
test_unit_test_topo_LDADD = libvcoll_int.la $(CUNIT_LIBS)
