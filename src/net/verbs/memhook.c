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
 * So, as production MPI libraries do, one entry instruction of each libc
 * function becomes a jump to a replacement here (memhook_patch.c: how,
 * without harming a thread inside the function). libc's internal aliases
 * (__munmap, __brk ...) are the same code, so every caller inside libc is
 * covered too. The replacements report the range, then make the system
 * call themselves: for these thin wrappers that is all they did.
 *
 * Valid or off, never stale. The hooks are trusted only while they are
 * seen to work:
 *  - before patching: no sanitizer runtime in the process (their
 *    allocators unmap by raw system call, whatever libvcoll was built
 *    with), no other patcher loaded, every entry decodable;
 *  - after patching: an mmap+munmap and a free() of a block malloc mapped
 *    must each be reported, else the allocator returns memory some other
 *    way (tcmalloc, a sanitizer, a static runtime) and the cache is off;
 *  - on every use (net_memhook_intact): the jumps are still ours and no
 *    known patcher (UCX's libucm, Open MPI's patcher) was loaded since; if
 *    either fails once, the hooks are off for the life of the process.
 * While the jumps point into it, the library that holds the replacements
 * is made no-delete: dlclose must not unmap code libc jumps to.
 *
 * Not seen: raw syscall(2) calls and runtimes with their own system call
 * stubs (Go), and ld.so's own munmap (dlclose).
 *
 * The range is reported *before* the system call: once the call returns,
 * another thread may get the same addresses from mmap and send from them.
 *
 * State is process-wide by nature (there is one libc) and lives here, not
 * in a library context; it outlives vc_finalize.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vcoll.h"
#include "net/verbs/memhook.h"
#include "net/verbs/memhook_patch.h"

#define NTARGETS 6

static struct {
    /* routing: `lock` is held around every call of fn, so clearing fn
       under it guarantees no hook still runs in the consumer being freed */
    pthread_mutex_t lock;
    void (*fn)(void *arg, uintptr_t start, uintptr_t end);
    void *arg;
    /* installing: once per process, under install_lock (never taken by a
       hook, so a hook in another thread cannot wait on it) */
    pthread_mutex_t install_lock;
    int state;                  /* 0 not tried, 1 on, -1 off (atomic) */
    char why[240];
    mh_site_t sites[NTARGETS];
    unsigned long long dl_adds; /* objects loaded when last scanned */
} mh = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, PTHREAD_MUTEX_INITIALIZER, 0, "", {{0}}, 0};

void net_memhook_route(void (*fn)(void *, uintptr_t, uintptr_t), void *arg)
{
    pthread_mutex_lock(&mh.lock);
    mh.arg = arg;
    __atomic_store_n(&mh.fn, fn, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mh.lock);
}

static void report(uintptr_t start, uintptr_t end)
{
    if (end <= start || !__atomic_load_n(&mh.fn, __ATOMIC_ACQUIRE))
        return;             /* nobody listening: no lock on this path */
    pthread_mutex_lock(&mh.lock);
    if (mh.fn)
        mh.fn(mh.arg, start, end);
    pthread_mutex_unlock(&mh.lock);
}

static uintptr_t page_up(uintptr_t a)
{
    return (a + 4095) & ~(uintptr_t)4095;
}

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

#if defined(__GLIBC__)
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
#else
static int hook_brk(void *addr)
{
    (void)addr;
    errno = ENOSYS;
    return -1;
}
#endif

static int hook_shmdt(const void *addr)
{
    /* the segment's size is not known here: forget everything */
    report(0, UINTPTR_MAX);
    return (int)syscall(SYS_shmdt, addr);
}

static const struct target {
    const char *name;
    void *hook;
} targets[NTARGETS] = {
    {"munmap", (void *)hook_munmap},
    {"mremap", (void *)hook_mremap},
    {"madvise", (void *)hook_madvise},
    {"mmap", (void *)hook_mmap},
    {"brk", (void *)hook_brk},
    {"shmdt", (void *)hook_shmdt},
};

/* ---- what else is in the process */

/* A sanitizer's allocator maps and unmaps by raw system call: whatever
   libvcoll was built with, such a runtime in the process blinds the hooks. */
static const char *sanitizer(void)
{
    static const char *const rt[][2] = {
        {"__asan_init", "AddressSanitizer"}, {"__tsan_init", "ThreadSanitizer"},
        {"__msan_init", "MemorySanitizer"}, {"__hwasan_init", "HWAddressSanitizer"},
    };
    for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
        if (dlsym(RTLD_DEFAULT, rt[i][0]))
            return rt[i][1];
    return NULL;
}

/* Libraries that patch libc's memory functions themselves. Loaded, they
   may redirect munmap past our jump at any time. */
static const char *const patchers[][2] = {
    {"libucm.so", "UCX's memory hooks (libucm)"},
    {"mca_patcher_overwrite.so", "Open MPI's code patcher (mca_patcher_overwrite)"},
};

struct scan {
    const char *found;
    unsigned long long adds;
    uintptr_t addr;             /* find_object: the object holding it */
    int index, is_main;
    char name[512];
};

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct scan *sc = arg;
    (void)size;
    sc->adds = info->dlpi_adds;
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    for (size_t i = 0; !sc->found && i < sizeof patchers / sizeof patchers[0]; i++) {
        const char *base = strrchr(n, '/');
        if (strstr(base ? base + 1 : n, patchers[i][0]))
            sc->found = patchers[i][1];
    }
    for (int i = 0; sc->addr && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && sc->addr >= lo && sc->addr < lo + ph->p_memsz) {
            sc->is_main = sc->index == 0;
            snprintf(sc->name, sizeof sc->name, "%s", n);
            sc->addr = 0;
        }
    }
    sc->index++;
    return 0;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;                   /* the counter is the same in every entry */
}

/* ---- proving the hooks see releases */

static uintptr_t probe_at;
static int probe_seen;

static void probe_fn(void *arg, uintptr_t s, uintptr_t e)
{
    (void)arg;
    /* shmdt's "everything" proves nothing about the probe */
    uintptr_t at = __atomic_load_n(&probe_at, __ATOMIC_RELAXED);
    if (!(s == 0 && e == UINTPTR_MAX) && s <= at && at < e)
        __atomic_store_n(&probe_seen, 1, __ATOMIC_RELAXED);
}

static int still_mapped(uintptr_t a)
{
    unsigned char v;
    return syscall(SYS_mincore, (void *)(a & ~(uintptr_t)4095), 4096, &v) == 0 ||
           errno != ENOMEM;
}

static int probe(void *libc, char *why, size_t wlen)
{
    int rc = VC_SUCCESS;
    net_memhook_route(probe_fn, NULL);
    long pg = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(why, wlen, "probe mapping failed: %s", strerror(errno));
        rc = VC_ERR_UNSUPPORTED;
        goto out;
    }
    __atomic_store_n(&probe_seen, 0, __ATOMIC_RELAXED);
    /* atomics: glibc declares munmap and free leaf functions, so the
       compiler may assume they never reach this file's variables */
    __atomic_store_n(&probe_at, (uintptr_t)p + (uintptr_t)pg, __ATOMIC_SEQ_CST);
    munmap(p, 2 * (size_t)pg);
    if (!__atomic_load_n(&probe_seen, __ATOMIC_RELAXED)) {
        snprintf(why, wlen, "an munmap was not reported after patching (another "
                 "library interposes munmap?)");
        rc = VC_ERR_UNSUPPORTED;
        goto out;
    }
    /* above any mmap threshold glibc's malloc uses (at most 32 MiB) */
    const size_t big = (size_t)64 << 20;
    char *m = malloc(big);
    if (!m)
        goto out;               /* nothing learnt, nothing lost */
    m[big / 2] = 1;
    __atomic_store_n(&probe_seen, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&probe_at, (uintptr_t)m + big / 2, __ATOMIC_SEQ_CST);
    free(m);
    if (!__atomic_load_n(&probe_seen, __ATOMIC_RELAXED)) {
        int ours = dlsym(RTLD_DEFAULT, "malloc") == dlsym(libc, "malloc");
        if (!still_mapped(__atomic_load_n(&probe_at, __ATOMIC_RELAXED))) {
            snprintf(why, wlen, "free() returned a 64 MiB block to the system unseen "
                     "(the allocator unmaps by raw system call)");
            rc = VC_ERR_UNSUPPORTED;
        } else if (!ours) {
            snprintf(why, wlen, "malloc is not libc's and kept a freed 64 MiB block: "
                     "cannot prove the hooks see its releases");
            rc = VC_ERR_UNSUPPORTED;
        }
    }
out:
    net_memhook_route(NULL, NULL);
    return rc;
}

/* ---- fork: a thread inside report() holds mh.lock; a child forked then
   would inherit it locked by a thread it does not have, and hang in its
   first munmap. The forking thread takes the lock first. */

static void fork_prepare(void)
{
    pthread_mutex_lock(&mh.lock);
}

static void fork_release(void)
{
    pthread_mutex_unlock(&mh.lock);
}

/* ---- installing */

static int install(char *why, size_t wlen)
{
    const char *san = sanitizer();
    if (san) {
        snprintf(why, wlen, "%s is in the process: its allocator returns memory by raw "
                 "system calls, which the hooks cannot see", san);
        return VC_ERR_UNSUPPORTED;
    }
    struct scan sc = {0};
    sc.addr = (uintptr_t)(void *)hook_munmap;
    dl_iterate_phdr(scan_cb, &sc);
    if (sc.found) {
        snprintf(why, wlen, "%s is loaded and may patch libc after vcoll", sc.found);
        return VC_ERR_UNSUPPORTED;
    }
    mh.dl_adds = sc.adds;
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc) {
        snprintf(why, wlen, "libc.so.6 is not loaded (static binary?)");
        return VC_ERR_UNSUPPORTED;
    }
    int rc = VC_SUCCESS;
    /* all or nothing: plan every function before touching one */
    for (int i = 0; i < NTARGETS && rc == VC_SUCCESS; i++) {
        void *fn = dlsym(libc, targets[i].name);
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        /* libc's own definition, not an interposer's (e.g. ASan's munmap) */
        if (!fn || !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
            snprintf(why, wlen, "libc's %s not found", targets[i].name);
            rc = VC_ERR_UNSUPPORTED;
        } else {
            rc = mh_plan(&mh.sites[i], targets[i].name, fn, sym->st_size,
                         targets[i].hook, why, wlen);
        }
    }
    /* pin the object holding the replacements before libc jumps into it */
    if (rc == VC_SUCCESS && !sc.is_main) {
        void *self = dlopen(sc.name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        Lmid_t ns = LM_ID_BASE;
        if (!self) {
            snprintf(why, wlen, "cannot keep %.120s loaded: %.80s", sc.name, dlerror());
            rc = VC_ERR_UNSUPPORTED;
        } else if (dlinfo(self, RTLD_DI_LMID, &ns) || ns != LM_ID_BASE) {
            /* dlmopen: the libc found here is this namespace's copy, not
               the one the application frees through */
            snprintf(why, wlen, "libvcoll was loaded with dlmopen into its own namespace: "
                     "the application's libc cannot be patched from there");
            rc = VC_ERR_UNSUPPORTED;
        }
    }
    if (rc == VC_SUCCESS && pthread_atfork(fork_prepare, fork_release, fork_release)) {
        snprintf(why, wlen, "pthread_atfork failed");
        rc = VC_ERR_UNSUPPORTED;
    }
    if (rc == VC_SUCCESS)
        rc = mh_apply(mh.sites, NTARGETS, why, wlen);
    if (rc == VC_SUCCESS)
        rc = probe(libc, why, wlen);
    dlclose(libc);
    return rc;
}

int net_memhook_install(char *why, size_t wlen)
{
    pthread_mutex_lock(&mh.install_lock);
    if (!mh.state) {
        char w[sizeof mh.why] = "";
        int rc = install(w, sizeof w);
        if (rc == VC_SUCCESS)
            snprintf(w, sizeof w, "libc's munmap, mremap, madvise, mmap, brk and shmdt "
                     "redirected, and seen to report");
        memcpy(mh.why, w, sizeof w);
        __atomic_store_n(&mh.state, rc == VC_SUCCESS ? 1 : -1, __ATOMIC_RELEASE);
    }
    int on = __atomic_load_n(&mh.state, __ATOMIC_ACQUIRE) > 0;
    if (why)
        snprintf(why, wlen, "%s", mh.why);
    pthread_mutex_unlock(&mh.install_lock);
    return on ? VC_SUCCESS : VC_ERR_UNSUPPORTED;
}

/* Turn the hooks off for good (the jumps stay: they are harmless). */
static void lose(const char *fmt, const char *what)
{
    pthread_mutex_lock(&mh.install_lock);
    if (__atomic_load_n(&mh.state, __ATOMIC_ACQUIRE) > 0) {
        snprintf(mh.why, sizeof mh.why, fmt, what);
        __atomic_store_n(&mh.state, -1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&mh.install_lock);
}

int net_memhook_intact(void)
{
    if (__atomic_load_n(&mh.state, __ATOMIC_ACQUIRE) <= 0)
        return 0;
    if (!mh_intact(mh.sites, NTARGETS)) {
        struct scan sc = {0};
        dl_iterate_phdr(scan_cb, &sc);
        char w[sizeof mh.why] = "libc was re-patched by another library after vcoll";
        for (int i = 0; i < NTARGETS; i++)
            if (!mh_intact(&mh.sites[i], 1)) {
                snprintf(w, sizeof w, "libc's %s was re-patched by another library after "
                         "vcoll%s%s%s", mh.sites[i].name, sc.found ? " (" : "",
                         sc.found ? sc.found : "", sc.found ? " is loaded)" : "");
                break;
            }
        lose("%s", w);
        return 0;
    }
    unsigned long long adds = 0;
    dl_iterate_phdr(adds_cb, &adds);
    if (adds != __atomic_load_n(&mh.dl_adds, __ATOMIC_RELAXED)) {
        struct scan sc = {0};
        dl_iterate_phdr(scan_cb, &sc);
        __atomic_store_n(&mh.dl_adds, sc.adds, __ATOMIC_RELAXED);
        if (sc.found) {
            lose("%s was loaded after vcoll's hooks", sc.found);
            return 0;
        }
    }
    return __atomic_load_n(&mh.state, __ATOMIC_ACQUIRE) > 0;
}

int net_memhook_state(char *why, size_t wlen)
{
    pthread_mutex_lock(&mh.install_lock);
    int st = mh.state;
    if (why)
        snprintf(why, wlen, "%s", st ? mh.why : "not installed");
    pthread_mutex_unlock(&mh.install_lock);
    return st;
}
