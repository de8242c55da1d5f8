libvcoll_int_la_SOURCES += \
	src/core/ctx.h src/core/ctx.c src/core/config.h src/core/config.c src/core/log.h src/core/log.c \
	src/core/error.h src/core/error.c src/core/request.h src/core/request.c \
	src/core/comm.h src/core/ops.h src/core/ops.c \
	src/core/clock.h src/core/clock.c src/core/list.h \
	src/core/copy.h src/core/copy.c
