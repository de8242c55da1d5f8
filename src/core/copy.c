/*
 * copy.c -- the backward loop behind core_copy (copy.h says when and why).
 *
 * Going down from the end, every load reads below the stores already
 * issued, so none of them can look like a store 1-63 bytes below it modulo
 * 4 KiB: the false dependence that stalls the forward copy never forms.
 * 16-byte vectors are the x86-64 baseline; four per step keep the load and
 * store ports busy.
 */
#include "copy.h"

typedef unsigned char core_v16 __attribute__((vector_size(16)));

static inline core_v16 ld16(const unsigned char *p)
{
    core_v16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st16(unsigned char *p, core_v16 v)
{
    memcpy(p, &v, sizeof v);
}

void core_copy_down(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* the first 64 bytes are read now and stored last: the final block of
       the loop may start anywhere in them (n need not be a multiple of 64) */
    core_v16 h0 = ld16(s), h1 = ld16(s + 16), h2 = ld16(s + 32), h3 = ld16(s + 48);
    size_t i = n;
    while (i > 64) {
        i = i - 64;
        core_v16 a = ld16(s + i), b = ld16(s + i + 16), c = ld16(s + i + 32),
                 e = ld16(s + i + 48);
        st16(d + i, a);
        st16(d + i + 16, b);
        st16(d + i + 32, c);
        st16(d + i + 48, e);
    }
    st16(d, h0);
    st16(d + 16, h1);
    st16(d + 32, h2);
    st16(d + 48, h3);
}
