bin_PROGRAMS += src/tools/vcoll_info
src_tools_vcoll_info_SOURCES = src/tools/vcoll_info.c
src_tools_vcoll_info_LDADD = libvcoll_int.la $(VC_LIBS)
