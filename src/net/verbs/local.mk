libvcoll_int_la_SOURCES += src/net/verbs/device.h src/net/verbs/device.c \
	src/net/verbs/rc.h src/net/verbs/rc_open.c src/net/verbs/rc_qp.c src/net/verbs/rc_wire.c \
	src/net/verbs/rc_send.c src/net/verbs/rc_progress.c src/net/verbs/rc_rdma.c \
	src/net/verbs/rc_reg.c src/net/verbs/rcache.h src/net/verbs/rcache.c \
	src/net/verbs/memhook.h src/net/verbs/memhook.c \
	src/net/verbs/memhook_patch.h src/net/verbs/memhook_patch.c \
	src/net/verbs/port_open.c src/net/verbs/async.c src/net/verbs/ud.h src/net/verbs/ud_open.c \
	src/net/verbs/ud_send.c src/net/verbs/ud_progress.c src/net/verbs/ud_reassemble.c src/net/verbs/ud_reorder.c \
	src/net/verbs/hb.h src/net/verbs/hb_open.c src/net/verbs/hb_thread.c \
	src/net/verbs/usage.c src/net/verbs/vdev.c
