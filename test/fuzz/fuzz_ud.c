/*
 * fuzz_ud.c -- libFuzzer harness for UD reassembly (ud_reassemble): any
 * sequence of in-order fragments with arbitrary flags, announced totals and
 * lengths. Besides ASan/UBSan's checks, a packet handed up must never be
 * longer than the largest packet, and must be exactly what it announced.
 * Input: fragments [flags][total: 4 bytes LE][plen: 2 bytes LE][plen bytes].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "net/verbs/ud.h"

#define MAXPKT 9000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char buf[MAXPKT];
    ud_ras_t r = {.buf = buf, .cap = MAXPKT};
    uint32_t announced = 0;
    while (size >= 7) {
        uint8_t flags = data[0];
        uint32_t total, plen;
        memcpy(&total, data + 1, 4);
        plen = (uint32_t)data[5] | (uint32_t)data[6] << 8;
        data += 7;
        size -= 7;
        if (plen > size)
            plen = (uint32_t)size;
        if ((flags & UD_F_FIRST) && !r.total)
            announced = total;
        const char *out;
        uint32_t olen;
        const char *err = ud_reassemble(&r, MAXPKT, flags, total, (const char *)data, plen,
                                        &out, &olen);
        if (!err && out) {
            int whole = (flags & UD_F_FIRST) && (flags & UD_F_LAST);
            if (olen > MAXPKT && !whole)
                abort();
            if (olen != (whole ? total : announced))
                abort();
        }
        if (err && r.total)
            abort();        /* an error must leave no half packet behind */
        data += plen;
        size -= plen;
    }
    return 0;
}
