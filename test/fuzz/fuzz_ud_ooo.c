/*
 * fuzz_ud_ooo.c -- libFuzzer harness for the UD receiver's store of
 * fragments ahead of a gap (ud_reorder.c). Every sequence number and length
 * it takes comes off the wire. Input: an initial expected sequence (4 bytes
 * LE), then operations [op][seq offset: 2 bytes LE][plen: 1 byte]:
 *   op even: a fragment arrives (seq = expect + offset - 8: behind, at or
 *            ahead), op odd: the expected one arrives and is taken with
 *            every held one after it, as ud_progress.c does.
 * A shadow copy says what must be held; anything taken must be exactly what
 * was put for that sequence, the count must match, and the selective map
 * must name exactly the held fragments.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "net/verbs/ud.h"

#define N 16
#define FRAG 40

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint32_t expect;
    memcpy(&expect, data, 4);
    data += 4;
    size -= 4;
    ud_ooo_t o;
    if (ud_ooo_init(&o, N, FRAG))
        return 0;
    /* shadow: by ring slot, the sequence and byte it was filled with */
    int have[N] = {0};
    uint32_t sseq[N];
    uint8_t sfill[N], slen[N];
    unsigned held = 0;
    char buf[256];
    while (size >= 4) {
        uint8_t op = data[0], plen = data[3];
        uint16_t off = (uint16_t)(data[1] | data[2] << 8);
        data += 4;
        size -= 4;
        if (op & 1) {
            /* the expected fragment arrives: drain */
            for (;;) {
                expect++;
                uint8_t fl;
                uint32_t tot, len;
                const char *d;
                uint32_t i = expect & (N - 1);
                int got = ud_ooo_take(&o, expect, &fl, &tot, &d, &len);
                int want = have[i] && sseq[i] == expect;
                if (got != want)
                    abort();
                if (!got)
                    break;
                if (len != slen[i] || tot != expect || fl != (uint8_t)expect)
                    abort();
                for (uint32_t b = 0; b < len; b++)
                    if ((uint8_t)d[b] != sfill[i])
                        abort();
                have[i] = 0;
                held--;
            }
            continue;
        }
        uint32_t seq = expect + off - 8;
        memset(buf, op, plen);
        int r = ud_ooo_put(&o, expect, seq, (uint8_t)seq, seq, buf, plen);
        uint32_t ahead = seq - expect, i = seq & (N - 1);
        int fits = ahead != 0 && ahead < N && plen <= FRAG;
        if (!fits) {
            if (r != -1)
                abort();
            continue;
        }
        if (have[i] && sseq[i] == seq) {
            if (r != 0)
                abort();
            continue;
        }
        if (r != 1 || have[i])     /* a different sequence cannot share a live slot */
            abort();
        have[i] = 1;
        sseq[i] = seq;
        sfill[i] = op;
        slen[i] = plen;
        held++;
        if (o.held != held)
            abort();
        uint64_t m = ud_ooo_sack(&o, expect);
        for (uint32_t b = 0; b < 64; b++) {
            uint32_t s = expect + 1 + b, j = s & (N - 1);
            int want = b < N - 1 && have[j] && sseq[j] == s;
            if ((int)((m >> b) & 1) != want)
                abort();
        }
    }
    ud_ooo_free(&o);
    return 0;
}
