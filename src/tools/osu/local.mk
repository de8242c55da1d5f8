# src/tools/osu: OSU-style microbenchmarks (see src/tools/osu/README.md).
#
# The same sources build twice:
#  - vcoll_osu_<name>: against libvcoll, installed in $(bindir);
#  - mpi_osu_<name>: with -DBENCH_MPI and an MPI compiler found by configure,
#    for side-by-side numbers (contrib/compare.sh). Open MPI builds live in
#    src/tools/osu/openmpi/, MPICH builds in src/tools/osu/mpich/, and are
#    installed in $(pkglibexecdir)/openmpi and $(pkglibexecdir)/mpich
#    (same program names, so they must not share $(bindir)).

OSU_COMMON = src/tools/osu/bench_common.c src/tools/osu/bench_common.h \
	src/tools/osu/bench_backend.h

bin_PROGRAMS += \
	src/tools/osu/vcoll_osu_latency \
	src/tools/osu/vcoll_osu_bw \
	src/tools/osu/vcoll_osu_bibw \
	src/tools/osu/vcoll_osu_bcast \
	src/tools/osu/vcoll_osu_reduce \
	src/tools/osu/vcoll_osu_allreduce \
	src/tools/osu/vcoll_osu_allreduce_persistent \
	src/tools/osu/vcoll_osu_allgather \
	src/tools/osu/vcoll_osu_gather \
	src/tools/osu/vcoll_osu_alltoall \
	src/tools/osu/vcoll_osu_neighbor_alltoall \
	src/tools/osu/vcoll_osu_barrier

src_tools_osu_vcoll_osu_latency_SOURCES = src/tools/osu/osu_latency.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_latency_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_bw_SOURCES = src/tools/osu/osu_bw.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_bw_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_bibw_SOURCES = src/tools/osu/osu_bibw.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_bibw_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_bcast_SOURCES = src/tools/osu/osu_bcast.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_bcast_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_reduce_SOURCES = src/tools/osu/osu_reduce.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_reduce_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_allreduce_SOURCES = src/tools/osu/osu_allreduce.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_allreduce_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_allreduce_persistent_SOURCES = src/tools/osu/osu_allreduce_persistent.c \
	$(OSU_COMMON)
src_tools_osu_vcoll_osu_allreduce_persistent_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_allgather_SOURCES = src/tools/osu/osu_allgather.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_allgather_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_gather_SOURCES = src/tools/osu/osu_gather.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_gather_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_alltoall_SOURCES = src/tools/osu/osu_alltoall.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_alltoall_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_neighbor_alltoall_SOURCES = src/tools/osu/osu_neighbor_alltoall.c \
	$(OSU_COMMON)
src_tools_osu_vcoll_osu_neighbor_alltoall_LDADD = libvcoll.la
src_tools_osu_vcoll_osu_barrier_SOURCES = src/tools/osu/osu_barrier.c $(OSU_COMMON)
src_tools_osu_vcoll_osu_barrier_LDADD = libvcoll.la

# ---- MPI builds of the same sources (optional) ----
# The MPI wrapper compilers cannot be per-target CC in automake, so these are
# plain rules; they are SCRIPTS only so that `make` builds them and
# `make install`/`uninstall` handle them without hooks.
OSU_MPI_DEPS = $(srcdir)/src/tools/osu/bench_common.c \
	$(srcdir)/src/tools/osu/bench_common.h $(srcdir)/src/tools/osu/bench_backend.h
OSU_MPI_FLAGS = -DBENCH_MPI $(CFLAGS) -Wall -I$(srcdir)/src/tools/osu \
	-o $@ $< $(srcdir)/src/tools/osu/bench_common.c

if HAVE_MPICC_OMPI
osu_ompidir = $(pkglibexecdir)/openmpi
osu_ompi_SCRIPTS = \
	src/tools/osu/openmpi/mpi_osu_latency \
	src/tools/osu/openmpi/mpi_osu_bw \
	src/tools/osu/openmpi/mpi_osu_bibw \
	src/tools/osu/openmpi/mpi_osu_bcast \
	src/tools/osu/openmpi/mpi_osu_reduce \
	src/tools/osu/openmpi/mpi_osu_allreduce \
	src/tools/osu/openmpi/mpi_osu_allgather \
	src/tools/osu/openmpi/mpi_osu_gather \
	src/tools/osu/openmpi/mpi_osu_alltoall \
	src/tools/osu/openmpi/mpi_osu_neighbor_alltoall \
	src/tools/osu/openmpi/mpi_osu_allreduce_persistent \
	src/tools/osu/openmpi/mpi_osu_barrier
CLEANFILES += $(osu_ompi_SCRIPTS)
endif

if HAVE_MPICC_MPICH
osu_mpichdir = $(pkglibexecdir)/mpich
osu_mpich_SCRIPTS = \
	src/tools/osu/mpich/mpi_osu_latency \
	src/tools/osu/mpich/mpi_osu_bw \
	src/tools/osu/mpich/mpi_osu_bibw \
	src/tools/osu/mpich/mpi_osu_bcast \
	src/tools/osu/mpich/mpi_osu_reduce \
	src/tools/osu/mpich/mpi_osu_allreduce \
	src/tools/osu/mpich/mpi_osu_allgather \
	src/tools/osu/mpich/mpi_osu_gather \
	src/tools/osu/mpich/mpi_osu_alltoall \
	src/tools/osu/mpich/mpi_osu_neighbor_alltoall \
	src/tools/osu/mpich/mpi_osu_allreduce_persistent \
	src/tools/osu/mpich/mpi_osu_barrier
CLEANFILES += $(osu_mpich_SCRIPTS)
endif

src/tools/osu/openmpi/mpi_osu_%: $(srcdir)/src/tools/osu/osu_%.c $(OSU_MPI_DEPS)
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_OMPI) $(OSU_MPI_FLAGS)

src/tools/osu/mpich/mpi_osu_%: $(srcdir)/src/tools/osu/osu_%.c $(OSU_MPI_DEPS)
	$(AM_V_CCLD)$(MKDIR_P) $(@D) && $(MPICC_MPICH) $(OSU_MPI_FLAGS)

EXTRA_DIST += src/tools/osu/README.md

# ---- test: every benchmark runs and its table parses (needs mpirun.openmpi) ----
TESTS += test/osu/check-osu.sh
EXTRA_DIST += test/osu/check-osu.sh
