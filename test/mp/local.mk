# Multi-process tests: self-checking programs, run by the scripts below.
MP_LDADD = libvcoll_int.la
check_PROGRAMS += test/mp/mp_p2p test/mp/mp_kill test/mp/mp_scoped test/mp/mp_busy test/mp/mp_threads
test_mp_mp_p2p_SOURCES = test/mp/mp_p2p.c test/mp/mp_util.h
test_mp_mp_p2p_LDADD = $(MP_LDADD)
test_mp_mp_kill_SOURCES = test/mp/mp_kill.c test/mp/mp_util.h
test_mp_mp_kill_LDADD = $(MP_LDADD)
test_mp_mp_scoped_SOURCES = test/mp/mp_scoped.c test/mp/mp_util.h
test_mp_mp_scoped_LDADD = $(MP_LDADD)
test_mp_mp_busy_SOURCES = test/mp/mp_busy.c test/mp/mp_util.h
test_mp_mp_busy_LDADD = $(MP_LDADD)
# the public library, as a threaded program would link it
test_mp_mp_threads_SOURCES = test/mp/mp_threads.c test/mp/mp_util.h
test_mp_mp_threads_LDADD = libvcoll.la -lpthread
check_PROGRAMS += test/mp/mp_shmcoll
test_mp_mp_shmcoll_SOURCES = test/mp/mp_shmcoll.c test/mp/mp_util.h
test_mp_mp_shmcoll_LDADD = $(MP_LDADD)
# not a test: times algorithms against each other in one job (guest-hier-ratios.sh)
check_PROGRAMS += test/mp/mp_alg_bench
test_mp_mp_alg_bench_SOURCES = test/mp/mp_alg_bench.c
test_mp_mp_alg_bench_LDADD = $(MP_LDADD)
check_PROGRAMS += test/mp/mp_probe
test_mp_mp_probe_SOURCES = test/mp/mp_probe.c test/mp/mp_util.h
test_mp_mp_probe_LDADD = libvcoll.la
# LD_PRELOAD fault injection for pmix-keys.sh (a module: never installed)
check_LTLIBRARIES += test/mp/pmix_hide.la
test_mp_pmix_hide_la_SOURCES = test/mp/pmix_hide.c
test_mp_pmix_hide_la_LDFLAGS = -module -avoid-version -rpath /nowhere
test_mp_pmix_hide_la_LIBADD = $(PMIX_LIBS) -ldl
TESTS += test/mp/launchers.sh test/mp/pmix-keys.sh test/mp/mpirun.sh test/mp/kill.sh test/mp/tune.sh \
	test/mp/srun.sh
EXTRA_DIST += test/mp/run-mp.sh test/mp/mpirun.sh test/mp/srun.sh test/mp/kill.sh \
	test/mp/launchers.sh test/mp/pmix-keys.sh test/mp/tune.sh $(wildcard $(srcdir)/test/mp/*.list)
include test/mp/coll.mk
include test/mp/verbs.mk
