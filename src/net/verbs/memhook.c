/*
 * memhook.c -- find out when memory goes back to the system (memhook.h).
 *
 * Why patch libc's code. A cached registration pins the pages that backed
 * a buffer when it was registered; once those pages leave the address
 * space (munmap, mremap, madvise(DONTNEED/FREE/REMOVE), a brk shrink,
 * mmap(MAP_FIXED) over them, shmdt) the same addresses can come back with
 * new pages and the HCA would still move the old ones. The alternatives:
 *  - Interposing the symbols (defining munmap in libvcoll) sees only calls
 *    that go through the PLT. glibc's malloc calls its own internal
 *    aliases: free() of an mmapped block, realloc's mremap, heap trimming
 *    by brk and madvise would all be missed -- and those are how most
 *    application memory goes back.
 *  - mallopt(M_MMAP_MAX, 0) + M_TRIM_THRESHOLD = -1 stops malloc from
 *    returning memory at all, changing the application's footprint, and
 *    glibc still unmaps whole heaps of secondary (per-thread) arenas.
 *  - userfaultfd's UNMAP/REMOVE/REMAP events need every range registered
 *    with the fault handler (a fault on a missing page would then wait for
 *    us) and unprivileged userfaultfd is off by default.
 *  - ODP (IBV_ACCESS_ON_DEMAND) makes the HCA follow the page tables, so
 *    nothing is needed; rc_reg.c uses it when the device offers it, and
 *    does not install these hooks then.
 * So, as production MPI libraries do, the entry of each libc function is
 * overwritten with a jump to a replacement here. libc's internal aliases
 * (__munmap, __brk ...) are the same code, so every caller inside libc is
 * covered too. The replacements report the range, then make the system
 * call themselves (the original code is gone): for these thin wrappers that
 * is all they did. Before a function is patched its first bytes are
 * checked to be code we expect; anything else (already patched by another
 * library, an unknown libc) leaves libc untouched and the cache off.
 *
 * Not seen: raw syscall(2) calls and runtimes with their own system call
 * stubs (sanitizer allocators, Go), and ld.so's own munmap (dlclose).
 *
 * The range is reported *before* the system call: once the call returns,
 * another thread may get the same addresses from mmap and send from them.
 *
 * Process-wide state: the patch is by nature process-wide and outlives
 * vc_finalize; the routing of reports lives in vc_ctx.memhook (ctx.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vcoll.h"
#include "core/ctx.h"
#include "net/verbs/memhook.h"

void net_memhook_route(void (*fn)(void *, uintptr_t, uintptr_t), void *arg)
{
    struct vc_ctx *c = &vc_ctx;
    pthread_mutex_lock(&c->memhook.lock);
    c->memhook.arg = arg;
    __atomic_store_n(&c->memhook.fn, fn, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&c->memhook.lock);
}

static void report(uintptr_t start, uintptr_t end)
{
    struct vc_ctx *c = &vc_ctx;
    if (end <= start || !__atomic_load_n(&c->memhook.fn, __ATOMIC_ACQUIRE))
        return;             /* nobody listening: no lock on this path */
    pthread_mutex_lock(&c->memhook.lock);
    if (c->memhook.fn)
        c->memhook.fn(c->memhook.arg, start, end);
    pthread_mutex_unlock(&c->memhook.lock);
}

static uintptr_t page_up(uintptr_t a)
{
    return (a + 4095) & ~(uintptr_t)4095;
}

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)

/* ---- the replacements: same signatures as libc's, same errno behaviour */

static int hook_munmap(void *addr, size_t len)
{
    report((uintptr_t)addr, page_up((uintptr_t)addr + len));
    return (int)syscall(SYS_munmap, addr, len);
}

static void *hook_mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *dst = NULL;
    if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
        va_list ap;
        va_start(ap, flags);
        dst = va_arg(ap, void *);
        va_end(ap);
    }
    /* the old range always loses its pages (moved, shrunk or left empty);
       growing in place keeps them, but telling is cheaper than proving */
    report((uintptr_t)old, page_up((uintptr_t)old + old_len));
    if (flags & MREMAP_FIXED)
        report((uintptr_t)dst, page_up((uintptr_t)dst + new_len));
    return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, dst);
}

static int hook_madvise(void *addr, size_t len, int advice)
{
    switch (advice) {
    case MADV_DONTNEED:
    case MADV_FREE:
    case MADV_REMOVE:
#ifdef MADV_DONTNEED_LOCKED
    case MADV_DONTNEED_LOCKED:
#endif
        report((uintptr_t)addr, page_up((uintptr_t)addr + len));
        break;
    default:
        break;              /* hints that keep the pages */
    }
    return (int)syscall(SYS_madvise, addr, len, advice);
}

static void *hook_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (off & 4095) {       /* libc's own check, before the kernel's */
        errno = EINVAL;
        return MAP_FAILED;
    }
    if (flags & MAP_FIXED)  /* replaces whatever was mapped there */
        report((uintptr_t)addr, page_up((uintptr_t)addr + len));
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* libc keeps the break in __curbrk (sbrk reads it); brk must update it */
extern void *__curbrk;

static int hook_brk(void *addr)
{
    void *old = __curbrk;
    if (old && (uintptr_t)addr < (uintptr_t)old)
        report(page_up((uintptr_t)addr), page_up((uintptr_t)old));
    void *now = (void *)syscall(SYS_brk, addr);
    __curbrk = now;
    if ((uintptr_t)now < (uintptr_t)addr) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static int hook_shmdt(const void *addr)
{
    /* the segment's size is not known here: forget everything */
    report(0, UINTPTR_MAX);
    return (int)syscall(SYS_shmdt, addr);
}

/* ---- patching */

#define PATCH_LEN 13        /* movabs $hook, %r11 ; jmp *%r11 */

static const struct target {
    const char *name;
    void *hook;
} targets[] = {
    {"munmap", (void *)hook_munmap},
    {"mremap", (void *)hook_mremap},
    {"madvise", (void *)hook_madvise},
    {"mmap", (void *)hook_mmap},
    {"brk", (void *)hook_brk},
    {"shmdt", (void *)hook_shmdt},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static void patch_bytes(unsigned char out[PATCH_LEN], const void *hook)
{
    uint64_t a = (uint64_t)(uintptr_t)hook;
    out[0] = 0x49;
    out[1] = 0xbb;
    memcpy(out + 2, &a, 8);
    out[10] = 0x41;
    out[11] = 0xff;
    out[12] = 0xe3;
}

/* Does the code at p start with a jump (someone patched it already)? */
static int looks_patched(const unsigned char *p)
{
    if (p[0] == 0xe9 || p[0] == 0xeb || (p[0] == 0xff && p[1] == 0x25))
        return 1;
    /* movabs $imm64, %rax/%r11 followed by an indirect jump */
    return (p[0] == 0x48 || p[0] == 0x49) && p[1] >= 0xb8 && p[1] <= 0xbf &&
           (p[10] == 0xff || (p[10] == 0x41 && p[11] == 0xff));
}

/* Find libc's own definition (not an interposer's, e.g. ASan's munmap) and
   check it can take the patch. */
static int locate(void *libc, const struct target *t, unsigned char **at,
                  char *why, size_t wlen)
{
    void *fn = dlsym(libc, t->name);
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!fn || !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
        snprintf(why, wlen, "libc's %s not found", t->name);
        return VC_ERR_UNSUPPORTED;
    }
    if (sym->st_size < 16) {
        snprintf(why, wlen, "libc's %s is %zu bytes, too short to patch", t->name,
                 (size_t)sym->st_size);
        return VC_ERR_UNSUPPORTED;
    }
    if (looks_patched(fn)) {
        snprintf(why, wlen, "libc's %s is already patched by another library "
                 "(Open MPI/UCX memory hooks?)", t->name);
        return VC_ERR_UNSUPPORTED;
    }
    *at = fn;
    return VC_SUCCESS;
}

/* Write the first 16 bytes at once when they are 16-aligned (glibc aligns
   functions so): a thread entering the function meanwhile sees either the
   old code or the whole jump, never half of each. */
static void write16(unsigned char *p, const unsigned char *nb)
{
    uint64_t olo, ohi, nlo, nhi;
    memcpy(&olo, p, 8);
    memcpy(&ohi, p + 8, 8);
    memcpy(&nlo, nb, 8);
    memcpy(&nhi, nb + 8, 8);
    if ((uintptr_t)p % 16) {
        memcpy(p, nb, 16);
        return;
    }
    unsigned char ok;
    __asm__ __volatile__("lock cmpxchg16b %1\n\tsetz %0"
                         : "=q"(ok), "+m"(*(volatile unsigned char (*)[16])p),
                           "+a"(olo), "+d"(ohi)
                         : "b"(nlo), "c"(nhi)
                         : "cc", "memory");
    if (!ok)
        memcpy(p, nb, 16);  /* changed under us: cannot happen for code */
}

static int set_prot(unsigned char *p, int prot)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(pg - 1);
    uintptr_t e = ((uintptr_t)p + 16 + pg - 1) & ~(pg - 1);
    return mprotect((void *)a, e - a, prot);
}

static int install(int dry, char *why, size_t wlen)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc) {
        snprintf(why, wlen, "libc.so.6 is not loaded (static binary?)");
        return VC_ERR_UNSUPPORTED;
    }
    unsigned char *at[NTARGETS];
    int rc = VC_SUCCESS;
    /* all or nothing: check every function before touching one */
    for (size_t i = 0; i < NTARGETS && rc == VC_SUCCESS; i++)
        rc = locate(libc, &targets[i], &at[i], why, wlen);
    dlclose(libc);
    if (rc || dry)
        return rc;
    size_t done = 0;
    for (; done < NTARGETS; done++)
        if (set_prot(at[done], PROT_READ | PROT_WRITE | PROT_EXEC)) {
            snprintf(why, wlen, "cannot make libc's code writable: %s", strerror(errno));
            rc = VC_ERR_UNSUPPORTED;
            break;
        }
    for (size_t i = 0; rc == VC_SUCCESS && i < NTARGETS; i++) {
        unsigned char nb[16];
        memcpy(nb, at[i], 16);
        patch_bytes(nb, targets[i].hook);
        write16(at[i], nb);
    }
    for (size_t i = 0; i < done; i++)
        set_prot(at[i], PROT_READ | PROT_EXEC);
    return rc;          /* x86 fetches modified code without cache flushes */
}

#else

static int install(int dry, char *why, size_t wlen)
{
    (void)dry;
    snprintf(why, wlen, "memory hooks are implemented for x86-64 glibc only");
    return VC_ERR_UNSUPPORTED;
}

#endif

int net_memhook_check(char *why, size_t wlen)
{
    struct vc_ctx *c = &vc_ctx;
    if (c->memhook.installed) {
        snprintf(why, wlen, "%s", c->memhook.why);
        return c->memhook.installed > 0 ? VC_SUCCESS : VC_ERR_UNSUPPORTED;
    }
    return install(1, why, wlen);
}

/* Callers are serialized by vc_init. memhook.lock is not taken: dlopen
   allocates, and a hook in another thread's free() may want that lock. */
int net_memhook_install(char *why, size_t wlen)
{
    struct vc_ctx *c = &vc_ctx;
    if (!c->memhook.installed) {
        int rc = install(0, c->memhook.why, sizeof c->memhook.why);
        if (rc == VC_SUCCESS)
            snprintf(c->memhook.why, sizeof c->memhook.why, "libc's munmap, mremap, "
                     "madvise, mmap, brk and shmdt patched");
        c->memhook.installed = rc == VC_SUCCESS ? 1 : -1;
    }
    snprintf(why, wlen, "%s", c->memhook.why);
    return c->memhook.installed > 0 ? VC_SUCCESS : VC_ERR_UNSUPPORTED;
}
