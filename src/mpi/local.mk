# src/mpi: the MPI drop-in, libvcoll_mpi_<mpi>.so. The same sources build
# once per MPI found by configure, each against that MPI's mpi.h and
# library (per-target flags keep the two sets of objects apart).
VCMPI_SOURCES = src/mpi/vcmpi.h src/mpi/weak.h src/mpi/init.c src/mpi/comm.c \
	src/mpi/types.c src/mpi/error.c src/mpi/stats.c src/mpi/request.c \
	src/mpi/reduce.c src/mpi/rooted.c src/mpi/allx.c src/mpi/stage.c \
	src/mpi/progress.c
# Only the MPI entry points are its interface.
VCMPI_LDFLAGS = -shared -version-info 0:0:0 -export-symbols-regex '^P?MPI_'

if HAVE_MPICC_OMPI
lib_LTLIBRARIES += libvcoll_mpi_openmpi.la
libvcoll_mpi_openmpi_la_SOURCES = $(VCMPI_SOURCES)
libvcoll_mpi_openmpi_la_CPPFLAGS = $(AM_CPPFLAGS) $(OMPI_CFLAGS)
libvcoll_mpi_openmpi_la_LIBADD = libvcoll.la $(OMPI_LIBS)
libvcoll_mpi_openmpi_la_LDFLAGS = $(VCMPI_LDFLAGS)
endif

if HAVE_MPICC_MPICH
lib_LTLIBRARIES += libvcoll_mpi_mpich.la
libvcoll_mpi_mpich_la_SOURCES = $(VCMPI_SOURCES)
libvcoll_mpi_mpich_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPICH_CFLAGS)
libvcoll_mpi_mpich_la_LIBADD = libvcoll.la $(MPICH_LIBS)
libvcoll_mpi_mpich_la_LDFLAGS = $(VCMPI_LDFLAGS)
endif
