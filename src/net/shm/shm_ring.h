/*
 * shm_ring.h -- single-producer/single-consumer rings in a shared segment,
 * one ring per ordered (sender, receiver) pair.
 *
 * A ring is an array of cache lines; a packet takes as many consecutive
 * lines as it needs (a small message one line, the largest eager packet
 * about 130). Why not fixed cells of the largest packet, as before: a
 * window of small messages (OSU's bibw posts 64 each way) filled 16 cells
 * of 8.4 KiB and then waited, and each message's line sat 8.4 KiB from the
 * next (np 2 bibw 1-32 B 1.7-1.8x behind Open MPI's vader; 64 fixed cells
 * gained 21-60 % there but cost 5-12 % at 256 KiB-4 MiB from a 4x larger
 * footprint). Same memory as 16 cells, now 2,100 small packets deep.
 *
 * A packet's first line starts with its header: a flag and the length, on
 * the same line as the first bytes, so a small message moves between the
 * cores as one line. The sender writes the payload, the length, then the
 * flag (release).
 *
 * Every line's flag word is zero unless it heads a packet not yet
 * consumed: the receiver zeroes the flag word of each line of a packet it
 * hands back (for a small packet one store, to a line it holds anyway), so
 * the line under its index is either zero or a header written for it, never
 * an earlier lap's payload that happens to look like a flag. Zeroing the
 * line after each packet from the sender instead put a second transfer of
 * the line the receiver polls on every message (np 2 vcoll_osu_bw, 1-512 B,
 * 0.7-0.8 of the fixed cells). The receiver's zeroing costs too: zeroing
 * only the header (unsafe, payload could read as a flag) took np 2
 * vcoll_osu_bibw 2-4 KiB from 11.0/10.9 to 15.1/13.0 GB/s on the Xeon VM.
 * A sender that remembers which lines held payload and zeroes such a line
 * only when a packet ends before it kept part of that (bibw 2-4 KiB
 * 11.5-12.5) but halved bw at 1-2 KiB (the zero lands just before the
 * receiver polls that line: two transfers of it per message); zeroing
 * them a packet ahead was worse still (bw 256 B-4 KiB 1.3-2.8 GB/s against
 * 2.1-7.6). So the receiver keeps zeroing every line.
 *
 * Room: the receiver publishes how many lines it has consumed in the
 * ring's control line (its own cache line); the sender reads it only when
 * its last reading leaves too little room. A packet that would run past
 * the end leaves a WRAP header in the remaining lines and starts at line 0.
 *
 * The lines are the peer's memory: the receiver reads the length once,
 * takes the packet only if it ends inside the ring (shm_ring_len_ok) and
 * never steps past the ring's end (shm_ring_pop clamps); the sender takes
 * the consumed count only when it lies between its last reading and what
 * it has written (shm_ring_room). test/fuzz/fuzz_shm_ring plays either
 * end forging.
 */
#ifndef VC_SHM_RING_H
#define VC_SHM_RING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include "core/copy.h"

#define SHM_CACHELINE 64
#define SHM_PKT_HDR 8   /* flag + len */

enum { SHM_PKT_EMPTY = 0, SHM_PKT_FULL = 1, SHM_PKT_WRAP = 2 };

typedef struct shm_pkt {
    uint32_t flag;
    uint32_t len;
    uint8_t data[];
} shm_pkt_t;

typedef struct shm_ring {
    uint64_t *consumed;  /* control line: lines the receiver has consumed, all laps */
    uint8_t *base;       /* first line */
    uint32_t nlines;
    uint32_t max_len;    /* largest packet payload */
    uint32_t idx;        /* private: next line to write (sender) or read (receiver) */
    uint64_t pos;        /* private: lines written (sender) or consumed (receiver) */
    uint64_t seen;       /* sender: *consumed as last read */
} shm_ring_t;

/* Bytes one ring occupies: its control line and nlines lines. */
static inline size_t shm_ring_bytes(uint32_t nlines)
{
    return (size_t)(nlines + 1) * SHM_CACHELINE;
}

/* A ring over mem (shm_ring_bytes(nlines), cache-line aligned, zeroed by
   whoever created it); the same call at both ends. */
static inline shm_ring_t shm_ring_at(void *mem, uint32_t nlines, uint32_t max_len)
{
    shm_ring_t r = {0};
    r.consumed = (uint64_t *)mem;
    r.base = (uint8_t *)mem + SHM_CACHELINE;
    r.nlines = nlines;
    r.max_len = max_len;
    return r;
}

static inline shm_pkt_t *shm_ring_line(const shm_ring_t *r, uint32_t i)
{
    return (shm_pkt_t *)(r->base + (size_t)i * SHM_CACHELINE);
}

static inline uint32_t shm_ring_lines(size_t len)
{
    return (uint32_t)((SHM_PKT_HDR + len + SHM_CACHELINE - 1) / SHM_CACHELINE);
}

/* Are the next `need` lines free? Reads the receiver's count only when the
   last reading says no. */
static inline int shm_ring_room(shm_ring_t *r, uint32_t need)
{
    if (r->pos + need - r->seen <= r->nlines)
        return 1;
    /* the count is the receiver's word: one that goes back or runs ahead
       of what was written is not taken (the unsigned room arithmetic above
       would wrap on it); the last plausible reading stands */
    uint64_t c = __atomic_load_n(r->consumed, __ATOMIC_ACQUIRE);
    if (c >= r->seen && c <= r->pos)
        r->seen = c;
    return r->pos + need - r->seen <= r->nlines;
}

/* Copy the iovec into the ring as one packet. Returns 0, or -1 when the
 * ring is full (or the packet is larger than max_len: callers size packets
 * by it).
 * The bytes past the packet's first cache line go first, then the line's
 * own (the receiver polls the flag there), so that line is written in one
 * burst just before the flag; written in address order, the receiver's
 * polls take it back between the writes (np 2 through the drop-in, a
 * message of 64-256 B: about 0.2 us more than one of 32 B, all on the first
 * line). */
#define SHM_LINE_DATA (SHM_CACHELINE - SHM_PKT_HDR)
static inline int shm_ring_push(shm_ring_t *r, const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > r->max_len)
        return -1;
    uint32_t k = shm_ring_lines(len);
    if (r->idx + k > r->nlines) {
        if (r->idx >= r->nlines)    /* never: tells the compiler the wrap's line exists */
            return -1;
        /* the rest of the ring is skipped: a WRAP where the receiver
           looks next sends it to line 0 */
        uint32_t w = r->nlines - r->idx;
        if (!shm_ring_room(r, w))
            return -1;
        __atomic_store_n(&shm_ring_line(r, r->idx)->flag, SHM_PKT_WRAP, __ATOMIC_RELEASE);
        r->pos += w;
        r->idx = 0;
    }
    if (!shm_ring_room(r, k))
        return -1;
    shm_pkt_t *p = shm_ring_line(r, r->idx);
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        size_t l = iov[i].iov_len;
        if (off + l > SHM_LINE_DATA) {
            size_t skip = off < SHM_LINE_DATA ? SHM_LINE_DATA - off : 0;
            core_copy(p->data + off + skip, (const uint8_t *)iov[i].iov_base + skip, l - skip);
        }
        off += l;
    }
    size_t at = 0;
    for (int i = 0; i < iovcnt && at < SHM_LINE_DATA; i++) {
        size_t l = iov[i].iov_len, h = l < SHM_LINE_DATA - at ? l : SHM_LINE_DATA - at;
        memcpy(p->data + at, iov[i].iov_base, h);
        at += l;
    }
    p->len = (uint32_t)len;
    __atomic_store_n(&p->flag, SHM_PKT_FULL, __ATOMIC_RELEASE);
    r->pos += k;
    r->idx = r->idx + k == r->nlines ? 0 : r->idx + k;
    return 0;
}

/* The next packet, or NULL. The caller reads its length once, consumes it,
   then calls shm_ring_pop with that length. */
static inline shm_pkt_t *shm_ring_peek(shm_ring_t *r)
{
    shm_pkt_t *p = shm_ring_line(r, r->idx);
    uint32_t f = __atomic_load_n(&p->flag, __ATOMIC_ACQUIRE);
    if (f == SHM_PKT_WRAP) {
        __atomic_store_n(&p->flag, SHM_PKT_EMPTY, __ATOMIC_RELAXED);
        r->pos += r->nlines - r->idx;
        r->idx = 0;
        __atomic_store_n(r->consumed, r->pos, __ATOMIC_RELEASE);
        p = shm_ring_line(r, 0);
        f = __atomic_load_n(&p->flag, __ATOMIC_ACQUIRE);
    }
    return f == SHM_PKT_FULL ? p : NULL;
}

/* May the receiver take a packet of len bytes at its index? An honest
   sender's always fits: at most max_len, and before the ring's end (a
   packet that would run past it starts at line 0). A forged header at the
   last lines could otherwise send the reader into the next ring. */
static inline int shm_ring_len_ok(const shm_ring_t *r, uint32_t len)
{
    return len <= r->max_len && shm_ring_lines(len) <= r->nlines - r->idx;
}

/* Hand the packet's lines back. len is the length the caller read; a
   length no honest sender writes is clamped to the ring's end. */
static inline void shm_ring_pop(shm_ring_t *r, uint32_t len)
{
    uint32_t k = len > r->max_len ? 1 : shm_ring_lines(len);
    if (k > r->nlines - r->idx)
        k = r->nlines - r->idx;
    for (uint32_t i = 0; i < k; i++)
        __atomic_store_n(&shm_ring_line(r, r->idx + i)->flag, SHM_PKT_EMPTY, __ATOMIC_RELAXED);
    r->pos += k;
    r->idx = r->idx + k == r->nlines ? 0 : r->idx + k;
    __atomic_store_n(r->consumed, r->pos, __ATOMIC_RELEASE);
}

#endif
