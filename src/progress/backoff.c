/*
 * backoff.c -- what a waiting call does when a poll found nothing: spin a
 * while (an answer due within microseconds is seen at once), then yield
 * the core on every empty poll (on an oversubscribed node the peer may
 * need exactly this core). Under VC_THREAD_MULTIPLE every idle step gives
 * the library lock up (the API's yield), so other threads get in.
 */
#include <sched.h>
#include <time.h>
#include "progress.h"

/* The idle hook runs only once a wait has found nothing this many times
   in a row, and then once per IDLE_HOOK_EVERY: a collective whose data is
   on its way never pays for it (an MPI progress call costs about a
   microsecond, as much as a small collective here), while a peer that
   needs the other library's progress waits microseconds more, not
   forever. */
#define IDLE_HOOK_AFTER 256
#define IDLE_HOOK_EVERY 64

static __thread int in_idle_hook;

static void idle_hook(prog_t *p, unsigned idle)
{
    /* cheapest test first: every wait step comes through here, and the
       thread-local flag costs a __tls_get_addr call in a shared library */
    if (idle < IDLE_HOOK_AFTER || (idle % IDLE_HOOK_EVERY))
        return;
    void (*fn)(void *) = __atomic_load_n(&p->idle_hook.fn, __ATOMIC_ACQUIRE);
    if (!fn || in_idle_hook)
        return;
    in_idle_hook = 1;
    fn(p->idle_hook.arg);
    in_idle_hook = 0;
}

void prog_backoff_spin(prog_t *p, unsigned *idle, int spin)
{
    idle_hook(p, *idle);
    if (p->yield) {
        /* every wait loop comes through here: the one place where other
           threads get the lock while this one waits */
        p->yield(++*idle < (unsigned)spin);
        return;
    }
    if (++*idle < (unsigned)spin) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    sched_yield();
}

void prog_backoff(prog_t *p, unsigned *idle)
{
    prog_backoff_spin(p, idle, p->spin);
}

double prog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int prog_probe_due(prog_t *p, unsigned idle, double *next_check)
{
    if (idle < (unsigned)p->spin || (idle & 63))
        return 0;
    double t = prog_now();
    if (*next_check == 0) {
        *next_check = t + p->peer_check;
        return 0;
    }
    if (t < *next_check)
        return 0;
    *next_check = t + p->peer_check;
    return 1;
}
