# multi-process collective tests (run by the mp runner from coll.list)
check_PROGRAMS += test/mp/mp_coll
test_mp_mp_coll_SOURCES = test/mp/mp_coll.c
test_mp_mp_coll_LDADD = libvcoll.la
check_PROGRAMS += test/mp/mp_coll_gather
test_mp_mp_coll_gather_SOURCES = test/mp/mp_coll_gather.c test/mp/mp_util.h
test_mp_mp_coll_gather_LDADD = libvcoll.la
check_PROGRAMS += test/mp/mp_coll_a2a
test_mp_mp_coll_a2a_SOURCES = test/mp/mp_coll_a2a.c test/mp/mp_util.h
test_mp_mp_coll_a2a_LDADD = libvcoll.la
check_PROGRAMS += test/mp/mp_loc
test_mp_mp_loc_SOURCES = test/mp/mp_loc.c test/mp/mp_util.h
test_mp_mp_loc_LDADD = libvcoll.la
check_PROGRAMS += test/mp/mp_userop
test_mp_mp_userop_SOURCES = test/mp/mp_userop.c test/mp/mp_util.h
test_mp_mp_userop_LDADD = libvcoll.la
