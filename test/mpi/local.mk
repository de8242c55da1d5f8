# test/mpi: the MPI drop-in under real MPI launchers. The test programs are
# plain MPI programs, built with each MPI's wrapper like the OSU MPI builds
# (plain rules: automake has no per-target CC).
MPI_TEST_DEPS = $(srcdir)/test/mpi/mpi_coll.c
MPI_TEST_BINS =
if HAVE_MPICC_OMPI
MPI_TEST_BINS += test/mpi/openmpi/mpi_coll test/mpi/openmpi/pingpong_mpi \
	test/mpi/openmpi/mpi_std test/mpi/openmpi/mpi_pn
endif
if HAVE_MPICC_MPICH
MPI_TEST_BINS += test/mpi/mpich/mpi_coll test/mpi/mpich/pingpong_mpi test/mpi/mpich/mpi_std \
	test/mpi/mpich/mpi_pn
endif
check_SCRIPTS += $(MPI_TEST_BINS)
CLEANFILES += $(MPI_TEST_BINS)

test/mpi/openmpi/mpi_coll: $(srcdir)/test/mpi/mpi_coll.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_OMPI) $(CFLAGS) -Wall -Wno-stringop-overflow -o $@ $<
test/mpi/mpich/mpi_coll: $(srcdir)/test/mpi/mpi_coll.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_MPICH) $(CFLAGS) -Wall -Wno-stringop-overflow -o $@ $<
test/mpi/openmpi/mpi_std: $(srcdir)/test/mpi/mpi_std.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_OMPI) $(CFLAGS) -Wall -o $@ $<
test/mpi/mpich/mpi_std: $(srcdir)/test/mpi/mpi_std.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_MPICH) $(CFLAGS) -Wall -o $@ $<
# persistent and neighbourhood collectives (the warnings: GCC 12 misreads
# MPI's sentinels MPI_STATUSES_IGNORE and MPI_UNWEIGHTED as arrays)
MPI_PN_FLAGS = -Wall -Wno-stringop-overflow -Wno-stringop-overread
test/mpi/openmpi/mpi_pn: $(srcdir)/test/mpi/mpi_pn.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_OMPI) $(CFLAGS) $(MPI_PN_FLAGS) -o $@ $<
test/mpi/mpich/mpi_pn: $(srcdir)/test/mpi/mpi_pn.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_MPICH) $(CFLAGS) $(MPI_PN_FLAGS) -o $@ $<
test/mpi/openmpi/pingpong_mpi: $(srcdir)/examples/pingpong.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_OMPI) $(CFLAGS) -Wno-stringop-overflow -DPINGPONG_MPI -o $@ $<
test/mpi/mpich/pingpong_mpi: $(srcdir)/examples/pingpong.c
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_MPICH) $(CFLAGS) -Wno-stringop-overflow -DPINGPONG_MPI -o $@ $<

TESTS += test/mpi/dropin.sh
EXTRA_DIST += test/mpi/dropin.sh test/mpi/mpi_coll.c test/mpi/mpi_std.c test/mpi/mpi_pn.c \
	test/mpi/fortran/mpi_coll_f.F90
