/*
 * memhook.h -- be told when memory goes back to the system, so cached
 * memory registrations never outlive the pages they pinned (rcache.h).
 *
 * Mechanism (memhook.c explains the choice): one entry instruction of
 * libc's munmap, mremap, madvise, mmap, brk and shmdt becomes a jump to
 * replacements that report the affected range and make the system call
 * themselves. Patching the code, rather than interposing the symbols, also
 * catches libc's own internal calls: free() and realloc() of large blocks,
 * malloc's heap trimming.
 */
#ifndef VC_NET_VERBS_MEMHOOK_H
#define VC_NET_VERBS_MEMHOOK_H

#include <stddef.h>
#include <stdint.h>

/* Redirect libc's functions once per process and prove the redirection
 * reports releases (memhook.c lists the checks). VC_SUCCESS (also when
 * already done), or VC_ERR_UNSUPPORTED with the reason in why: not x86-64,
 * libc's code not as expected or patched by someone else, a sanitizer
 * runtime or an allocator the hooks cannot see. why may be NULL. */
int net_memhook_install(char *why, size_t wlen);
/* Are the hooks still trustworthy? 0 once they are not (another library
 * re-patched an entry, or a known patcher was loaded); never 1 again. A few
 * loads and one dl_iterate_phdr: call it before trusting a cached
 * registration. */
int net_memhook_intact(void);
/* 1 on, -1 off, 0 never tried; why says what is in force and why. */
int net_memhook_state(char *why, size_t wlen);
/* Send every released range [start, end) to fn(arg, ...) from now on, in
 * whichever thread releases it; fn must not allocate, free or block.
 * fn == NULL stops it; when that returns, no call of the old fn runs. */
void net_memhook_route(void (*fn)(void *arg, uintptr_t start, uintptr_t end),
                       void *arg);

#endif
