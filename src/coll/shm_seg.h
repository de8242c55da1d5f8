/*
 * shm_seg.h -- a communicator's shared segment (made in shm_seg.c), shared
 * by the segment collectives: streams (bcast, allgather: shm_seg.c),
 * reductions (shm_reduce.c) and the flag barrier (shm_seg.c).
 *
 * Layout, every counter on its own cache line, p = members:
 *   posted[p]   chunks member s has written into its ring so far
 *   red[p]      windows member s has reduced its slice of so far
 *   bar[p]      barriers member s has entered so far
 *   done[p][p]  chunks of member s that member r has finished reading
 *   slots       per member a ring of SEG_DEPTH slots of `chunk` bytes,
 *               written only by that member
 * Every counter only grows, across calls and across kinds of collective:
 * all members take part in every call, so each knows how far every
 * counter has gone (seq[], rseq, bseq) and nothing is ever reset. A member
 * writes slot k % SEG_DEPTH of its ring only once every other member's
 * done counter for it has passed k - SEG_DEPTH, whichever collective read
 * it last.
 */
#ifndef VC_COLL_SHM_SEG_H
#define VC_COLL_SHM_SEG_H

#include <stddef.h>
#include <stdint.h>

#define SEG_DEPTH   4
#define SEG_LINE    64

struct vc_comm;

struct coll_shmseg {
    uint8_t *base;
    size_t bytes, chunk;
    int p;
    uint64_t *seq;      /* [p] chunks each member has written so far */
    uint64_t rseq;      /* reduction windows so far (all members alike) */
    uint64_t bseq;      /* barriers so far */
    uint64_t free_below;    /* my chunks below this may be written: what the
                               done counters said when last read (they only
                               grow), so a writer reads the others' lines
                               about once per SEG_DEPTH chunks, not per chunk */
    const struct vc_comm *comm;   /* its members: only their deaths fail a wait */
    int accounted;      /* bytes counted in the node's total (I made it) */
    /* alltoallv (shm_alltoallv.c): the last one through here averaged
       more than a streamed block per pair, and calls sent to messages
       since (every member read the same headers, so all agree) */
    int a2av_big;
    unsigned a2av_skipped;
};

static inline uint64_t *seg_line(struct coll_shmseg *g, size_t i)
{
    return (uint64_t *)(g->base + i * SEG_LINE);
}

static inline uint64_t *seg_posted(struct coll_shmseg *g, int s)
{
    return seg_line(g, (size_t)s);
}

static inline uint64_t *seg_red(struct coll_shmseg *g, int s)
{
    return seg_line(g, (size_t)g->p + (size_t)s);
}

static inline uint64_t *seg_bar(struct coll_shmseg *g, int s)
{
    return seg_line(g, 2 * (size_t)g->p + (size_t)s);
}

static inline uint64_t *seg_done(struct coll_shmseg *g, int r, int s)
{
    return seg_line(g, (3 + (size_t)r) * (size_t)g->p + (size_t)s);
}

static inline size_t seg_lines(int p)
{
    return (3 + (size_t)p) * (size_t)p;
}

static inline uint8_t *seg_slot(struct coll_shmseg *g, int s, uint64_t k)
{
    return g->base + seg_lines(g->p) * SEG_LINE +
           ((size_t)s * SEG_DEPTH + (size_t)(k % SEG_DEPTH)) * g->chunk;
}

static inline uint64_t seg_load(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_ACQUIRE);
}

static inline void seg_store(uint64_t *c, uint64_t v)
{
    __atomic_store_n(c, v, __ATOMIC_RELEASE);
}

/* may member me write chunk k (absolute) into its ring: every other
   member has finished reading chunk k - SEG_DEPTH of it */
int coll_seg_slot_free(struct coll_shmseg *g, int me, uint64_t k);

/* Streams through the segment (shm_seg.c). Member s writes len[s] bytes,
 * mine gathered from src (pieces in order, their lengths summing to
 * len[me]), through its ring; I copy bytes [off[s], off[s] + take[s]) of
 * member s's stream to dst[s] (off NULL: all of it; dst[s] NULL: none).
 * Chunks outside my range are marked read at once, so their writer never
 * waits for me.
 *
 * With hd, every stream begins with a header of hd->hsize bytes (at most
 * COLL_SEG_HDR_MAX, within one chunk) that says what the rest is: I do
 * not know len, off and take of the others until I read it, so for each
 * other member hd->range gets my own copy of its header and sets them
 * (take 0: nothing wanted; it must check what it reads: another process
 * wrote it). All members take part in every stream, and len[s] must come
 * out the same on every member. */
typedef struct coll_seg_src {
    const void *p;
    size_t n;
} coll_seg_src_t;

#define COLL_SEG_HDR_MAX 4096   /* no more than the smallest chunk */

typedef struct coll_seg_hdr {
    size_t hsize;
    void (*range)(void *ctx, int s, const uint8_t *hdr, size_t *len, size_t *off,
                  size_t *take);
    void *ctx;
} coll_seg_hdr_t;

int coll_seg_stream(struct coll_shmseg *g, int me, size_t *len, const coll_seg_src_t *src,
                    void *const *dst, size_t *off, size_t *take, const coll_seg_hdr_t *hd);

/* A stream's per-member arguments, zeroed: on the stack up to 64 members,
   else one allocation (coll_seg_args_init fails with VC_ERR_NOMEM; fini
   is safe after a failed init). */
#define COLL_SEG_ARGS_STACK 64
typedef struct coll_seg_args {
    size_t *len, *off, *take;
    void **dst;
    size_t wb[3 * COLL_SEG_ARGS_STACK];
    void *db[COLL_SEG_ARGS_STACK];
    void *heap;
} coll_seg_args_t;
int coll_seg_args_init(coll_seg_args_t *a, int p);
void coll_seg_args_fini(coll_seg_args_t *a);

#endif
