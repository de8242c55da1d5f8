/*
 * fuzz_a2av_hdr.c -- libFuzzer harness for the check of an alltoallv
 * stream header (coll_a2av_hdr_check, src/coll/shm_alltoallv.c): another
 * process wrote it into shared memory. Input: my rank (1 byte, of 8), the
 * bytes I expect (8 bytes), then the header (zero-padded to 17 words).
 * Besides ASan/UBSan's checks: whatever it says, I take nothing outside
 * the stream and nothing past my block, and a header it accepts gives me
 * exactly my block, streamed or as a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"

#define P 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t hdr[(2 * P + 1) * 8] = {0};
    uint64_t want64 = 0;
    if (size < 9)
        return 0;
    int me = data[0] % P;
    memcpy(&want64, data + 1, 8);
    size_t want = (size_t)want64;
    size_t n = size - 9 < sizeof hdr ? size - 9 : sizeof hdr;
    memcpy(hdr, data + 9, n);
    size_t len, off, take, msg;
    int bad = coll_a2av_hdr_check(hdr, me, want, &len, &off, &take, &msg);
    if (take > want)
        abort();
    if (take && (off > len || take > len - off))
        abort();
    if (take && msg)
        abort();
    if (!bad && want && take != want && msg != want)
        abort();
    return 0;
}
