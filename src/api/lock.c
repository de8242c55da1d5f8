/*
 * lock.c -- the library lock of VC_THREAD_MULTIPLE.
 *
 * One mutex serialises every public call (VC_API_ENTER in api.h), so the
 * layers below keep their single-threaded code. What makes several threads
 * actually work is that no call waits while holding it: every idle step of
 * a blocking call goes through api_lock_idle (the progress layer's yield), which releases the lock
 * completely (whatever the nesting depth), so other threads can post,
 * progress and complete -- and the progress any thread makes completes
 * every thread's requests, since all requests live in the one context.
 *
 * A plain unlock/relock would not let anyone in: the waiter woken by the
 * unlock needs microseconds to run, the idle thread relocks in nanoseconds.
 * So an idle thread that sees others queued yields until one of them got
 * the lock (lock_handoffs moved), with a bound in case that thread is not
 * scheduled for a while.
 */
#include <sched.h>
#include "api.h"

#define HANDOFF_YIELDS 64

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int i_own_it(const struct vc_ctx *c)
{
    /* only this thread ever stores its own id there, so a relaxed load
       cannot show it unless this thread holds the lock */
    pthread_t o = __atomic_load_n(&c->lock_owner, __ATOMIC_RELAXED);
    return o && pthread_equal(o, pthread_self());
}

static void take(struct vc_ctx *c, unsigned depth)
{
    if (pthread_mutex_trylock(&c->lock)) {
        __atomic_add_fetch(&c->lock_waiters, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&c->lock);
        __atomic_sub_fetch(&c->lock_waiters, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&c->lock_handoffs, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&c->lock_owner, pthread_self(), __ATOMIC_RELAXED);
    c->lock_depth = depth;
}

static unsigned drop(struct vc_ctx *c)
{
    unsigned depth = c->lock_depth;
    c->lock_depth = 0;
    __atomic_store_n(&c->lock_owner, (pthread_t)0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&c->lock);
    return depth;
}

int api_lock_enter(void)
{
    struct vc_ctx *c = &ctx_lib;
    if (i_own_it(c))
        c->lock_depth++;          /* a public call inside a public call */
    else
        take(c, 1);
    return 1;
}

void api_lock_leave(void)
{
    struct vc_ctx *c = &ctx_lib;
    if (--c->lock_depth == 0)
        drop(c);
}

/* Release completely, let a queued thread in, take it back at the same depth. */
static void hand_over(struct vc_ctx *c)
{
    unsigned gen = __atomic_load_n(&c->lock_handoffs, __ATOMIC_RELAXED);
    unsigned depth = drop(c);
    for (int i = 0; i < HANDOFF_YIELDS; i++) {
        if (__atomic_load_n(&c->lock_handoffs, __ATOMIC_RELAXED) != gen ||
            !__atomic_load_n(&c->lock_waiters, __ATOMIC_RELAXED))
            break;
        sched_yield();      /* the woken thread may need this very core */
    }
    take(c, depth);
}

void api_lock_idle(int spinning)
{
    struct vc_ctx *c = &ctx_lib;
    /* called without the lock (vc_init_thread still setting up): nothing to give */
    if (!i_own_it(c)) {
        if (spinning)
            cpu_relax();
        else
            sched_yield();
        return;
    }
    if (__atomic_load_n(&c->lock_waiters, __ATOMIC_RELAXED)) {
        hand_over(c);
        return;
    }
    /* nobody queued: back off with the lock released all the same, so a
       thread arriving now gets in without queueing */
    unsigned depth = drop(c);
    if (spinning)
        cpu_relax();
    else
        sched_yield();
    take(c, depth);
}

void api_lock_pass(void)
{
    struct vc_ctx *c = &ctx_lib;
    if (i_own_it(c) && __atomic_load_n(&c->lock_waiters, __ATOMIC_RELAXED))
        hand_over(c);
}
