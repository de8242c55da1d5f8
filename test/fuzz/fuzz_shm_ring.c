/*
 * fuzz_shm_ring.c -- libFuzzer harness for the shared-memory ring
 * (src/net/shm/shm_ring.h) with a forging peer. The ring's lines and its
 * consumed count sit in memory both processes write; here an honest sender
 * and an honest receiver share one ring while the input also writes
 * arbitrary flags, lengths and counts into it, as a broken or hostile
 * peer could.
 *
 * Input: ring lines (1 byte), largest packet (1 byte), then operations of
 * a few bytes each: push, receive, forge the consumed count, forge a
 * line's header.
 * Checked besides ASan/UBSan (the ring is a heap block of exactly its
 * size, so any read or write past it reports): every packet the receiver
 * takes lies inside the ring; the sender's view of the receiver never runs
 * ahead of what it wrote nor goes back; and until the first forgery, every
 * packet arrives whole and in order, and a push into a ring with room
 * succeeds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "net/shm/shm_ring.h"

enum { QMAX = 256 };
static volatile uint8_t sink;   /* what the receiver reads is used */

static uint8_t pattern(uint32_t seq, size_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + 1u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint32_t nlines = 1 + data[0] % 32;
    uint32_t max_len = data[1] % (nlines * SHM_CACHELINE);
    size_t bytes = shm_ring_bytes(nlines);
    uint8_t *mem = calloc(1, bytes);   /* exact: ASan reports any step outside */
    if (!mem)
        return 0;
    shm_ring_t tx = shm_ring_at(mem, nlines, max_len), rx = shm_ring_at(mem, nlines, max_len);
    uint8_t src[256], dst[256];
    uint32_t qlen[QMAX], qseq[QMAX], head = 0, tail = 0, seq = 0;
    int honest = 1;
    const uint8_t *end = data + size;
    for (const uint8_t *p = data + 2; p < end;) {
        uint8_t op = *p++;
        switch (op % 4) {
        case 0: {   /* push a packet in up to three pieces */
            uint32_t len = (uint32_t)((op >> 2) * 5u) % (max_len + 2u);
            if (len > sizeof src)
                len = sizeof src;
            for (uint32_t i = 0; i < len; i++)
                src[i] = pattern(seq, i);
            struct iovec iov[3] = {{src, len / 3}, {src + len / 3, len / 2 - len / 3},
                                   {src + len / 2, len - len / 2}};
            /* an honest, empty ring takes any packet that fits before its
               end, or at line 0 after the wrap's lines */
            uint32_t k = shm_ring_lines(len);
            int empty = honest && head == tail && *tx.consumed == tx.pos;
            int fits = len <= max_len && (tx.idx + k <= nlines || k <= tx.idx);
            if (shm_ring_push(&tx, iov, 3) == 0) {
                if (len > max_len)
                    abort();
                if (honest) {
                    if (tail - head == QMAX)
                        honest = 0;    /* the model is full: stop comparing */
                    qlen[tail % QMAX] = len;
                    qseq[tail % QMAX] = seq;
                    tail++;
                }
                seq++;
            } else if (empty && fits) {
                abort();
            }
            break;
        }
        case 1: {   /* receive, as shm.c does: length read once, checked, copied */
            shm_pkt_t *pkt = shm_ring_peek(&rx);
            if (!pkt) {
                if (honest && head != tail)
                    abort();   /* a packet pushed and not consumed is lost */
                break;
            }
            if ((uint8_t *)pkt < rx.base || (uint8_t *)pkt >= rx.base + (size_t)nlines * SHM_CACHELINE)
                abort();
            uint32_t len = __atomic_load_n(&pkt->len, __ATOMIC_RELAXED);
            if (shm_ring_len_ok(&rx, len)) {
                memcpy(dst, pkt->data, len < sizeof dst ? len : sizeof dst);
                for (uint32_t i = 0; i < len; i++)   /* every byte read: ASan checks */
                    sink ^= pkt->data[i];
                if (honest) {
                    if (head == tail || qlen[head % QMAX] != len)
                        abort();
                    for (uint32_t i = 0; i < len; i++)
                        if (dst[i] != pattern(qseq[head % QMAX], i))
                            abort();
                    head++;
                }
            } else if (honest) {
                abort();       /* an honest packet refused */
            }
            shm_ring_pop(&rx, len);
            break;
        }
        case 2: {   /* the receiver's count, forged */
            uint64_t c = 0;
            size_t n = (size_t)(end - p) < 2 ? (size_t)(end - p) : 2;
            memcpy(&c, p, n);
            p += n;
            c = (op & 4) ? tx.pos - (c % 64) : tx.pos + (c % 64);
            *tx.consumed = c;
            honest = 0;
            break;
        }
        default: {  /* a line's header, forged */
            if (end - p < 3) {
                p = end;
                break;
            }
            shm_pkt_t *l = shm_ring_line(&rx, p[0] % nlines);
            l->flag = p[1] % 4;
            l->len = (uint32_t)p[2] * (op >> 2);
            p += 3;
            honest = 0;
            break;
        }
        }
        if (tx.idx >= nlines || rx.idx >= nlines)
            abort();
        if (tx.seen > tx.pos || tx.pos - tx.seen > nlines)
            abort();
    }
    free(mem);
    return 0;
}
