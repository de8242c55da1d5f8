# test/verbs/local.mk - verbs tests in the SoftRoCE guest (needs root, QEMU).
# Not part of `make check` (a guest boot takes 10-20 s and needs root);
# run `make check-verbs` explicitly.
EXTRA_DIST += doc/scaling.md test/verbs/selftest.c test/verbs/guest-suite.sh test/verbs/verbs.list test/verbs/verbs2.list \
	test/verbs/run-verbs-tests.sh test/verbs/ud-timeout.sh \
	test/verbs/rc-error.sh test/verbs/rcache-stale.sh test/verbs/ud-busy.sh test/verbs/remote-kill.sh test/verbs/nodes.list \
	test/verbs/guest-nodes.sh test/verbs/nodes-errors.sh test/verbs/rc-oneside.sh \
	test/verbs/rc-first-contact.sh test/verbs/ud-acks.sh

# the guest runner's option checks (host only: they fail before any boot)
TESTS += test/verbs/vm-options.sh
EXTRA_DIST += test/verbs/vm-options.sh

check-verbs: all $(check_PROGRAMS)
	$(top_srcdir)/test/verbs/run-verbs-tests.sh $(abs_top_builddir)
.PHONY: check-verbs

# multi-node agreement check (built with `make check`, run by the guest
# suite on emulated nodes; it passes on one node too)
check_PROGRAMS += test/verbs/mp_nodes
test_verbs_mp_nodes_SOURCES = test/verbs/mp_nodes.c test/mp/mp_util.h
test_verbs_mp_nodes_LDADD = libvcoll_int.la

# one-sided RC failure (run by test/verbs/rc-oneside.sh in the guest)
check_PROGRAMS += test/verbs/mp_oneside
test_verbs_mp_oneside_SOURCES = test/verbs/mp_oneside.c test/mp/mp_util.h
test_verbs_mp_oneside_LDADD = libvcoll_int.la

# connections on demand: no QP at init, exactly the peers used afterwards
check_PROGRAMS += test/verbs/mp_ondemand
test_verbs_mp_ondemand_SOURCES = test/verbs/mp_ondemand.c test/mp/mp_util.h
test_verbs_mp_ondemand_LDADD = libvcoll_int.la

# RC falls back to UD per peer past the QP budget (VCOLL_RC_MAX_QP)
check_PROGRAMS += test/verbs/mp_fallback
test_verbs_mp_fallback_SOURCES = test/verbs/mp_fallback.c test/mp/mp_util.h
test_verbs_mp_fallback_LDADD = libvcoll_int.la
