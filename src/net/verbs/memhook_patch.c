/*
 * memhook_patch.c -- redirect a running libc function without harming a
 * thread that is inside it (memhook_patch.h).
 *
 * The danger is a thread that is already in the function when its code
 * changes: blocked in the system call (it returns to the instruction after
 * `syscall`), or preempted between two instructions. Overwriting a prologue
 * longer than its first instruction (the 13-byte movabs+jmp this file used
 * to write) leaves such a thread returning into the middle of the new
 * code. Waiting until the process has one thread is no answer either: MPI
 * libraries start their threads before MPI_Init returns, so the cache would
 * be off wherever the drop-in runs.
 *
 * So exactly one instruction is replaced, by a 5-byte `jmp rel32` of the
 * same or shorter length, written with one atomic store:
 *  - every instruction boundary a thread can stand on is either before the
 *    replaced instruction (the thread then reaches the jump) or after it
 *    (unchanged code); none lies inside the 5 new bytes;
 *  - the store is one locked 8- or 16-byte aligned write inside one cache
 *    line, so an instruction fetch sees the old instruction or the whole
 *    jump (the same argument as Windows' hot-patch points); a stale fetch
 *    just runs the old, still correct, instruction once more. The SDM
 *    promises this for no CPU; its strict alternative (int3, a SIGTRAP
 *    handler, membarrier SYNC_CORE) would take a signal over from the
 *    application, which a library sharing the process must not;
 *  - the replaced instruction is the first one at least 5 bytes long; the
 *    instructions before it must be ones whose effect the trampoline can
 *    undo or that do not matter at entry (endbr64, a move into the scratch
 *    registers %r10/%r11, pushes and `sub $n,%rsp`). glibc 2.36's munmap,
 *    madvise, brk and shmdt start with the 5-byte `mov $nr,%eax`; mmap with
 *    `mov %ecx,%r10d` then a 7-byte test; mremap with `sub $0x58,%rsp` then
 *    a 5-byte store. Anything else is refused, and the cache stays off.
 * The replaced instruction never runs again (the replacements make the
 * system call themselves), so it need not be relocated.
 *
 * rel32 reaches +-2 GiB, so the trampolines (undo the stack adjustment,
 * then an absolute jump to the replacement) live in a page mapped near
 * libc. That page is never unmapped.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vcoll.h"
#include "net/verbs/memhook_patch.h"

#if defined(__x86_64__) && defined(__linux__)

enum { I_UNKNOWN, I_PRE, I_SITE };

/* Length and role of one entry instruction; *adj gets what it takes off
   %rsp. A deliberately small decoder: only the forms libc entries use. */
static int insn(const unsigned char *p, int *len, int *adj)
{
    int rex = (p[0] & 0xf0) == 0x40 ? p[0] : 0;
    const unsigned char *q = p + (rex != 0);   /* opcode */
    *adj = 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) {
        *len = 4;                               /* endbr64 */
        return I_PRE;
    }
    if (p[0] == 0x90) {                         /* nop */
        *len = 1;
        return I_PRE;
    }
    if (q[0] >= 0x50 && q[0] <= 0x57 && (!rex || rex == 0x41)) {
        *len = 1 + (rex != 0);                  /* push %reg */
        *adj = 8;
        return I_PRE;
    }
    if (rex == 0x48 && q[0] == 0x83 && q[1] == 0xec && q[2] < 0x80) {
        *len = 4;                               /* sub $imm8,%rsp */
        *adj = q[2];
        return I_PRE;
    }
    if (rex && (q[0] == 0x89 || q[0] == 0x8b) && (q[1] >> 6) == 3) {
        /* register-to-register mov: harmless only into %r10/%r11, which
           no argument or return value uses at entry */
        int dst = q[0] == 0x89 ? (q[1] & 7) | ((rex & 1) << 3)
                               : ((q[1] >> 3) & 7) | ((rex & 4) << 1);
        *len = 3;
        return dst == 10 || dst == 11 ? I_PRE : I_UNKNOWN;
    }
    /* forms at least 5 bytes long: candidates for the jump */
    if (!rex && q[0] >= 0xb8 && q[0] <= 0xbf) {
        *len = 5;                               /* mov $imm32,%r32 */
        return I_SITE;
    }
    if (rex && q[0] >= 0xb8 && q[0] <= 0xbf && !(rex & 8)) {
        *len = 6;
        return I_SITE;
    }
    if ((rex & 8) && q[0] == 0xc7 && (q[1] & 0xf8) == 0xc0) {
        *len = 7;                               /* mov $imm32,%r64 */
        return I_SITE;
    }
    if (q[0] == 0xf7 && (q[1] & 0xf8) == 0xc0) {
        *len = (rex != 0) + 6;                  /* test $imm32,%reg */
        return I_SITE;
    }
    if ((rex & 8) && q[0] == 0x81 && q[1] == 0xec) {
        *len = 7;                               /* sub $imm32,%rsp */
        return I_SITE;
    }
    if (rex && (q[0] == 0x89 || q[0] == 0x8b) && (q[1] & 7) == 4 && (q[1] >> 6) == 1) {
        *len = 5;                               /* mov to/from disp8(%rsp) */
        return I_SITE;
    }
    if (rex && q[0] == 0x8b && (q[1] & 0xc7) == 0x05) {
        *len = 7;                               /* mov disp32(%rip),%reg */
        return I_SITE;
    }
    if (p[0] == 0x64 && p[1] == 0x48 && p[2] == 0x8b && (p[3] & 0xc7) == 0x04 && p[4] == 0x25) {
        *len = 9;                               /* mov %fs:disp32,%reg */
        return I_SITE;
    }
    return I_UNKNOWN;
}

/* Does fn start with a jump, i.e. did another library patch it first? */
static int starts_with_jump(const unsigned char *p)
{
    if (p[0] == 0xe9 || p[0] == 0xeb || (p[0] == 0xff && p[1] == 0x25))
        return 1;
    return (p[0] == 0x48 || p[0] == 0x49) && p[1] >= 0xb8 && p[1] <= 0xbf &&
           (p[10] == 0xff || (p[10] == 0x41 && p[11] == 0xff));
}

/* The aligned block one atomic store writes [at, at + 5) with: 8 or 16
   bytes, 0 when the five bytes straddle a 16-byte boundary. */
static int have_cx16(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
}

static int block_len(const unsigned char *at)
{
    uintptr_t a = (uintptr_t)at;
    if ((a & 7) + 5 <= 8)
        return 8;
    if ((a & 15) + 5 <= 16 && have_cx16())
        return 16;
    return 0;
}

int mh_plan(mh_site_t *s, const char *name, void *fn, size_t size, void *hook,
            char *why, size_t wlen)
{
    unsigned char *p = fn;
    memset(s, 0, sizeof *s);
    s->name = name;
    s->fn = p;
    s->hook = hook;
    if (starts_with_jump(p)) {
        snprintf(why, wlen, "libc's %s is already patched by another library "
                 "(Open MPI's or UCX's memory hooks?)", name);
        return VC_ERR_UNSUPPORTED;
    }
    size_t off = 0;
    for (int n = 0; n < 6 && off + 5 <= size; n++) {
        int len, adj, role = insn(p + off, &len, &adj);
        if (role == I_SITE) {
            s->at = p + off;
            s->prelen = (int)off;
            memcpy(s->pre, p, off);
            if (!block_len(s->at)) {
                snprintf(why, wlen, "libc's %s: its instruction at +%zu cannot be "
                         "replaced by one atomic store", name, off);
                return VC_ERR_UNSUPPORTED;
            }
            return VC_SUCCESS;
        }
        if (role != I_PRE)
            break;
        s->rsp_adj += adj;
        off += (size_t)len;
    }
    snprintf(why, wlen, "libc's %s starts with code vcoll does not know how to patch "
             "safely (%02x %02x %02x %02x %02x %02x ...)", name, p[0], p[1], p[2], p[3],
             p[4], p[5]);
    return VC_ERR_UNSUPPORTED;
}

#define SLOT 32
#define REACH ((int64_t)1 << 31)

static int reaches(const unsigned char *from, const unsigned char *to)
{
    int64_t d = (int64_t)((intptr_t)to - (intptr_t)(from + 5));
    return d > -REACH + 4096 && d < REACH - 4096;
}

/* A page within rel32 reach of every site: try 1 MiB steps below, then
   above, the first site. */
static unsigned char *near_page(const mh_site_t *s, int n)
{
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t base = (uintptr_t)s[0].at & ~(uintptr_t)((1 << 20) - 1);
    for (int k = 1; k < 2000; k++)
        for (int dir = -1; dir <= 1; dir += 2) {
            uintptr_t want = base + (uintptr_t)((intptr_t)dir * k * (1 << 20));
            void *m = mmap((void *)want, (size_t)pg, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (m == MAP_FAILED)
                continue;
            int ok = 1;
            for (int i = 0; i < n; i++)
                ok &= reaches(s[i].at, m) && reaches(s[i].at, (unsigned char *)m + pg);
            if (ok)
                return m;
            munmap(m, (size_t)pg);   /* an old kernel took the address as a hint */
        }
    return NULL;
}

static size_t tramp_code(unsigned char *t, const mh_site_t *s)
{
    size_t k = 0;
    if (s->rsp_adj) {                       /* lea adj(%rsp),%rsp: flags kept */
        t[k++] = 0x48;
        t[k++] = 0x8d;
        t[k++] = 0xa4;
        t[k++] = 0x24;
        int32_t a = s->rsp_adj;
        memcpy(t + k, &a, 4);
        k += 4;
    }
    uint64_t h = (uint64_t)(uintptr_t)s->hook;
    t[k++] = 0x49;                          /* movabs $hook,%r11 */
    t[k++] = 0xbb;
    memcpy(t + k, &h, 8);
    k += 8;
    t[k++] = 0x41;                          /* jmp *%r11 */
    t[k++] = 0xff;
    t[k++] = 0xe3;
    return k;
}

/* One locked store of the aligned block holding [at, at + 5); 0 when the
   block changed under us (another patcher at work: give up). */
static int write_jmp(unsigned char *at, const unsigned char j[5])
{
    int bl = block_len(at);
    unsigned char *blk = (unsigned char *)((uintptr_t)at & ~(uintptr_t)(bl - 1));
    unsigned char old[16], nb[16];
    memcpy(old, blk, (size_t)bl);
    memcpy(nb, old, (size_t)bl);
    memcpy(nb + (at - blk), j, 5);
    if (bl == 8) {
        uint64_t o, w;
        memcpy(&o, old, 8);
        memcpy(&w, nb, 8);
        return __atomic_compare_exchange_n((uint64_t *)blk, &o, w, 0, __ATOMIC_SEQ_CST,
                                           __ATOMIC_SEQ_CST);
    }
    uint64_t olo, ohi, nlo, nhi;
    memcpy(&olo, old, 8);
    memcpy(&ohi, old + 8, 8);
    memcpy(&nlo, nb, 8);
    memcpy(&nhi, nb + 8, 8);
    unsigned char ok;
    __asm__ __volatile__("lock cmpxchg16b %1\n\tsetz %0"
                         : "=q"(ok), "+m"(*(volatile unsigned char (*)[16])blk),
                           "+a"(olo), "+d"(ohi)
                         : "b"(nlo), "c"(nhi)
                         : "cc", "memory");
    return ok;
}

static int set_prot(unsigned char *p, int prot)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(pg - 1);
    uintptr_t e = ((uintptr_t)p + 16 + pg - 1) & ~(pg - 1);
    return mprotect((void *)a, e - a, prot);
}

int mh_apply(mh_site_t *s, int n, char *why, size_t wlen)
{
    long pg = sysconf(_SC_PAGESIZE);
    if ((long)n * SLOT > pg) {
        snprintf(why, wlen, "too many functions to patch");
        return VC_ERR_UNSUPPORTED;
    }
    unsigned char *page = near_page(s, n);
    if (!page) {
        snprintf(why, wlen, "no free page within 2 GiB of libc's code for the trampolines");
        return VC_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < n; i++) {
        s[i].tramp = page + i * SLOT;
        tramp_code(s[i].tramp, &s[i]);
        int32_t rel = (int32_t)((intptr_t)s[i].tramp - (intptr_t)(s[i].at + 5));
        s[i].jmp[0] = 0xe9;
        memcpy(s[i].jmp + 1, &rel, 4);
    }
    if (mprotect(page, (size_t)pg, PROT_READ | PROT_EXEC)) {
        snprintf(why, wlen, "cannot make the trampolines executable: %s", strerror(errno));
        munmap(page, (size_t)pg);
        return VC_ERR_UNSUPPORTED;
    }
    int done = 0, written = 0;
    for (; done < n; done++)
        if (set_prot(s[done].at, PROT_READ | PROT_WRITE | PROT_EXEC))
            break;
    if (done == n) {
        for (; written < n; written++)
            if (!write_jmp(s[written].at, s[written].jmp)) {
                snprintf(why, wlen, "libc's %s changed while vcoll patched it (another "
                         "patcher at work)", s[written].name);
                break;
            }
    } else {
        snprintf(why, wlen, "cannot make libc's code writable: %s", strerror(errno));
    }
    for (int i = 0; i < done; i++)
        set_prot(s[i].at, PROT_READ | PROT_EXEC);
    if (written == 0)
        munmap(page, (size_t)pg);   /* nothing jumps there (the jumps written
                                       before a failure keep it otherwise) */
    return written == n ? VC_SUCCESS : VC_ERR_UNSUPPORTED;
}

int mh_intact(const mh_site_t *s, int n)
{
    /* from the entry to the end of the jump: a patch of the instructions
       before ours (an int3, a 2-byte jump) is someone else's too */
    for (int i = 0; i < n; i++) {
        const volatile unsigned char *f = s[i].fn;
        for (int k = 0; k < s[i].prelen; k++)
            if (f[k] != s[i].pre[k])
                return 0;
        for (int k = 0; k < 5; k++)
            if (f[s[i].prelen + k] != s[i].jmp[k])
                return 0;
    }
    return 1;
}

#else

int mh_plan(mh_site_t *s, const char *name, void *fn, size_t size, void *hook,
            char *why, size_t wlen)
{
    (void)s, (void)name, (void)fn, (void)size, (void)hook;
    snprintf(why, wlen, "memory hooks are implemented for x86-64 Linux only");
    return VC_ERR_UNSUPPORTED;
}

int mh_apply(mh_site_t *s, int n, char *why, size_t wlen)
{
    (void)s, (void)n;
    snprintf(why, wlen, "memory hooks are implemented for x86-64 Linux only");
    return VC_ERR_UNSUPPORTED;
}

int mh_intact(const mh_site_t *s, int n)
{
    (void)s, (void)n;
    return 0;
}

#endif
