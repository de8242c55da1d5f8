# libFuzzer harnesses for every parser of wire data and of user files (configure --enable-fuzzers,
# CC=clang). contrib/fuzz.sh builds and runs them; the seed corpora live in
# test/fuzz/corpus/<harness>/.
EXTRA_DIST += test/fuzz/fuzz_p2p.c test/fuzz/fuzz_ud.c test/fuzz/fuzz_ud_ooo.c \
	test/fuzz/fuzz_rules.c test/fuzz/fuzz_a2av_hdr.c test/fuzz/fuzz_shm_ring.c \
	$(wildcard $(srcdir)/test/fuzz/corpus/*/*)
if FUZZERS
noinst_PROGRAMS += test/fuzz/fuzz_p2p test/fuzz/fuzz_ud test/fuzz/fuzz_ud_ooo test/fuzz/fuzz_rules \
	test/fuzz/fuzz_a2av_hdr test/fuzz/fuzz_shm_ring
test_fuzz_fuzz_p2p_SOURCES = test/fuzz/fuzz_p2p.c
test_fuzz_fuzz_p2p_LDADD = libvcoll_int.la
test_fuzz_fuzz_p2p_LDFLAGS = $(VC_FUZZ_LDFLAGS)
test_fuzz_fuzz_ud_SOURCES = test/fuzz/fuzz_ud.c
test_fuzz_fuzz_ud_LDADD = libvcoll_int.la
test_fuzz_fuzz_ud_LDFLAGS = $(VC_FUZZ_LDFLAGS)
test_fuzz_fuzz_ud_ooo_SOURCES = test/fuzz/fuzz_ud_ooo.c
test_fuzz_fuzz_ud_ooo_LDADD = libvcoll_int.la
test_fuzz_fuzz_ud_ooo_LDFLAGS = $(VC_FUZZ_LDFLAGS)
test_fuzz_fuzz_rules_SOURCES = test/fuzz/fuzz_rules.c
test_fuzz_fuzz_rules_LDADD = libvcoll_int.la
test_fuzz_fuzz_rules_LDFLAGS = $(VC_FUZZ_LDFLAGS)
test_fuzz_fuzz_a2av_hdr_SOURCES = test/fuzz/fuzz_a2av_hdr.c
test_fuzz_fuzz_a2av_hdr_LDADD = libvcoll_int.la
test_fuzz_fuzz_a2av_hdr_LDFLAGS = $(VC_FUZZ_LDFLAGS)
test_fuzz_fuzz_shm_ring_SOURCES = test/fuzz/fuzz_shm_ring.c
# the ring header copies with core_copy, whose loop is in the library
test_fuzz_fuzz_shm_ring_LDADD = libvcoll_int.la
test_fuzz_fuzz_shm_ring_LDFLAGS = $(VC_FUZZ_LDFLAGS)
endif
