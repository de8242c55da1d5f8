/*
 * test_memhook.c -- the memory hooks under the conditions a shared process
 * creates (memhook.c, memhook_patch.c): threads inside the patched
 * functions while they are patched, another library patching after vcoll,
 * and dlclose of the library holding the replacements.
 *
 * Patching is once per process and cannot be undone, so every case runs in
 * a forked child that starts from an unpatched libc; the parent judges by
 * the child's exit (a crash is a signal).
 *
 * Under a sanitizer build the hooks must refuse (its allocator unmaps by
 * raw system call) and say so; that is checked instead.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "vcoll.h"
#include "net/verbs/memhook.h"
#include "net/verbs/rcache.h"

#define PG 4096u

/* Run fn in a child; its exit status, or 128 + signal. */
static int in_child(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t p = fork();
    if (p == 0)
        _exit(fn(arg));
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) != p)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- 1. threads inside munmap/mmap while the patch is written */

static volatile int stop;

static void *churn(void *arg)
{
    size_t len = (size_t)(uintptr_t)arg;
    /* a populated mapping takes a while to unmap: the thread spends most of
       its time inside the munmap system call, where the patch hurt it */
    while (!stop) {
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m != MAP_FAILED)
            munmap(m, len);
    }
    return NULL;
}

/* mremap is patched at +4, after its `sub $0x58,%rsp`, which the
   trampoline undoes: a thread there must come out right too */
static void *churn_remap(void *arg)
{
    (void)arg;
    while (!stop) {
        void *m = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m == MAP_FAILED)
            continue;
        void *r = mremap(m, 64 * PG, 512 * PG, MREMAP_MAYMOVE);
        if (r == MAP_FAILED || ((volatile char *)r)[0] != 0)
            abort();
        munmap(r, 512 * PG);
    }
    return NULL;
}

static int race_once(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    pthread_t t[3];
    pthread_create(&t[0], NULL, churn, (void *)(uintptr_t)(4u << 20));
    pthread_create(&t[1], NULL, churn, (void *)(uintptr_t)(64u * PG));
    pthread_create(&t[2], NULL, churn_remap, NULL);
    struct timespec d = {0, (long)(rand_r(&seed) % 2000) * 1000};
    nanosleep(&d, NULL);
    char why[240];
    int rc = net_memhook_install(why, sizeof why);
    nanosleep(&d, NULL);
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return rc == VC_SUCCESS ? 0 : 3;
}

static void test_race(void)
{
    const char *e = getenv("MEMHOOK_TRIALS");
    int trials = e ? atoi(e) : 1000, crashed = 0, refused = 0;
    for (int i = 0; i < trials; i++) {
        int st = in_child(race_once, (void *)(uintptr_t)(i + 1));
        crashed += st >= 128 || st < 0;
        refused += st == 3;
    }
    printf("\n    %d trials: %d crashed, %d refused ", trials, crashed, refused);
    CU_ASSERT_EQUAL(crashed, 0);
    CU_ASSERT_EQUAL(refused, 0);
}

/* ---- 2. another library patches munmap after vcoll */

static unsigned nreg;

static void *t_reg(void *arg, void *addr, size_t len, int kind)
{
    (void)arg, (void)addr, (void)len, (void)kind;
    return (void *)(uintptr_t)++nreg;
}

static void t_dereg(void *arg, void *reg)
{
    (void)arg, (void)reg;
}

static int t_valid(void *arg)
{
    (void)arg;
    return net_memhook_intact();
}

static void on_release(void *arg, uintptr_t s, uintptr_t e)
{
    net_rcache_invalidate(arg, s, e);
}

/* what Open MPI's overwrite patcher and UCX's bistro mode do: munmap's
   entry jumps to a replacement that makes the system call itself */
static int other_munmap(void *a, size_t len)
{
    return (int)syscall(SYS_munmap, a, len);
}

static void other_patch(void)
{
    unsigned char *p = dlsym(RTLD_NEXT, "munmap");
    uintptr_t pg = (uintptr_t)p & ~(uintptr_t)(PG - 1);
    mprotect((void *)pg, 2 * PG, PROT_READ | PROT_WRITE | PROT_EXEC);
    uint64_t h = (uint64_t)(uintptr_t)other_munmap;
    unsigned char code[13] = {0x49, 0xbb, 0, 0, 0, 0, 0, 0, 0, 0, 0x41, 0xff, 0xe3};
    memcpy(code + 2, &h, 8);
    memcpy(p, code, sizeof code);
    mprotect((void *)pg, 2 * PG, PROT_READ | PROT_EXEC);
}

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
                                  return 1; } } while (0)

static int repatched(void *arg)
{
    int how = (int)(uintptr_t)arg;
    char why[240];
    CHECK(net_memhook_install(why, sizeof why) == VC_SUCCESS);
    net_rcache_ops_t ops = {.reg = t_reg, .dereg = t_dereg, .valid = t_valid};
    net_rcache_t *c = net_rcache_create(&ops, 1 << 30, 16);
    CHECK(c);
    net_memhook_route(on_release, c);
    const size_t len = 1 << 20;
    char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    net_rcache_entry_t *e;
    CHECK(net_rcache_get(c, b, len, NET_RCACHE_READ, &e) == VC_SUCCESS);
    void *first = e->reg;
    net_rcache_put(c, e);
    CHECK(net_rcache_get(c, b, len, NET_RCACHE_READ, &e) == VC_SUCCESS);
    CHECK(e->reg == first);                     /* cached while nothing changed */
    net_rcache_put(c, e);
    CHECK(net_memhook_intact());

    if (how == 0) {
        other_patch();
    } else {
        /* a known patcher's library loaded after vcoll (it may patch at any
           time): libucm, if this machine has UCX */
        if (!dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL) ||
            !dlopen("libucm.so.0", RTLD_NOW | RTLD_GLOBAL))
            return 2;
    }
    /* same address, new memory: unseen if the other patch won */
    munmap(b, len);
    char *b2 = mmap(b, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(b2 == b);
    CHECK(net_rcache_get(c, b2, len, NET_RCACHE_READ, &e) == VC_SUCCESS);
    CHECK(e->reg != first);                     /* never the stale registration */
    net_rcache_put(c, e);
    net_rcache_stats_t st;
    net_rcache_stats(c, &st);
    CHECK(st.off && st.entries == 0);           /* flushed and off */
    CHECK(!net_memhook_intact());               /* for good */
    CHECK(net_memhook_state(why, sizeof why) == -1);
    CHECK(strstr(why, how == 0 ? "munmap" : "libucm"));
    printf("(%s) ", why);
    net_memhook_route(NULL, NULL);
    net_rcache_destroy(c);
    return 0;
}

static void test_repatched(void)
{
    CU_ASSERT_EQUAL(in_child(repatched, (void *)0), 0);
}

static void test_patcher_loaded(void)
{
    int st = in_child(repatched, (void *)1);
    if (st == 2)
        printf("(no libucm.so.0 here: skipped) ");
    else
        CU_ASSERT_EQUAL(st, 0);
}

/* ---- 3. dlopen, install, dlclose: libc must not jump into unmapped code */

static int unloaded(void *arg)
{
    (void)arg;
    void *h = dlopen(MEMHOOK_DL, RTLD_NOW | RTLD_LOCAL);
    CHECK(h);
    int (*inst)(char *, size_t) = (int (*)(char *, size_t))dlsym(h, "net_memhook_install");
    CHECK(inst);
    char why[240];
    CHECK(inst(why, sizeof why) == VC_SUCCESS);
    dlclose(h);
    /* every patched function, after the dlclose */
    for (int i = 0; i < 4; i++) {
        void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(m != MAP_FAILED);
        CHECK(madvise(m, PG, MADV_DONTNEED) == 0);
        CHECK((m = mremap(m, 1 << 20, 2 << 20, MREMAP_MAYMOVE)) != MAP_FAILED);
        CHECK(munmap(m, 2 << 20) == 0);
        free(malloc(64 << 20));
    }
    CHECK(dlopen(MEMHOOK_DL, RTLD_NOW | RTLD_NOLOAD));   /* still there */
    return 0;
}

static void test_dlclose(void)
{
    CU_ASSERT_EQUAL(in_child(unloaded, NULL), 0);
}

/* ---- 4. fork while another thread is inside a hook's report: the child
   must not inherit the report lock held by a thread it does not have */

static void slow_report(void *arg, uintptr_t s, uintptr_t e)
{
    (void)arg, (void)s, (void)e;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do                                  /* no lock, no allocation: just long */
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 200000);
}

static int forks(void *arg)
{
    (void)arg;
    char why[240];
    CHECK(net_memhook_install(why, sizeof why) == VC_SUCCESS);
    net_memhook_route(slow_report, NULL);
    pthread_t t;
    pthread_create(&t, NULL, churn, (void *)(uintptr_t)(4 * PG));
    int hung = 0;
    for (int i = 0; i < 200; i++) {
        fflush(NULL);
        pid_t p = fork();
        if (p == 0) {
            alarm(5);                   /* a hang ends as SIGALRM */
            void *m = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            munmap(m, PG);
            _exit(0);
        }
        int st = 0;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st) && ++hung)
            break;                      /* one is enough, and each costs 5 s */
    }
    stop = 1;
    pthread_join(t, NULL);
    net_memhook_route(NULL, NULL);
    if (hung)
        fprintf(stderr, "a child forked while a hook reported hung in munmap\n");
    return hung != 0;
}

static void test_fork(void)
{
    CU_ASSERT_EQUAL(in_child(forks, NULL), 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("memhook in a shared process", NULL, NULL);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* the hooks cannot see this allocator: refused, with the reason */
    char why[240];
    int rc = net_memhook_install(why, sizeof why);
    printf("sanitizer build: %s\n", why);
    if (rc == VC_SUCCESS || !strstr(why, "Sanitizer"))
        return 1;
    (void)s;
#else
    CU_add_test(s, "patching while threads are inside munmap", test_race);
    CU_add_test(s, "another patcher rewrites munmap later", test_repatched);
    CU_add_test(s, "a patcher library loaded later", test_patcher_loaded);
    CU_add_test(s, "dlclose of the library holding the hooks", test_dlclose);
    CU_add_test(s, "fork while another thread reports a release", test_fork);
#endif
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
