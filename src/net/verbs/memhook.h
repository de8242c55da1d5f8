/*
 * memhook.h -- be told when memory goes back to the system, so cached
 * memory registrations never outlive the pages they pinned (rcache.h).
 *
 * Mechanism (memhook.c explains the choice): the entry points of libc's
 * munmap, mremap, madvise, mmap, brk and shmdt are patched to jump to
 * replacements that report the affected range and make the system call
 * themselves. Patching the code, rather than interposing the symbols, also
 * catches libc's own internal calls: free() and realloc() of large blocks,
 * malloc's heap trimming.
 */
#ifndef VC_NET_VERBS_MEMHOOK_H
#define VC_NET_VERBS_MEMHOOK_H

#include <stddef.h>
#include <stdint.h>

/* Patch libc once per process. VC_SUCCESS (also when already patched), or
 * VC_ERR_UNSUPPORTED with the reason in why (not x86-64 glibc, libc's code
 * not as expected or already patched by someone else, text not writable). */
int net_memhook_install(char *why, size_t wlen);
/* Whether net_memhook_install would succeed, without patching (vcoll_info). */
int net_memhook_check(char *why, size_t wlen);
/* Send every released range [start, end) to fn(arg, ...) from now on, in
 * whichever thread releases it; fn must not allocate, free or block.
 * fn == NULL stops it; when that returns, no call of the old fn runs. */
void net_memhook_route(void (*fn)(void *arg, uintptr_t start, uintptr_t end),
                       void *arg);

#endif
