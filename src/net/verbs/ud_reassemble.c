/*
 * ud_reassemble.c -- putting a packet back together from in-order UD
 * fragments. Pure (no verbs, no peer state beyond its buffer), because
 * every field it reads came off the wire: the fuzz harness
 * (test/fuzz/fuzz_ud.c) drives it with arbitrary fragment sequences.
 */
#include <string.h>
#include "core/copy.h"
#include "net/verbs/ud.h"

const char *ud_reassemble(ud_ras_t *r, uint32_t max_packet, uint8_t flags, uint32_t total,
                          const char *data, uint32_t plen, const char **out, uint32_t *olen)
{
    int first = flags & UD_F_FIRST, last = flags & UD_F_LAST;
    *out = NULL;
    *olen = 0;
    if (first && last) {
        if (r->total) {
            r->total = 0;       /* the peer is failed: leave nothing half done */
            return "a whole packet arrived inside an unfinished one";
        }
        if (plen != total)
            return "a packet's length differs from the length it announces";
        *out = data;
        *olen = plen;
        return NULL;
    }
    if (first) {
        if (r->total) {
            r->total = 0;
            return "a packet started inside an unfinished one";
        }
        if (total > max_packet || total > r->cap || !r->buf)
            return "a fragmented packet announces more than the largest packet";
        r->total = total;
        r->len = 0;
    }
    if (!r->total || plen > r->total - r->len) {
        r->total = 0;
        return "a fragment does not fit the packet being reassembled";
    }
    core_copy(r->buf + r->len, data, plen);
    r->len += plen;
    if (!last)
        return NULL;
    uint32_t want = r->total;
    r->total = 0;
    if (r->len != want)
        return "a reassembled packet is shorter than it announced";
    *out = r->buf;
    *olen = want;
    return NULL;
}
