/*
 * ud_reorder.c -- the receiver's store of UD fragments that arrived ahead
 * of a gap, so that a loss costs one resend instead of the window behind
 * it (see ud.h), and the window size that bounds both ends. Pure: no
 * verbs, no peer state; every sequence number and length it is given came
 * off the wire, so it checks them all and the unit test and fuzz harness
 * drive it directly.
 */
#include <stdlib.h>
#include <string.h>
#include "net/verbs/ud.h"

int ud_ooo_init(ud_ooo_t *o, uint32_t n, uint32_t frag)
{
    memset(o, 0, sizeof *o);
    if (n == 0 || (n & (n - 1)) || frag == 0)
        return -1;
    o->buf = malloc((size_t)n * frag);
    o->slot = calloc(n, sizeof *o->slot);
    if (!o->buf || !o->slot) {
        ud_ooo_free(o);
        return -1;
    }
    o->n = n;
    o->frag = frag;
    return 0;
}

void ud_ooo_free(ud_ooo_t *o)
{
    free(o->buf);
    free(o->slot);
    memset(o, 0, sizeof *o);
}

/* the slot holding seq, or NULL */
static ud_ooo_slot_t *held_at(const ud_ooo_t *o, uint32_t seq)
{
    if (!o->n || !o->held)
        return NULL;
    ud_ooo_slot_t *sl = &o->slot[seq & (o->n - 1)];
    return sl->used && sl->seq == seq ? sl : NULL;
}

int ud_ooo_put(ud_ooo_t *o, uint32_t expect, uint32_t seq, uint8_t flags, uint32_t total,
               const char *data, uint32_t plen)
{
    /* only (expect, expect + n): every slot then names one sequence, and
       expect itself is delivered directly, never stored */
    uint32_t ahead = seq - expect;
    if (!o->n || ahead == 0 || ahead >= o->n || plen > o->frag)
        return -1;
    uint32_t i = seq & (o->n - 1);
    ud_ooo_slot_t *sl = &o->slot[i];
    if (sl->used && sl->seq == seq)
        return 0;
    if (!sl->used)
        o->held++;
    /* A slot naming another sequence would have to be one below expect:
       expect moves one at a time and takes each held fragment as it
       passes, so that cannot happen; should it, the old one is dead data. */
    *sl = (ud_ooo_slot_t){.seq = seq, .len = plen, .total = total, .flags = flags,
                          .used = 1};
    if (plen)
        memcpy(o->buf + (size_t)i * o->frag, data, plen);
    return 1;
}

int ud_ooo_take(ud_ooo_t *o, uint32_t seq, uint8_t *flags, uint32_t *total,
                const char **data, uint32_t *plen)
{
    ud_ooo_slot_t *sl = held_at(o, seq);
    if (!sl)
        return 0;
    sl->used = 0;
    o->held--;
    *flags = sl->flags;
    *total = sl->total;
    *plen = sl->len;
    *data = o->buf + (size_t)(seq & (o->n - 1)) * o->frag;
    return 1;
}

int ud_ooo_has(const ud_ooo_t *o, uint32_t seq)
{
    return held_at(o, seq) != NULL;
}

uint64_t ud_ooo_sack(const ud_ooo_t *o, uint32_t ack)
{
    uint64_t m = 0;
    if (!o->n || !o->held)
        return 0;
    uint32_t lim = o->n - 1 < 64 ? o->n - 1 : 64;
    for (uint32_t b = 0; b < lim; b++)
        if (held_at(o, ack + 1 + b))
            m |= 1ull << b;
    return m;
}

uint32_t ud_window_frags(size_t bytes, uint32_t mtu, size_t max_packet)
{
    uint32_t frag = mtu - (uint32_t)sizeof(ud_hdr_t);
    uint32_t per_packet = (uint32_t)((max_packet + frag - 1) / frag);
    uint32_t w = 8;
    while ((uint64_t)w * 2 * mtu <= bytes)
        w <<= 1;
    while (w < 2 * per_packet)
        w <<= 1;
    return w;
}
