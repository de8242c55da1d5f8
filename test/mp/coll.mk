# multi-process collective tests (run by the mp runner from coll.list)
check_PROGRAMS += test/mp/mp_coll
test_mp_mp_coll_SOURCES = test/mp/mp_coll.c
test_mp_mp_coll_LDADD = libvcoll.la
