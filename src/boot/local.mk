libvcoll_int_la_SOURCES += src/boot/boot.h src/boot/pmix.c src/boot/launcher.c src/boot/nodes.c src/boot/exchange.c src/boot/agree.c
