/*
 * api.h -- what every public entry point shares: the library lock, the
 * initialization check, and the argument checks of the collective calls.
 * The API validates every argument and takes the lock, then dispatches to
 * the layer that does the work; nothing below it is named vc_*.
 */
#ifndef VC_API_H
#define VC_API_H

#include "vcoll.h"
#include "core/ctx.h"
#include "core/comm.h"
#include "coll/coll.h"
#include "coll/registry.h"

/* First statement of every public call that touches library state: under
 * VC_THREAD_MULTIPLE it takes the library lock, and the cleanup attribute
 * releases it on every return path. Otherwise it costs one well-predicted
 * test of thread_multiple (the leave test reads the same local); the flag is
 * copied because vc_init_thread sets it during its own call. */
int api_lock_enter(void);
void api_lock_leave(void);
static inline void api_leave_(int *held)
{
    if (__builtin_expect(*held, 0))
        api_lock_leave();
}
#define VC_API_ENTER() \
    __attribute__((cleanup(api_leave_))) int api_held_ = \
        __builtin_expect(ctx_lib.thread_multiple, 0) ? api_lock_enter() : 0

/* A blocking call that found nothing to do: let other threads into the
 * library for a moment (lock.c). spinning = still in the polling phase.
 * The progress layer calls it through prog_t.yield. */
void api_lock_idle(int spinning);
/* A blocking call that made progress: hand the lock over only if another
 * thread is queued for it, so a busy waiter cannot starve the others. */
void api_lock_pass(void);

/* Shared guard for every public call. */
#define VC_CHECK_INIT() \
    do { if (!ctx_lib.initialized) return VC_ERR_NOT_INITIALIZED; } while (0)

/* collective argument checks (coll.c; the first two inline: every
   collective call makes them) */
static inline int api_check_comm(vc_comm_t comm)   /* initialized, valid comm */
{
    VC_CHECK_INIT();
    return comm_check(comm);
}
static inline int api_check_buf(const void *buf, size_t count)  /* NULL, count > 0 */
{
    return !buf && count ? VC_ERR_BUFFER : VC_SUCCESS;
}
int api_check_op(vc_dtype_t dt, vc_op_t op);       /* built-in or live user op */
/* coll_alltoall.c: count * n elements of dt addressable (VC_ERR_COUNT,
   VC_ERR_DTYPE); n blocks of buf (cnt[j] elements at dsp[j]) addressable
   and with a buffer, and with disjoint set not overlapping (VC_ERR_ARG) */
int api_check_total(vc_dtype_t dt, size_t count, size_t n);
int api_check_blocks(const void *buf, const size_t *cnt, const size_t *dsp, int p,
                     vc_dtype_t dt, int disjoint);
/* blocks.c: the non-empty blocks (cnt[j] at dsp[j], each end addressable)
   are disjoint, else VC_ERR_ARG */
int api_check_disjoint(const size_t *cnt, const size_t *dsp, int n);

/* A checked collective to the collective layer in its form (FORM_BLOCKING,
 * FORM_NONBLOCKING, FORM_PERSISTENT of coll/registry.h): the forms with a
 * request need one (VC_ERR_ARG); v: the vector forms' arrays, or NULL. */
static inline int api_coll_run(int kind, vc_comm_t comm, const void *sbuf, void *rbuf,
                               size_t count, vc_dtype_t dt, vc_op_t op, int root,
                               const coll_vec_t *v, vc_request_t *req, int form)
{
    if (form != FORM_BLOCKING && !req)
        return VC_ERR_ARG;
    return coll_run_form(kind, comm, sbuf, rbuf, count, dt, op, root, v, req, form);
}

#endif
