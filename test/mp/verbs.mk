# verbs transport checks (run with VCOLL_NET=rc in the SoftRoCE guest; they
# pass on shm too)
check_PROGRAMS += test/mp/mp_verbs_rndv
test_mp_mp_verbs_rndv_SOURCES = test/mp/mp_verbs_rndv.c
test_mp_mp_verbs_rndv_LDADD = libvcoll.la
EXTRA_DIST += test/mp/verbs.list
