# CUnit unit tests. Without CUnit (configure warned) `make check` stops
# before running anything and says what to install.
if HAVE_CUNIT
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
check_PROGRAMS += test/unit/test_rcache
test_unit_test_rcache_SOURCES = test/unit/test_rcache.c
test_unit_test_rcache_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_rcache
check_PROGRAMS += test/unit/test_ud_reorder
test_unit_test_ud_reorder_SOURCES = test/unit/test_ud_reorder.c
test_unit_test_ud_reorder_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_ud_reorder
else
check_SCRIPTS += cunit-missing
cunit-missing:
	@echo "make check: CUnit was not found when configure ran, so the unit tests cannot be built." >&2; \
	echo "make check: install it (Debian/Ubuntu: apt-get install libcunit1-dev), then re-run configure." >&2; \
	exit 1
endif
.PHONY: cunit-missing
# outside the condition: a tarball made without CUnit must still hold them
EXTRA_DIST += test/unit/topo/two_numa.xml test/unit/topo/one_numa_two_hca.xml \
	test/unit/topo/snc_package.xml
# (no CUnit needed) every public call that touches library state takes the VC_THREAD_MULTIPLE lock
TESTS += test/unit/api_lock.sh
EXTRA_DIST += test/unit/api_lock.sh
