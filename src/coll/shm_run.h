/*
 * shm_run.h -- the shared-memory algorithms as the registry runs them:
 * "shm" (shm_node.c: node phases through a communicator's segment, leaders
 * by messages) and "flags" (shm_flags*.c: a world on one node, small
 * barrier, reduce, allreduce, alltoall(v), allgather(v), gather(v),
 * scatter(v) and reduce_scatter(_block) through the node's slots), and the
 * neighbourhood
 * "shm" (neighbor_shm.c: blocks through a one-node communicator's segment).
 */
#ifndef VC_COLL_SHM_RUN_H
#define VC_COLL_SHM_RUN_H

#include <stdint.h>
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "registry.h"

int coll_shm_fits(const coll_query_t *q);
int coll_shm_run(const coll_call_t *c, int *rc);
/* "shm" neighbourhood allgather and alltoall (neighbor_shm.c): a
   communicator on one node, every member's send buffer in its slot */
int coll_nbr_shm_fits(const coll_query_t *q);
int coll_nbr_shm_run(const coll_call_t *c, int *rc);
int coll_flags_fits(const coll_query_t *q);
int coll_flags_run(const coll_call_t *c, int *rc);
int coll_flags_release_run(const coll_call_t *c, int *rc);

/* The flag slots for a persistent barrier or allreduce (exec.c): take a
 * slot set for a new request of the world (collective, at init: the
 * lowest set no rank holds, agreed by one allreduce; *set -1: none free,
 * or the slots cannot serve this size), with *starts the starts made on
 * it before (a request continues that count); give it back when the
 * request goes (its count then); then per start: publish my
 * contribution for start seq, see whether everyone's is there (*from: the
 * first rank not yet seen, 0 at the start of a wait; on 0 returned, the
 * rank still missing), combine them in rank order. */
int coll_flags_pset_take(struct vc_comm *comm, size_t bytes, int *set, uint64_t *starts);
void coll_flags_pset_give(struct vc_comm *comm, int set, uint64_t starts);
void coll_flags_publish(const struct vc_comm *comm, int first, const void *in, size_t bytes,
                        uint64_t seq);
int coll_flags_ready(const struct vc_comm *comm, int first, uint64_t seq, int *from);
/* ... or wait until it is (prog_wait_step between looks; a dead member
   fails it) */
int coll_flags_await(const struct vc_comm *comm, int first, uint64_t seq);
void coll_flags_combine(const struct vc_comm *comm, int first, uint64_t seq, size_t at,
                        void *rbuf, size_t count, vc_dtype_t dt, vc_op_t op);

/* the registry's start of "flags": 1 = took the call (*req, or *rc an
   error), 0 = not here (the same on every rank), go on as a schedule */
int coll_flags_nb_start(const coll_call_t *c, struct vc_request **req, int *rc);
/* the non-blocking calls comm has started through the slots */
uint64_t coll_flags_nb_calls(struct vc_comm *comm);

/* the slots themselves, and finding a call's line: shm_slots.h */
/* Writing a line: the reader polls the sequence word, on the slot's first
 * cache line with the first COLL_LINE_HEAD bytes of the data. Bytes past
 * that line go straight in; the line's own are staged and written in one
 * burst at the end, just before the sequence word. Written in address
 * order the line is taken back by the reader's polls between the writes
 * (np 2, a gather of 64 B through the drop-in: the root 0.9-1.0 us, 0.6
 * staged; 32 B, all on the first line: 0.5). */
#define COLL_LINE_HEAD 56
typedef struct coll_line_w {
    unsigned char *data;
    unsigned char head[COLL_LINE_HEAD];
    size_t hn;      /* head bytes staged so far (the highest offset + 1) */
} coll_line_w_t;

static inline void coll_line_put(coll_line_w_t *w, size_t off, const void *src, size_t n)
{
    const unsigned char *s = src;
    if (off < COLL_LINE_HEAD && n) {
        size_t h = COLL_LINE_HEAD - off < n ? COLL_LINE_HEAD - off : n;
        memcpy(w->head + off, s, h);
        if (off + h > w->hn)
            w->hn = off + h;
        off += h, s += h, n -= h;
    }
    if (n)
        core_copy(w->data + off, s, n);
}

/* an 8-byte word at an offset that is a multiple of 8 (a table entry):
   on one side of the head's end, so a fixed-size move (coll_line_put at
   a variable offset is a memcpy of variable length per entry) */
static inline void coll_line_put8(coll_line_w_t *w, size_t off, const void *src)
{
    _Static_assert(COLL_LINE_HEAD % 8 == 0, "8-byte words do not straddle the head");
    if (off < COLL_LINE_HEAD) {
        memcpy(w->head + off, src, 8);
        if (off + 8 > w->hn)
            w->hn = off + 8;
    } else {
        memcpy(w->data + off, src, 8);
    }
}

static inline void coll_line_end(coll_line_w_t *w)
{
    if (w->hn)
        memcpy(w->data, w->head, w->hn);
}

/* Rank r's block of a gather/scatter/allgather call (v forms: its count and
   displacement, valid where the call has them) in bytes of es each: its
   size, and where it lies in the buffer of all blocks */
static inline size_t coll_blk_bytes(const coll_call_t *c, int r, size_t es)
{
    return (coll_kind_vector(c->kind) ? c->v->counts[r] : c->count) * es;
}
static inline size_t coll_blk_off(const coll_call_t *c, int r, size_t es)
{
    return (coll_kind_vector(c->kind) ? c->v->displs[r] : (size_t)r * c->count) * es;
}

/* The line bytes a flags call of kind needs (bytes: its vector or block,
   total: all blocks of an alltoall or allgather(v); the other vector forms
   need only their table, big blocks going by message), SIZE_MAX for a
   kind without a flags variant: what route.c asks the slots for. */
size_t coll_flags_need(int kind, size_t bytes, size_t total, int p);
/* the rank i places after r, 0 < i <= p (no divide: the loops over the
   ranks run on the way to publishing, which the others wait for) */
static inline int coll_flags_after(int r, int i, int p)
{
    r += i;
    return r >= p ? r - p : r;
}
/* shm_flags_rooted.c: bcast, gather(v) and scatter(v) through the slots */
int coll_flags_bcast(const coll_call_t *c);
int coll_flags_gather(const coll_call_t *c);
int coll_flags_scatter(const coll_call_t *c);
/* shm_flags_alltoallv.c: alltoallv through the slots (not in place) */
int coll_flags_alltoallv(const coll_call_t *c);
/* shm_flags_reduce.c: reduce through the slots (a vector that fits a line) */
int coll_flags_reduce(const coll_call_t *c);
/* shm_flags_reduce_scatter.c: reduce_scatter(_block) through the slots
   (the whole vector fits a line) */
int coll_flags_reduce_scatter(const coll_call_t *c);
/* shm_flags.c: publish my bytes for call seq and wait for every line */
int coll_flags_exchange(const struct vc_comm *comm, struct coll_comm *cc, const void *in,
                        size_t bytes, uint64_t seq);

/* A line that hands blocks out (scatter(v)'s root, every alltoallv rank)
 * starts with a table, an entry per rank: where its block lies in the line,
 * or that it comes by message (BY_MSG) or could not be sent (BY_FAIL: its
 * receiver fails the call instead of waiting for it). Each other rank's
 * share of the line after the table: a block goes in the line when it fits
 * it, else by message; both ends can tell which from its size alone, so its
 * receiver posts the message's receive before it reads the line. */
#define COLL_FLAGS_BY_MSG UINT32_MAX
#define COLL_FLAGS_BY_FAIL (UINT32_MAX - 1)
typedef struct {
    uint32_t off, len;
} coll_flags_ent_t;
_Static_assert(sizeof(coll_flags_ent_t) == 8, "an entry is one word (coll_line_put8)");
static inline size_t coll_flags_share(size_t cap, int p)
{
    size_t table = (size_t)p * sizeof(coll_flags_ent_t);
    /* (a line is a few KiB: a 32-bit divide, on the way to publishing) */
    return p > 1 && cap > table ? (uint32_t)(cap - table) / (uint32_t)(p - 1) : 0;
}

/* The steps the rooted calls and alltoallv share (shm_flags_rooted.c):
 * begin numbers the call (*k), takes its tag (used or not, so the
 * counters stay in step), waits until the slots may be written
 * (coll_flags_settle), finds my line (*cap bytes) and counts the call;
 * post sends or receives a block that does not fit the line on the call's
 * tag (a send that the transport took at once leaves *req NULL);
 * await_line waits for rank's line of call k, its data in *data (busy:
 * receives are posted, drive them on every look; *first = 1 instead when
 * `until` completes first; yield: give the core up on every empty look);
 * finish waits for
 * and frees n requests, a receive having to bring exactly want[i]. */
int coll_flags_begin(const coll_call_t *c, uint64_t *k, int *tag, unsigned char **line,
                     size_t *cap);
/* coll_flags_post's way: a send to a rank that receives from many (a
   gatherv's root) goes eagerly up to the limit (sched.h, STEP_F_FANIN) */
enum { COLL_POST_RECV = 0, COLL_POST_SEND, COLL_POST_SEND_FANIN };
int coll_flags_post(int way, void *buf, size_t n, int peer, int tag, struct vc_comm *comm,
                    struct vc_request **req);
int coll_flags_await_line(const struct vc_comm *comm, int rank, uint64_t k, int yield,
                          int busy, const struct vc_request *until, int *first,
                          const unsigned char **data);
int coll_flags_finish(struct vc_comm *comm, struct vc_request **req, const size_t *want, int n,
                      int rc);

#endif
