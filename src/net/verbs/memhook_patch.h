/*
 * memhook_patch.h -- redirect a running libc function to a replacement
 * without harming a thread that is inside it (memhook_patch.c says how).
 *
 * Used by memhook.c only; x86-64 only (elsewhere mh_plan refuses).
 */
#ifndef VC_NET_VERBS_MEMHOOK_PATCH_H
#define VC_NET_VERBS_MEMHOOK_PATCH_H

#include <stddef.h>
#include <stdint.h>

/* One patched entry: 5 bytes at `at` become a jmp rel32 to its trampoline. */
typedef struct mh_site {
    const char *name;
    unsigned char *fn;        /* libc's entry point */
    unsigned char *at;        /* the instruction replaced by the jump */
    int rsp_adj;              /* what the instructions before `at` took off %rsp */
    void *hook;               /* the replacement */
    unsigned char *tramp;     /* undo rsp_adj, then jump to hook */
    unsigned char jmp[5];     /* the jump, once planned */
    unsigned char pre[16];    /* the bytes from fn to at, kept: a later patch
                                 there is someone else's too */
    int prelen;
} mh_site_t;

/* Decide where fn (size bytes, per the symbol table) can take the jump, or
 * VC_ERR_UNSUPPORTED with the reason. Reads the code only. */
int mh_plan(mh_site_t *s, const char *name, void *fn, size_t size, void *hook,
            char *why, size_t wlen);
/* Make the trampolines for n planned sites in one page within reach of a
 * rel32 jump from each, then write every jump. All or nothing: on failure
 * nothing was written. */
int mh_apply(mh_site_t *s, int n, char *why, size_t wlen);
/* Do the n sites still hold our jumps? A few loads; any thread. */
int mh_intact(const mh_site_t *s, int n);

#endif
