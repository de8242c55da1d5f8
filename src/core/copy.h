/*
 * copy.h -- the bulk copy every data path uses in place of memcpy.
 *
 * Why not memcpy alone: glibc (2.36, Debian 12) copies 2 KiB to a few
 * hundred KiB with `rep movsb`, and on AMD Zen that instruction runs about
 * twenty times slower when the destination lies 1-31 bytes above the
 * source modulo 4 KiB (and about half speed at 33-63): measured on an EPYC
 * VM, 64 KiB at 16 bytes is 2.2 GB/s against 40-45 at 0 or 32. That is no
 * rare case here: glibc's malloc puts every large block at a page plus 16
 * bytes, and vcoll's shared slots and rings start on lines or pages, so a
 * copy out of a slot into a malloc'd buffer lands 16 bytes above it. In
 * that window a backward vector loop (copy.c) runs at 34-40 GB/s; outside
 * it memcpy stays, as it is the faster of the two there (38-61 GB/s against
 * the loop's 33-41).
 * Regions must not overlap, as for memcpy.
 */
#ifndef VC_CORE_COPY_H
#define VC_CORE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* sizes up to this go through glibc's vector paths, which are fine */
#define CORE_COPY_LOOP_MIN 2048

/* the backward loop, for n > CORE_COPY_LOOP_MIN (copy.c) */
void core_copy_down(void *dst, const void *src, size_t n);

/* true when dst is 1-63 bytes above src modulo 4 KiB */
static inline int core_copy_aliases(const void *dst, const void *src)
{
    return (((uintptr_t)dst - (uintptr_t)src - 1) & 4095) < 63;
}

static inline void core_copy(void *dst, const void *src, size_t n)
{
    if (n > CORE_COPY_LOOP_MIN && core_copy_aliases(dst, src))
        core_copy_down(dst, src, n);
    else
        memcpy(dst, src, n);
}

#endif
