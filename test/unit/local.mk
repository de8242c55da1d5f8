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
check_PROGRAMS += test/unit/test_reduce_isa
test_unit_test_reduce_isa_SOURCES = test/unit/test_reduce_isa.c
test_unit_test_reduce_isa_LDADD = libvcoll_int.la $(CUNIT_LIBS) -lm
TESTS += test/unit/test_reduce_isa
check_PROGRAMS += test/unit/test_rcache
test_unit_test_rcache_SOURCES = test/unit/test_rcache.c
test_unit_test_rcache_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_rcache
# the hooks in a shared process: threads, another patcher, dlclose (its
# own copy of the hook code in a module it can dlopen and dlclose)
check_PROGRAMS += test/unit/test_memhook
test_unit_test_memhook_SOURCES = test/unit/test_memhook.c
test_unit_test_memhook_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMEMHOOK_DL='"$(abs_builddir)/test/unit/.libs/libmemhook_dl.so"'
test_unit_test_memhook_LDADD = libvcoll_int.la $(CUNIT_LIBS) -ldl
TESTS += test/unit/test_memhook
check_LTLIBRARIES += test/unit/libmemhook_dl.la
test_unit_libmemhook_dl_la_SOURCES = src/net/verbs/memhook.c src/net/verbs/memhook_patch.c
test_unit_libmemhook_dl_la_CPPFLAGS = $(AM_CPPFLAGS)
test_unit_libmemhook_dl_la_LDFLAGS = -module -avoid-version -shared -rpath $(abs_builddir)/test/unit
test_unit_libmemhook_dl_la_LIBADD = -ldl -lpthread
if HAVE_ASAN_APP
check_PROGRAMS += test/unit/memhook_asan
test_unit_memhook_asan_SOURCES = test/unit/memhook_asan.c
test_unit_memhook_asan_CFLAGS = $(AM_CFLAGS) -fsanitize=address
test_unit_memhook_asan_LDFLAGS = -fsanitize=address
test_unit_memhook_asan_LDADD = libvcoll_int.la -ldl
TESTS += test/unit/memhook_asan
check_PROGRAMS += test/unit/test_a2av_hdr
test_unit_test_a2av_hdr_SOURCES = test/unit/test_a2av_hdr.c
test_unit_test_a2av_hdr_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_a2av_hdr
endif
check_PROGRAMS += test/unit/test_p2p_wire
test_unit_test_p2p_wire_SOURCES = test/unit/test_p2p_wire.c test/unit/p2p_world.h
test_unit_test_p2p_wire_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_p2p_wire
check_PROGRAMS += test/unit/test_p2p_eager
test_unit_test_p2p_eager_SOURCES = test/unit/test_p2p_eager.c test/unit/p2p_world.h
test_unit_test_p2p_eager_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_p2p_eager
check_PROGRAMS += test/unit/test_p2p_split
test_unit_test_p2p_split_SOURCES = test/unit/test_p2p_split.c test/unit/p2p_world.h
test_unit_test_p2p_split_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_p2p_split
check_PROGRAMS += test/unit/test_hb
test_unit_test_hb_SOURCES = test/unit/test_hb.c
test_unit_test_hb_LDADD = libvcoll_int.la $(CUNIT_LIBS)
TESTS += test/unit/test_hb
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
EXTRA_DIST += test/unit/memhook_asan.c
EXTRA_DIST += test/unit/topo/two_numa.xml test/unit/topo/one_numa_two_hca.xml \
	test/unit/topo/snc_package.xml
# (no CUnit needed) every public call that touches library state takes the VC_THREAD_MULTIPLE lock
TESTS += test/unit/api_lock.sh
EXTRA_DIST += test/unit/api_lock.sh
EXTRA_DIST += test/unit/coll_talg.h
