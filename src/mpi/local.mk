# src/mpi: the MPI drop-in, libvcoll_mpi_<mpi>.so. The same sources build
# once per MPI found by configure, each against that MPI's mpi.h and
# library (per-target flags keep the two sets of objects apart).
VCMPI_SOURCES = src/mpi/vcmpi.h src/mpi/weak.h src/mpi/init.c src/mpi/comm.c \
	src/mpi/types.c src/mpi/error.c src/mpi/stats.c src/mpi/request.c \
	src/mpi/reduce.c src/mpi/alias.c src/mpi/rooted.c src/mpi/allx.c src/mpi/stage.c src/mpi/large_rt.c src/mpi/flatten.c src/mpi/ops.c \
	src/mpi/progress.c src/mpi/neighbor.c
# Only the MPI entry points are its interface: C's, and the Fortran
# bindings' (fortran_rt.h), generated from one table.
# Calls between its own entry points (a Fortran or persistent form calling
# the C one) bind inside the library (-Bsymbolic-functions): a profiling
# tool's MPI_Iallreduce must not take the place of the body a persistent
# init runs, which would hand back MPI's non-persistent request.
VCMPI_LDFLAGS = -shared -version-info 0:0:0 -export-symbols-regex '^(P?MPIX?_|mpix?_|ompix?_)' \
	-Wl,-Bsymbolic-functions
VCMPI_SOURCES += src/mpi/fortran_rt.h src/mpi/fortran_rt.c
# the Fortran entry points, the large-count and the persistent forms and
# the blocking calls vcoll must move behind (blocking.c), from
# one table
VCMPI_GEN = src/mpi/fortran.c src/mpi/large.c src/mpi/persist.c src/mpi/blocking.c
src/mpi/fortran.c src/mpi/large.c src/mpi/persist.c src/mpi/blocking.c: $(srcdir)/src/mpi/calls.tab $(srcdir)/src/mpi/gen-calls.sh
	$(AM_V_GEN)$(MKDIR_P) src/mpi && \
	$(SHELL) $(srcdir)/src/mpi/gen-calls.sh $(@F:.c=) $(srcdir)/src/mpi/calls.tab > $@.tmp && \
	mv $@.tmp $@
BUILT_SOURCES += $(VCMPI_GEN)
CLEANFILES += $(VCMPI_GEN)
EXTRA_DIST += src/mpi/calls.tab src/mpi/gen-calls.sh

if HAVE_MPICC_OMPI
lib_LTLIBRARIES += libvcoll_mpi_openmpi.la
libvcoll_mpi_openmpi_la_SOURCES = $(VCMPI_SOURCES)
nodist_libvcoll_mpi_openmpi_la_SOURCES = $(VCMPI_GEN)
libvcoll_mpi_openmpi_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/src/mpi $(OMPI_CFLAGS)
libvcoll_mpi_openmpi_la_LIBADD = libvcoll.la $(OMPI_LIBS)
libvcoll_mpi_openmpi_la_LDFLAGS = $(VCMPI_LDFLAGS)
endif

if HAVE_MPICC_MPICH
lib_LTLIBRARIES += libvcoll_mpi_mpich.la
libvcoll_mpi_mpich_la_SOURCES = $(VCMPI_SOURCES)
nodist_libvcoll_mpi_mpich_la_SOURCES = $(VCMPI_GEN)
libvcoll_mpi_mpich_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/src/mpi $(MPICH_CFLAGS)
libvcoll_mpi_mpich_la_LIBADD = libvcoll.la $(MPICH_LIBS)
libvcoll_mpi_mpich_la_LDFLAGS = $(VCMPI_LDFLAGS)
endif
