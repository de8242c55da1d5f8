/*
 * memhook_asan.c -- an AddressSanitizer-built application over a libvcoll
 * built without it. ASan's allocator maps and unmaps by raw system call, so
 * memory hooks in libc never see its large frees: the registration cache
 * must be off here, and say why, although libvcoll itself has no ASan
 * flags. (Built with -fsanitize=address by test/unit/local.mk.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "net/verbs/memhook.h"

/* no leak report at exit: not what this checks */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

int main(void)
{
    char why[240];
    int rc = net_memhook_install(why, sizeof why);
    printf("memory hooks in an ASan application: %s (%s)\n",
           rc == VC_SUCCESS ? "ON" : "off", why);
    if (rc == VC_SUCCESS) {
        fprintf(stderr, "memhook_asan: hooks trusted although ASan's allocator bypasses them\n");
        return 1;
    }
    if (!strstr(why, "AddressSanitizer")) {
        fprintf(stderr, "memhook_asan: refused, but the reason does not name the sanitizer\n");
        return 1;
    }
    return 0;
}
