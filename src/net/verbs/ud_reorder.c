/*
 * ud_reorder.c -- the receiver's store of UD fragments that arrived ahead
 * of a gap, so that a loss costs one resend instead of the window behind
 * it (see ud.h). Pure: no verbs, no peer state; every sequence number and
 * length it is given came off the wire, so it checks them all and the unit
 * test and fuzz harness drive it directly.
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
    o->seq = calloc(n, sizeof *o->seq);
    o->len = calloc(n, sizeof *o->len);
    o->total = calloc(n, sizeof *o->total);
    o->flags = calloc(n, 1);
    o->used = calloc(n, 1);
    if (!o->buf || !o->seq || !o->len || !o->total || !o->flags || !o->used) {
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
    free(o->seq);
    free(o->len);
    free(o->total);
    free(o->flags);
    free(o->used);
    memset(o, 0, sizeof *o);
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
    if (o->used[i] && o->seq[i] == seq)
        return 0;
    if (!o->used[i])
        o->held++;
    /* A slot naming another sequence would have to be one below expect:
       expect moves one at a time and takes each held fragment as it
       passes, so that cannot happen; should it, the old one is dead data. */
    o->used[i] = 1;
    o->seq[i] = seq;
    o->len[i] = plen;
    o->total[i] = total;
    o->flags[i] = flags;
    if (plen)
        memcpy(o->buf + (size_t)i * o->frag, data, plen);
    return 1;
}

int ud_ooo_take(ud_ooo_t *o, uint32_t seq, uint8_t *flags, uint32_t *total,
                const char **data, uint32_t *plen)
{
    if (!o->n || !o->held)
        return 0;
    uint32_t i = seq & (o->n - 1);
    if (!o->used[i] || o->seq[i] != seq)
        return 0;
    o->used[i] = 0;
    o->held--;
    *flags = o->flags[i];
    *total = o->total[i];
    *plen = o->len[i];
    *data = o->buf + (size_t)i * o->frag;
    return 1;
}

int ud_ooo_has(const ud_ooo_t *o, uint32_t seq)
{
    uint32_t i = seq & (o->n - 1);
    return o->n && o->held && o->used[i] && o->seq[i] == seq;
}

uint64_t ud_ooo_sack(const ud_ooo_t *o, uint32_t ack)
{
    uint64_t m = 0;
    if (!o->n || !o->held)
        return 0;
    uint32_t lim = o->n - 1 < 64 ? o->n - 1 : 64;
    for (uint32_t b = 0; b < lim; b++) {
        uint32_t s = ack + 1 + b;
        if (o->used[s & (o->n - 1)] && o->seq[s & (o->n - 1)] == s)
            m |= 1ull << b;
    }
    return m;
}
