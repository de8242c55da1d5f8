/*
 * shm_seg.c -- a communicator's shared segment (layout in shm_seg.h): its
 * making under the node's VCOLL_SHM_COLL_MAX, bcast and allgather streams
 * through it, and the flag barrier. Reductions are in shm_reduce.c.
 *
 * Why: on a node, large bcasts and allgathers are memory-bandwidth bound.
 * A binomial tree moves each byte log2 p times and a ring p-1 times,
 * each hop a round of matching and waiting; through a segment each rank
 * writes its data once and every reader copies it out once.
 *
 * The segment (one per communicator, made on first use, so communicators
 * never share one and never have to agree on turns) holds, per member s,
 * a ring of DEPTH slots of `chunk` bytes written only by s, a counter
 * posted[s] of the chunks s has written so far, and per reader r a
 * counter done[r][s] of the chunks of s that r has copied out. Counters
 * only grow, across calls too (every rank knows how many chunks every
 * member has streamed so far, because all take part in every call), so no
 * reset is ever needed. A writer puts chunk g in slot g % DEPTH once every
 * reader has copied chunk g - DEPTH out of it, so copy-in of one chunk
 * overlaps copy-out of the previous ones. Data is only copied, never
 * combined, so every rank gets the same bits.
 *
 * bcast = the root streams, all others read; allgather = every member
 * streams its block and reads everyone else's.
 *
 * Memory: DEPTH * chunk bytes per member plus one cache line per counter;
 * chunk shrinks as members grow so a communicator's segment stays near
 * SEG_BUDGET (coll_shmseg_bytes; vcoll_info prints it).
 *
 * Waits go through vc_wait_step, so a dead member is reported as
 * VC_ERR_PEER_FAILED instead of a hang. Which calls come here is decided
 * in shm_node.c (the "shm" algorithms, auto or forced).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/copy.h"
#include "comm_priv.h"
#include "progress/progress.h"
#include "boot/boot.h"
#include "core/log.h"
#include "net/net.h"
#include "p2p/p2p.h"
#include "shm_seg.h"

#define SEG_BUDGET  (4u << 20)      /* data slots of one communicator */
#define SEG_CHUNK_MAX (64u << 10)
#define SEG_CHUNK_MIN (4u << 10)

static size_t seg_chunk(int p)
{
    size_t c = SEG_BUDGET / ((size_t)p * SEG_DEPTH);
    c = c > SEG_CHUNK_MAX ? SEG_CHUNK_MAX : c < SEG_CHUNK_MIN ? SEG_CHUNK_MIN : c;
    return c / SEG_LINE * SEG_LINE;
}

size_t coll_shmseg_bytes(int p)
{
    return seg_lines(p) * SEG_LINE + (size_t)p * SEG_DEPTH * seg_chunk(p);
}

int coll_seg_slot_free(struct coll_shmseg *g, int me, uint64_t k)
{
    if (k < SEG_DEPTH || k < g->free_below)
        return 1;
    /* chunk k is free when every reader is done with k - SEG_DEPTH, i.e.
       k < min over readers of done + SEG_DEPTH */
    uint64_t lo = UINT64_MAX;
    for (int r = 0; r < g->p; r++)
        if (r != me) {
            uint64_t d = seg_load(seg_done(g, r, me));
            lo = d < lo ? d : lo;
        }
    if (lo == UINT64_MAX)
        return 1;
    g->free_below = lo + SEG_DEPTH;
    return k < g->free_below;
}

int coll_shmseg_eligible(const struct vc_comm *comm)
{
    const coll_state_t *cs = comm->coll;
    if (!cs->node_net || comm->size < 2 || !cs->boot->node_of)
        return 0;
    /* every member sees every other as local exactly when all share a
       node, so the answer is the same on all of them */
    for (int r = 0; r < comm->size; r++)
        if (cs->boot->node_of[comm_world_rank(comm, r)] != cs->boot->node_id)
            return 0;
    return 1;
}

/* VCOLL_SHM_COLL_MAX: the creator of a segment counts its bytes in the
   node's total (in the node's own shared segment, so every process of the
   job on the node sees one number) and gives up when they would not fit */
/* the node's byte count, through the transport interface */
static uint64_t *node_bytes(const coll_state_t *cs)
{
    net_t *n = cs->node_net;
    return n && n->ops->node_bytes ? n->ops->node_bytes(n) : NULL;
}

static int node_reserve(const coll_state_t *cs, size_t bytes, size_t cap)
{
    uint64_t *tot = node_bytes(cs);
    uint64_t cur = tot ? __atomic_load_n(tot, __ATOMIC_RELAXED) : 0;
    if (!tot)
        return 0;
    do {
        if (cur + bytes > cap)
            return 0;
    } while (!__atomic_compare_exchange_n(tot, &cur, cur + bytes, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    return 1;
}

size_t coll_shmseg_node_bytes(const coll_state_t *cs)
{
    uint64_t *tot = node_bytes(cs);
    return tot ? (size_t)__atomic_load_n(tot, __ATOMIC_RELAXED) : 0;
}

void coll_shmseg_free(struct coll_shmseg *g)
{
    if (!g)
        return;
    if (g->accounted && node_bytes(g->comm->coll))
        __atomic_sub_fetch(node_bytes(g->comm->coll), (uint64_t)g->bytes, __ATOMIC_ACQ_REL);
    if (g->base)
        munmap(g->base, g->bytes);
    free(g->seq);
    free(g);
}

/* all members learn whether every one of them succeeded */
static int agree(struct vc_comm *comm, int ok, int *all_ok)
{
    int32_t bad = !ok, any = 0;
    int rc = coll_run_msgs(COLL_ALLREDUCE, comm, &bad, &any, 1, VC_INT32, VC_MAX, 0);
    *all_ok = !rc && !any;
    return rc;
}

/* Collective over comm. *out = NULL (and VC_SUCCESS) when the segment
   cannot be had: every member then falls back alike. */
int coll_shmseg_create(struct vc_comm *comm, struct coll_shmseg **out)
{
    return coll_shmseg_create_within(comm, comm->coll->shm_coll_max, out);
}

int coll_shmseg_create_within(struct vc_comm *comm, size_t cap, struct coll_shmseg **out)
{
    struct coll_shmseg *g = calloc(1, sizeof *g);
    char name[96] = "";
    int fd = -1, ok, all_ok, rc;

    *out = NULL;
    if (g) {
        g->p = comm->size;
        g->comm = comm;
        g->chunk = seg_chunk(g->p);
        g->bytes = coll_shmseg_bytes(g->p);
        g->seq = calloc((size_t)g->p, sizeof *g->seq);
    }
    ok = g && g->seq;
    if (comm->rank == 0 && ok && !(ok = g->accounted = node_reserve(comm->coll, g->bytes, cap)))
        LOG_INFO("coll: a %zu-byte segment for comm ctx %u would pass %zu bytes of "
                 "VCOLL_SHM_COLL_MAX %zu (%zu in use on this node)", g->bytes, comm->ctx, cap,
                 comm->coll->shm_coll_max, coll_shmseg_node_bytes(comm->coll));
    if (comm->rank == 0 && ok) {
        /* unique on the node: my pid and the communicator's context */
        snprintf(name, sizeof name, "/vcoll-cseg-%ld-%u", (long)getpid(), comm->ctx);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        ok = fd >= 0 && ftruncate(fd, (off_t)g->bytes) == 0;
    }
    if ((rc = coll_run_msgs(COLL_BCAST, comm, NULL, name, sizeof name, VC_BYTE, VC_SUM, 0)))
        goto fail;
    if ((rc = agree(comm, ok, &all_ok)) || !all_ok)
        goto fail;
    if (comm->rank != 0)
        fd = shm_open(name, O_RDWR, 0600);
    if (fd >= 0) {
        void *m = mmap(NULL, g->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        g->base = m == MAP_FAILED ? NULL : m;
    }
    if ((rc = agree(comm, g->base != NULL, &all_ok)) || !all_ok)
        goto fail;
    if (comm->rank == 0)
        shm_unlink(name);       /* everyone has it mapped */
    close(fd);
    LOG_DEBUG("coll: shared segment of %zu bytes for comm ctx %u (size %d); node total "
              "%zu of VCOLL_SHM_COLL_MAX %zu", g->bytes, comm->ctx, comm->size,
              coll_shmseg_node_bytes(comm->coll), comm->coll->shm_coll_max);
    *out = g;
    return VC_SUCCESS;
fail:
    if (comm->rank == 0 && name[0])
        shm_unlink(name);
    if (fd >= 0)
        close(fd);
    coll_shmseg_free(g);
    if (!rc)
        LOG_INFO("coll: no shared segment for comm ctx %u: using messages", comm->ctx);
    return rc;
}

int coll_shmseg_of(struct vc_comm *c, struct coll_shmseg **out)
{
    coll_comm_t *cc = coll_priv(c);
    int rc = VC_SUCCESS;
    *out = NULL;
    if (!cc)
        return VC_ERR_NOMEM;
    if (!cc->seg_state) {
        cc->seg_state = -1;
        if (coll_shmseg_eligible(c) && !(rc = coll_shmseg_create(c, &cc->seg)) && cc->seg)
            cc->seg_state = 1;
    }
    *out = cc->seg;
    return rc;
}

/* the next n bytes of a writer's pieces, from cursor (*i, *o) */
static void gather_src(uint8_t *to, const coll_seg_src_t *src, size_t *i, size_t *o, size_t n)
{
    while (n) {
        size_t k = src[*i].n - *o < n ? src[*i].n - *o : n;
        core_copy(to, (const uint8_t *)src[*i].p + *o, k);
        to += k;
        n -= k;
        *o += k;
        if (*o == src[*i].n) {
            ++*i;
            *o = 0;
        }
    }
}

/* member s's range for me, now that its len, off and take are known:
   the chunks I need, the ones before them marked read at once */
static uint64_t set_range(struct coll_shmseg *g, int me, int s, size_t len, size_t a, size_t t,
                          int want, uint64_t *rd, uint64_t *end)
{
    size_t C = g->chunk;
    uint64_t n_s = (len + C - 1) / C;
    rd[s] = end[s] = n_s;
    if (want && t) {
        rd[s] = a / C;
        end[s] = (a + t + C - 1) / C;
    }
    if (rd[s])
        seg_store(seg_done(g, me, s), g->seq[s] + rd[s]);
    return end[s] - rd[s];
}

int coll_seg_stream(struct coll_shmseg *g, int me, size_t *len, const coll_seg_src_t *src,
                    void *const *dst, size_t *off, size_t *take, const coll_seg_hdr_t *hd)
{
    int p = g->p, rc = VC_SUCCESS;
    size_t C = g->chunk, si = 0, so = 0;
    uint64_t mine_n = (len[me] + C - 1) / C, w = 0, left = 0;
    uint64_t base_me = g->seq[me];
    /* per member: the next chunk to read, one past the last I need, and
       whether its header is still to come */
    uint64_t rdb[192], *rd = p <= 64 ? rdb : calloc(3 * (size_t)p, sizeof *rd), *end, *pend;
    unsigned idle = 0;
    double next_check = 0;
    /* a stream from one other member (bcast) waits for that member; one
       from every member (allgather) names none and keeps the spin, as the
       flag slots do: there everyone waits and is waited for */
    int from = -1, nsrc = 0;
    for (int s = 0; s < p; s++)
        if (len[s] || hd) {
            from = s == me ? -1 : comm_world_rank(g->comm, s);
            nsrc++;
        }
    if (nsrc != 1)
        from = -1;

    if (!rd)
        return VC_ERR_NOMEM;
    if (hd && (hd->hsize > COLL_SEG_HDR_MAX || hd->hsize > C || !off || !take)) {
        if (rd != rdb)
            free(rd);
        return VC_ERR_INTERNAL;
    }
    end = rd + p;
    pend = rd + 2 * (size_t)p;
    for (int s = 0; s < p; s++) {
        pend[s] = 0;
        if (s == me) {
            rd[s] = end[s] = 0;
        } else if (hd) {
            /* its header (chunk 0) first: it says what the rest is */
            rd[s] = 0;
            end[s] = 1;
            pend[s] = 1;
            left++;
        } else {
            left += set_range(g, me, s, len[s], off ? off[s] : 0, off ? take[s] : len[s],
                              dst[s] != NULL, rd, end);
        }
    }
    while (w < mine_n || left) {
        int moved = 0;
        /* write while every reader has emptied the slot I need */
        while (w < mine_n && coll_seg_slot_free(g, me, base_me + w)) {
            uint64_t g_abs = base_me + w;
            size_t o = (size_t)w * C, n = len[me] - o < C ? len[me] - o : C;
            gather_src(seg_slot(g, me, g_abs), src, &si, &so, n);
            seg_store(seg_posted(g, me), g_abs + 1);
            w++;
            moved = 1;
        }
        for (int s = 0; s < p; s++) {
            if (s == me || rd[s] >= end[s])
                continue;
            uint64_t avail = seg_load(seg_posted(g, s));
            if (pend[s]) {
                if (g->seq[s] >= avail)
                    continue;
                /* copied out once, then checked and used by the caller */
                uint8_t h[COLL_SEG_HDR_MAX];
                memcpy(h, seg_slot(g, s, g->seq[s]), hd->hsize);
                hd->range(hd->ctx, s, h, &len[s], &off[s], &take[s]);
                pend[s] = 0;
                left--;
                left += set_range(g, me, s, len[s], off[s], take[s], dst[s] != NULL, rd, end);
                moved = 1;
            }
            size_t a = off ? off[s] : 0, t = off ? take[s] : len[s];
            while (rd[s] < end[s] && g->seq[s] + rd[s] < avail) {
                uint64_t g_abs = g->seq[s] + rd[s];
                /* this chunk's bytes of the stream, cut to my range */
                size_t lo = (size_t)rd[s] * C, hi = lo + C < len[s] ? lo + C : len[s];
                lo = lo < a ? a : lo;
                hi = hi > a + t ? a + t : hi;
                core_copy((uint8_t *)dst[s] + (lo - a), seg_slot(g, s, g_abs) + lo % C, hi - lo);
                rd[s]++;
                left--;
                /* past my range: the rest of the stream is done too */
                uint64_t n_s = (len[s] + C - 1) / C;
                seg_store(seg_done(g, me, s), g->seq[s] + (rd[s] == end[s] ? n_s : rd[s]));
                moved = 1;
            }
        }
        if (moved) {
            idle = 0;
            continue;
        }
        if ((rc = prog_wait_step(p2p_prog(g->comm->p2p), g->comm, &idle, &next_check, from)))
            break;
    }
    if (!rc)
        for (int s = 0; s < p; s++)
            g->seq[s] += (len[s] + C - 1) / C;
    if (rd != rdb)
        free(rd);
    return rc;
}

/* one contiguous source, no header */
static int stream(struct coll_shmseg *g, int me, size_t *len, const void *src,
                  void *const *dst, size_t *off, size_t *take)
{
    coll_seg_src_t one = {src, len[me]};
    return coll_seg_stream(g, me, len, &one, dst, off, take, NULL);
}

int coll_seg_args_init(coll_seg_args_t *a, int p)
{
    size_t n = (size_t)p;
    a->heap = NULL;
    a->len = a->off = a->take = NULL;
    a->dst = NULL;
    if (p <= COLL_SEG_ARGS_STACK) {
        /* only the entries p members use */
        memset(a->wb, 0, 3 * n * sizeof *a->wb);
        memset(a->db, 0, n * sizeof *a->db);
        a->len = a->wb;
        a->dst = a->db;
    } else {
        if (!(a->heap = calloc(1, 3 * n * sizeof(size_t) + n * sizeof(void *))))
            return VC_ERR_NOMEM;
        a->len = a->heap;
        a->dst = (void **)(a->len + 3 * n);
    }
    a->off = a->len + n;
    a->take = a->len + 2 * n;
    return VC_SUCCESS;
}

void coll_seg_args_fini(coll_seg_args_t *a)
{
    free(a->heap);
    a->heap = NULL;
}

/* bcast (root >= 0: the root streams bytes from src into everyone's
   rbuf), allgather (root < 0, cnt NULL: every member streams its block of
   bytes) or allgatherv (root < 0: member s streams cnt[s] elements of
   bytes each, read into rbuf at dsp[s]; every member knows every count,
   so all agree on every ring's position) */
static int run_streams(struct coll_shmseg *g, int me, int root, const void *src,
                       void *rbuf, size_t bytes, const size_t *cnt, const size_t *dsp)
{
    coll_seg_args_t a;
    int rc = coll_seg_args_init(&a, g->p);
    if (rc)
        return rc;
    for (int s = 0; s < g->p; s++) {
        a.len[s] = cnt ? cnt[s] * bytes : root < 0 || s == root ? bytes : 0;
        if (root < 0)
            a.dst[s] = (uint8_t *)rbuf + (cnt ? dsp[s] : (size_t)s) * bytes;
        else
            a.dst[s] = s == root && me != root ? rbuf : NULL;
    }
    rc = stream(g, me, a.len, src, a.dst, NULL, NULL);
    coll_seg_args_fini(&a);
    return rc;
}

int coll_shm_bcast(struct coll_shmseg *g, void *buf, size_t bytes, int root, int me)
{
    return run_streams(g, me, root, buf, buf, bytes, NULL, NULL);
}

int coll_shm_allgather(struct coll_shmseg *g, const void *in, void *rbuf, size_t blk,
                       int me)
{
    uint8_t *mine = (uint8_t *)rbuf + (size_t)me * blk;
    if (in != VC_IN_PLACE)
        core_copy(mine, in, blk);
    return run_streams(g, me, -1, mine, rbuf, blk, NULL, NULL);
}

int coll_shm_allgatherv(struct coll_shmseg *g, const void *in, void *rbuf,
                        const size_t *cnt, const size_t *dsp, size_t esize, int me)
{
    uint8_t *mine = (uint8_t *)rbuf + dsp[me] * esize;
    if (in != VC_IN_PLACE && cnt[me])
        core_copy(mine, in, cnt[me] * esize);
    return run_streams(g, me, -1, mine, rbuf, esize, cnt, dsp);
}

/* alltoall: member s streams its whole send buffer (p blocks of blk
   bytes) and reader r copies block r out of every stream; one copy in,
   one out, no handshake per pair (for ranks that share cores, a
   rendezvous waits for each peer to be scheduled). In place, the blocks
   to send are copied aside first: the receives overwrite rbuf while my
   stream may still be reading it. */
int coll_shm_alltoall(struct coll_shmseg *g, const void *in, void *rbuf, size_t blk, int me)
{
    int p = g->p, rc;
    size_t all = (size_t)p * blk;
    void *copy = NULL;
    if (in == VC_IN_PLACE) {
        if (!(copy = malloc(all ? all : 1)))
            return VC_ERR_NOMEM;
        core_copy(copy, rbuf, all);
        in = copy;
    }
    coll_seg_args_t a;
    if (!(rc = coll_seg_args_init(&a, p))) {
        for (int s = 0; s < p; s++) {
            a.len[s] = all;
            a.off[s] = (size_t)me * blk;
            a.take[s] = blk;
            a.dst[s] = (uint8_t *)rbuf + (size_t)s * blk;
        }
        core_copy(a.dst[me], (const uint8_t *)in + (size_t)me * blk, blk);
        rc = stream(g, me, a.len, in, a.dst, a.off, a.take);
        coll_seg_args_fini(&a);
    }
    free(copy);
    return rc;
}

/* Flag barrier: one counter line per member, no data, no messages. */
int coll_shm_seg_barrier(struct coll_shmseg *g, int me)
{
    uint64_t b = ++g->bseq;
    unsigned idle = 0;
    double next_check = 0;
    seg_store(seg_bar(g, me), b);
    for (int s = 0; s < g->p; s++)
        while (seg_load(seg_bar(g, s)) < b) {
            int rc = prog_wait_step(p2p_prog(g->comm->p2p), g->comm, &idle, &next_check,
                                    comm_world_rank(g->comm, s));
            if (rc)
                return rc;
        }
    return VC_SUCCESS;
}
