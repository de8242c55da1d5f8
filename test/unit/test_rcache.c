/*
 * test_rcache.c -- the registration cache (src/net/verbs/rcache.c) and the
 * memory hooks that keep it honest (memhook.c), without an HCA.
 *
 * The cache gets test reg/dereg functions that hand out numbered tickets
 * and record, for every page a ticket covers, the page's "generation" when
 * it was made. The reference: a page's generation goes up whenever the test
 * invalidates it. A registration is stale exactly when one of its pages has
 * moved on since; the cache must never return one. Deregistering a ticket
 * that is still held, or twice, fails the test on the spot.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include "vcoll.h"
#include "net/verbs/memhook.h"
#include "net/verbs/rcache.h"

#define PG 4096u
#define NPAGES 64
/* a pretend address space: the cache never touches the memory */
#define BASE ((uintptr_t)0x7000000000ull)
#define ADDR(pg) (BASE + (uintptr_t)(pg) * PG)

typedef struct ticket {
    uintptr_t start, end;
    int kind;
    unsigned serial;
    int live, held;
    unsigned gen[NPAGES];       /* page generations when registered */
} ticket_t;

static unsigned gen[NPAGES];
static unsigned nserial, nlive, nbad_dereg;
static net_rcache_t *cur;       /* for the reg function that invalidates */
static int inval_during_reg;    /* pages to invalidate inside the next reg */
static uintptr_t inval_lo, inval_hi;

static int in_space(uintptr_t a)
{
    return a >= BASE && a < ADDR(NPAGES);
}

static void bump(uintptr_t s, uintptr_t e)
{
    for (int p = 0; p < NPAGES; p++)
        if (ADDR(p) < e && ADDR(p) + PG > s)
            gen[p]++;
}

/* what a munmap in another thread does: the reference first, then the cache */
static void invalidate(net_rcache_t *c, uintptr_t s, uintptr_t e)
{
    bump(s, e);
    net_rcache_invalidate(c, s, e);
}

static void *t_reg(void *arg, void *addr, size_t len, int kind)
{
    (void)arg;
    if (inval_during_reg) {     /* the memory goes away while we register */
        inval_during_reg = 0;
        invalidate(cur, inval_lo, inval_hi);
    }
    ticket_t *t = calloc(1, sizeof *t);
    t->start = (uintptr_t)addr;
    t->end = t->start + len;
    t->kind = kind;
    t->serial = ++nserial;
    t->live = 1;
    if (in_space(t->start))
        memcpy(t->gen, gen, sizeof gen);
    nlive++;
    return t;
}

static void t_dereg(void *arg, void *reg)
{
    (void)arg;
    ticket_t *t = reg;
    if (!t->live || t->held)
        nbad_dereg++;
    t->live = 0;
    nlive--;
    free(t);
}

static const net_rcache_ops_t ops = { .reg = t_reg, .dereg = t_dereg };

static net_rcache_t *mk(size_t max_bytes, int max_entries)
{
    nserial = nlive = nbad_dereg = 0;
    memset(gen, 0, sizeof gen);
    cur = net_rcache_create(&ops, max_bytes, max_entries);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cur);
    return cur;
}

/* get + the checks every returned registration must pass */
static ticket_t *get(net_rcache_t *c, uintptr_t a, size_t len, int kind,
                     net_rcache_entry_t **e)
{
    CU_ASSERT_EQUAL_FATAL(net_rcache_get(c, (void *)a, len, kind, e), VC_SUCCESS);
    ticket_t *t = (*e)->reg;
    CU_ASSERT_TRUE(t->live);
    CU_ASSERT_EQUAL(t->kind, kind);
    CU_ASSERT_TRUE(t->start <= a && t->end >= a + len);
    CU_ASSERT_TRUE(t->start == (*e)->start && t->end == (*e)->end);
    for (int p = 0; p < NPAGES; p++)
        if (ADDR(p) < t->end && ADDR(p) + PG > t->start)
            CU_ASSERT_EQUAL(t->gen[p], gen[p]);     /* not stale */
    t->held++;
    return t;
}

static void put(net_rcache_t *c, net_rcache_entry_t *e)
{
    ((ticket_t *)e->reg)->held--;
    net_rcache_put(c, e);
}

/* get and put at once; returns the ticket's serial */
static unsigned touch(net_rcache_t *c, uintptr_t a, size_t len, int kind)
{
    net_rcache_entry_t *e;
    unsigned s = get(c, a, len, kind, &e)->serial;
    put(c, e);
    return s;
}

static void finish(net_rcache_t *c)
{
    net_rcache_destroy(c);
    CU_ASSERT_EQUAL(nlive, 0);
    CU_ASSERT_EQUAL(nbad_dereg, 0);
}

static void test_lookup(void)
{
    net_rcache_t *c = mk(1 << 20, 16);
    unsigned a = touch(c, ADDR(1) + 100, 2 * PG, NET_RCACHE_READ);
    CU_ASSERT_EQUAL(nlive, 1);
    CU_ASSERT_EQUAL(touch(c, ADDR(1) + 100, 2 * PG, NET_RCACHE_READ), a);  /* hit */
    CU_ASSERT_EQUAL(touch(c, ADDR(2), 10, NET_RCACHE_READ), a);      /* inside */
    CU_ASSERT_EQUAL(touch(c, ADDR(1), 3 * PG, NET_RCACHE_READ), a);  /* page-rounded */
    /* the other kind has other rights: its own registration */
    unsigned w = touch(c, ADDR(1) + 100, 2 * PG, NET_RCACHE_WRITE);
    CU_ASSERT_NOT_EQUAL(w, a);
    CU_ASSERT_EQUAL(touch(c, ADDR(1) + 100, 2 * PG, NET_RCACHE_WRITE), w);
    /* a disjoint range is a miss and leaves the first alone */
    unsigned b = touch(c, ADDR(10), PG, NET_RCACHE_READ);
    CU_ASSERT_NOT_EQUAL(b, a);
    CU_ASSERT_EQUAL(touch(c, ADDR(1) + 100, 2 * PG, NET_RCACHE_READ), a);
    net_rcache_stats_t s;
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.hits, 5);
    CU_ASSERT_EQUAL(s.misses, 3);
    CU_ASSERT_EQUAL(s.entries, 3);
    CU_ASSERT_EQUAL(s.bytes, 7 * PG);
    /* bad arguments */
    net_rcache_entry_t *e;
    CU_ASSERT_EQUAL(net_rcache_get(c, (void *)ADDR(1), 0, NET_RCACHE_READ, &e), VC_ERR_ARG);
    CU_ASSERT_EQUAL(net_rcache_get(c, (void *)ADDR(1), 8, 2, &e), VC_ERR_ARG);
    CU_ASSERT_EQUAL(net_rcache_get(c, (void *)(UINTPTR_MAX - 10), 100, 0, &e), VC_ERR_ARG);
    finish(c);
}

static void test_overlap(void)
{
    net_rcache_t *c = mk(1 << 20, 16);
    unsigned a = touch(c, ADDR(0), 2 * PG, NET_RCACHE_READ);      /* pages 0-1 */
    unsigned b = touch(c, ADDR(4), 2 * PG, NET_RCACHE_READ);      /* pages 4-5 */
    /* pages 1-4 overlap both: one registration of 0-5 replaces them */
    net_rcache_entry_t *e;
    ticket_t *u = get(c, ADDR(1) + 8, 3 * PG, NET_RCACHE_READ, &e);
    CU_ASSERT_TRUE(u->serial != a && u->serial != b);
    CU_ASSERT_EQUAL(u->start, ADDR(0));
    CU_ASSERT_EQUAL(u->end, ADDR(6));
    put(c, e);
    CU_ASSERT_EQUAL(nlive, 1);          /* the two old ones are gone */
    CU_ASSERT_EQUAL(touch(c, ADDR(0), 6 * PG, NET_RCACHE_READ), u->serial);
    CU_ASSERT_EQUAL(touch(c, ADDR(5), 1, NET_RCACHE_READ), u->serial);
    /* an overlapped entry in use lives on, detached, until its last put */
    net_rcache_entry_t *h;
    ticket_t *ht = get(c, ADDR(8), PG, NET_RCACHE_READ, &h);
    unsigned v = touch(c, ADDR(8), 2 * PG, NET_RCACHE_READ);
    CU_ASSERT_NOT_EQUAL(v, ht->serial);
    CU_ASSERT_TRUE(ht->live);
    CU_ASSERT_EQUAL(nlive, 3);
    put(c, h);
    CU_ASSERT_EQUAL(nlive, 2);
    CU_ASSERT_EQUAL(touch(c, ADDR(8), PG, NET_RCACHE_READ), v);
    finish(c);
}

static void test_lru(void)
{
    /* at most 3 entries */
    net_rcache_t *c = mk(1 << 20, 3);
    unsigned a = touch(c, ADDR(0), PG, 0), b = touch(c, ADDR(2), PG, 0);
    unsigned d = touch(c, ADDR(4), PG, 0);
    CU_ASSERT_EQUAL(touch(c, ADDR(0), PG, 0), a);     /* a is now the newest */
    unsigned e4 = touch(c, ADDR(6), PG, 0);           /* evicts b, the oldest */
    CU_ASSERT_EQUAL(nlive, 3);
    CU_ASSERT_EQUAL(touch(c, ADDR(0), PG, 0), a);
    CU_ASSERT_EQUAL(touch(c, ADDR(4), PG, 0), d);
    CU_ASSERT_EQUAL(touch(c, ADDR(6), PG, 0), e4);
    CU_ASSERT_NOT_EQUAL(touch(c, ADDR(2), PG, 0), b); /* b again: a miss, evicts a */
    net_rcache_stats_t s;
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.evictions, 2);
    CU_ASSERT_NOT_EQUAL(touch(c, ADDR(0), PG, 0), a);
    finish(c);

    /* at most 4 pages of bytes; entries in use are never evicted */
    c = mk(4 * PG, 100);
    net_rcache_entry_t *h;
    ticket_t *ht = get(c, ADDR(0), 3 * PG, 0, &h);
    touch(c, ADDR(10), 2 * PG, 0);      /* 5 pages: the idle one goes */
    CU_ASSERT_TRUE(ht->live);
    CU_ASSERT_EQUAL(nlive, 1);
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.bytes, 3 * PG);
    put(c, h);
    CU_ASSERT_EQUAL(touch(c, ADDR(0), 3 * PG, 0), ht->serial);
    finish(c);

    /* every slot busy: still served, but not kept */
    c = mk(1 << 20, 2);
    net_rcache_entry_t *x[4];
    for (int i = 0; i < 4; i++)
        get(c, ADDR(2 * i), PG, 0, &x[i]);
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.uncached, 1);     /* the index (2 + 1 spare) was full */
    for (int i = 0; i < 4; i++)
        put(c, x[i]);
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.entries, 2);
    CU_ASSERT_EQUAL(nlive, (unsigned)s.entries);
    finish(c);
}

static void test_invalidate(void)
{
    net_rcache_t *c = mk(1 << 20, 16);
    unsigned a = touch(c, ADDR(0), PG, 0), b = touch(c, ADDR(2), 2 * PG, 0);
    unsigned w = touch(c, ADDR(2), 2 * PG, 1), d = touch(c, ADDR(6), PG, 0);
    unsigned before = nlive;
    invalidate(c, ADDR(3) + 5, ADDR(3) + 6);    /* one byte of b's second page */
    /* no deregistration inside the invalidation (it may run inside free()) */
    CU_ASSERT_EQUAL(nlive, before);
    CU_ASSERT_EQUAL(touch(c, ADDR(0), PG, 0), a);
    CU_ASSERT_EQUAL(touch(c, ADDR(6), PG, 0), d);
    CU_ASSERT_NOT_EQUAL(touch(c, ADDR(2), PG, 0), b);   /* gone, both kinds */
    CU_ASSERT_NOT_EQUAL(touch(c, ADDR(2), PG, 1), w);
    net_rcache_stats_t s;
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.invalidations, 2);
    /* held while its memory goes: the next get registers anew, the old one
       is released by its last put */
    net_rcache_entry_t *h;
    ticket_t *ht = get(c, ADDR(6), PG, 0, &h);
    invalidate(c, ADDR(6), ADDR(7));
    unsigned n = touch(c, ADDR(6), PG, 0);
    CU_ASSERT_NOT_EQUAL(n, ht->serial);
    CU_ASSERT_TRUE(ht->live);
    put(c, h);
    CU_ASSERT_EQUAL(touch(c, ADDR(6), PG, 0), n);
    /* memory that goes while it is being registered */
    inval_during_reg = 1;
    inval_lo = ADDR(20);
    inval_hi = ADDR(21);
    unsigned m = touch(c, ADDR(20), PG, 0);             /* get checks freshness */
    CU_ASSERT_EQUAL(touch(c, ADDR(20), PG, 0), m);
    /* everything at once (shmdt) */
    invalidate(c, 0, UINTPTR_MAX);
    CU_ASSERT_NOT_EQUAL(touch(c, ADDR(0), PG, 0), a);
    net_rcache_stats(c, &s);
    CU_ASSERT_EQUAL(s.entries, 1);
    finish(c);
}

static void test_off(void)
{
    net_rcache_t *c = mk(1 << 20, 0);
    unsigned a = touch(c, ADDR(0), PG, 0);
    CU_ASSERT_EQUAL(nlive, 0);          /* deregistered by its put */
    CU_ASSERT_NOT_EQUAL(touch(c, ADDR(0), PG, 0), a);
    finish(c);
}

/* Random gets, puts and invalidations; get() checks every answer against
   the page generations, dereg against the holds. */
static void test_random(void)
{
    net_rcache_t *c = mk(24 * PG, 8);
    unsigned seed = 12345;
    enum { HOLD = 6 };
    net_rcache_entry_t *held[HOLD] = {0};
    for (int it = 0; it < 20000; it++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 8;
        int op = (int)(r % 10);
        if (op < 6) {
            int slot = (int)((r >> 4) % HOLD);
            if (held[slot])
                put(c, held[slot]);
            size_t off = (r >> 8) % 64 * 64, len = 1 + (r >> 14) % (4 * PG);
            uintptr_t a = ADDR((r >> 20) % (NPAGES - 6)) + off;
            get(c, a, len, (int)((r >> 3) & 1), &held[slot]);
        } else if (op < 8) {
            int slot = (int)((r >> 4) % HOLD);
            if (held[slot])
                put(c, held[slot]);
            held[slot] = NULL;
        } else {
            uintptr_t a = ADDR((r >> 6) % NPAGES) + (r >> 12) % PG;
            invalidate(c, a, a + 1 + (r >> 16) % (3 * PG));
        }
        net_rcache_stats_t s;
        net_rcache_stats(c, &s);
        int nheld = 0;
        for (int i = 0; i < HOLD; i++)
            nheld += held[i] != NULL;
        /* bounded, except for what is in use */
        CU_ASSERT_TRUE(s.entries <= 8 + nheld);
        CU_ASSERT_TRUE((unsigned)s.entries <= nlive);
    }
    for (int i = 0; i < HOLD; i++)
        if (held[i])
            put(c, held[i]);
    net_rcache_stats_t s;
    net_rcache_stats(c, &s);
    CU_ASSERT_TRUE(s.hits > 1000 && s.misses > 1000 && s.invalidations > 100 &&
                   s.evictions > 100);
    CU_ASSERT_TRUE(s.entries <= 8 && s.bytes <= 24 * PG);
    finish(c);
}

/* Invalidations from another thread while this one gets and puts: the
   locking must hold (run it under TSan/ASan too). */
static volatile int stop;
static void *invalidator(void *arg)
{
    unsigned seed = 7;
    while (!stop) {
        seed = seed * 1103515245u + 12345u;
        uintptr_t a = ADDR((seed >> 8) % NPAGES);
        net_rcache_invalidate(arg, a, a + PG);
    }
    return NULL;
}

static void test_threads(void)
{
    net_rcache_t *c = mk(1 << 20, 16);
    pthread_t th;
    stop = 0;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, invalidator, c), 0);
    for (int i = 0; i < 20000; i++) {
        net_rcache_entry_t *e;
        CU_ASSERT_EQUAL_FATAL(net_rcache_get(c, (void *)ADDR(i % (NPAGES - 2)), PG + 1,
                                             i & 1, &e), VC_SUCCESS);
        ticket_t *t = e->reg;
        CU_ASSERT_TRUE(t->live);
        t->held++;
        t->held--;
        net_rcache_put(c, e);
    }
    stop = 1;
    pthread_join(th, NULL);
    finish(c);
}

/* ---- memory hooks: libc's functions really report what they release */

#define MAXREP 256
static uintptr_t rep[MAXREP][2];
static int nrep;

static void record(void *arg, uintptr_t s, uintptr_t e)
{
    (void)arg;
    if (nrep < MAXREP) {        /* no allocation here: we may be inside free() */
        rep[nrep][0] = s;
        rep[nrep][1] = e;
    }
    nrep++;
}

/* was [s, s + len) reported (covered by one report)? By address only: it
   is asked about memory already freed */
static int reported_at(uintptr_t s, size_t len)
{
    for (int i = 0; i < nrep && i < MAXREP; i++)
        if (rep[i][0] <= s && rep[i][1] >= s + len)
            return 1;
    return 0;
}

static int reported(const void *s, size_t len)
{
    return reported_at((uintptr_t)s, len);
}

static int hooks_init(void)
{
    char why[160];
    int rc = net_memhook_install(why, sizeof why);
    if (rc)
        fprintf(stderr, "memory hooks: %s\n", why);
    return rc;
}

static void test_hooks(void)
{
    const size_t len = 16 * PG;
    net_memhook_route(record, NULL);

    nrep = 0;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(p != MAP_FAILED);
    CU_ASSERT_EQUAL(nrep, 0);                   /* a fresh mapping replaces nothing */
    memset(p, 1, len);
    CU_ASSERT_EQUAL(madvise(p, PG, MADV_WILLNEED), 0);
    CU_ASSERT_EQUAL(nrep, 0);                   /* a hint keeps the pages */
    CU_ASSERT_EQUAL(madvise(p + PG, 2 * PG, MADV_DONTNEED), 0);
    CU_ASSERT_TRUE(reported(p + PG, 2 * PG));
    CU_ASSERT_EQUAL(p[PG], 0);                  /* and it still did its job */
    nrep = 0;
    char *q = mmap(p + 4 * PG, PG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CU_ASSERT_EQUAL(q, p + 4 * PG);
    CU_ASSERT_TRUE(reported(p + 4 * PG, PG));
    CU_ASSERT_EQUAL(munmap(p, len), 0);
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(p != MAP_FAILED);
    p[0] = 1;
    nrep = 0;
    char *m = mremap(p, len, 64 * PG, MREMAP_MAYMOVE);
    CU_ASSERT_FATAL(m != MAP_FAILED);
    CU_ASSERT_TRUE(reported(p, len));
    CU_ASSERT_EQUAL(m[0], 1);
    nrep = 0;
    CU_ASSERT_EQUAL(munmap(m, 64 * PG), 0);
    CU_ASSERT_TRUE(reported(m, 64 * PG));
    /* errors still come back as libc's did */
    CU_ASSERT_EQUAL(munmap(m + 1, PG), -1);
    CU_ASSERT_EQUAL(errno, EINVAL);
    CU_ASSERT_EQUAL(mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 1), MAP_FAILED);
    CU_ASSERT_EQUAL(errno, EINVAL);

    /* the break: shrinking it releases the pages above */
    nrep = 0;
    char *top = sbrk(0);
    CU_ASSERT_FATAL(sbrk(8 * PG) == top);
    CU_ASSERT_TRUE(sbrk(-(intptr_t)(8 * PG)) == top + 8 * PG);
    CU_ASSERT_TRUE(sbrk(0) == top);
    CU_ASSERT_TRUE(reported((void *)(((uintptr_t)top + PG - 1) & ~(uintptr_t)(PG - 1)), 7 * PG));

    /* SysV shared memory: its size is unknown at shmdt, so everything goes */
    int id = shmget(IPC_PRIVATE, PG, IPC_CREAT | 0600);
    if (id >= 0) {
        void *s = shmat(id, NULL, 0);
        shmctl(id, IPC_RMID, NULL);
        CU_ASSERT_FATAL(s != (void *)-1);
        nrep = 0;
        CU_ASSERT_EQUAL(shmdt(s), 0);
        CU_ASSERT_TRUE(reported(0, UINTPTR_MAX - 1));
    }

    /* glibc's own calls, which symbol interposition would miss: free() of a
       block malloc mmapped, and realloc moving one with mremap */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);      /* no dynamic threshold */
    nrep = 0;
    char *big = malloc(4 << 20);
    CU_ASSERT_FATAL(big != NULL);
    big[0] = 1;
    uintptr_t was = (uintptr_t)big;     /* only its address is used after */
    free(big);
    CU_ASSERT_TRUE(reported_at(was, 4 << 20));
    nrep = 0;
    big = malloc(1 << 20);
    CU_ASSERT_FATAL(big != NULL);
    was = (uintptr_t)big;
    char *bigger = realloc(big, 64 << 20);
    CU_ASSERT_FATAL(bigger != NULL);
    CU_ASSERT_TRUE(reported_at(was, 1 << 20));
    free(bigger);

    net_memhook_route(NULL, NULL);
    nrep = 0;
    p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_EQUAL(munmap(p, PG), 0);
    CU_ASSERT_EQUAL(nrep, 0);                   /* unrouted: nobody told */
}

/* The stale-registration case end to end: same address, new memory. */
static void on_release(void *arg, uintptr_t s, uintptr_t e)
{
    net_rcache_invalidate(arg, s, e);
}

static void test_hooks_cache(void)
{
    net_rcache_t *c = mk(1 << 30, 16);
    net_memhook_route(on_release, c);
    const size_t len = 2 << 20;
    void *want = NULL;
    unsigned last = 0;
    for (int it = 0; it < 3; it++) {
        char *b = mmap(want, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                       (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);
        CU_ASSERT_FATAL(b != MAP_FAILED);
        CU_ASSERT_FATAL(!want || (void *)b == want);
        want = b;
        unsigned s = touch(c, (uintptr_t)b, len, 0);
        CU_ASSERT_EQUAL(touch(c, (uintptr_t)b, len, 0), s);   /* reused while alive */
        CU_ASSERT_NOT_EQUAL(s, last);                         /* never across munmap */
        last = s;
        munmap(b, len);
    }
    net_memhook_route(NULL, NULL);
    finish(c);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rcache", NULL, NULL);
    CU_add_test(s, "lookup", test_lookup);
    CU_add_test(s, "overlap", test_overlap);
    CU_add_test(s, "lru", test_lru);
    CU_add_test(s, "invalidate", test_invalidate);
    CU_add_test(s, "off", test_off);
    CU_add_test(s, "random against page generations", test_random);
    CU_add_test(s, "invalidations from another thread", test_threads);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* the hooks refuse a sanitizer's allocator (test_memhook checks that) */
    (void)hooks_init;
#else
    CU_pSuite h = CU_add_suite("memhook", hooks_init, NULL);
    CU_add_test(h, "libc functions report releases", test_hooks);
    CU_add_test(h, "cache + hooks: same address, new memory", test_hooks_cache);
#endif
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
