bin_PROGRAMS += src/tools/vcoll_info
src_tools_vcoll_info_SOURCES = src/tools/vcoll_info.c
src_tools_vcoll_info_LDADD = libvcoll_int.la $(VC_LIBS)
# where the MPI drop-ins built beside it are installed, for their preload lines
src_tools_vcoll_info_CPPFLAGS = $(AM_CPPFLAGS) -DVC_LIBDIR='"$(libdir)"' \
	-DVC_MPI_DROPINS='"$(VC_MPI_DROPINS)"'
# per-process cost of vcoll at init, after the first collective and after
# all pairs talked (doc/scaling.md)
bin_PROGRAMS += src/tools/vcoll_scale
src_tools_vcoll_scale_SOURCES = src/tools/vcoll_scale.c
src_tools_vcoll_scale_LDADD = libvcoll_int.la $(VC_LIBS)
# measures every collective's algorithms here and writes a rules file
bin_PROGRAMS += src/tools/vcoll_tune
src_tools_vcoll_tune_SOURCES = src/tools/vcoll_tune.c src/tools/tune_pick.c src/tools/tune_pick.h
src_tools_vcoll_tune_LDADD = libvcoll_int.la $(VC_LIBS)
