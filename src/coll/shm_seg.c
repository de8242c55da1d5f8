/*
 * shm_seg.c -- bcast and allgather through a shared segment, for a
 * communicator whose members all live on one node.
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
 * Memory: DEPTH * chunk bytes per member plus one cache line per (reader,
 * writer) pair; chunk shrinks as members grow so a communicator's segment
 * stays near SEG_BUDGET (coll_shmseg_bytes; vcoll_info prints it).
 *
 * Waits go through vc_wait_step, so a dead member is reported as
 * VC_ERR_PEER_FAILED instead of a hang. Used only when the algorithm is
 * left on auto (api.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "coll.h"
#include "core/ctx.h"
#include "core/log.h"
#include "p2p/p2p.h"

#define SEG_DEPTH   4
#define SEG_BUDGET  (4u << 20)      /* data slots of one communicator */
#define SEG_CHUNK_MAX (64u << 10)
#define SEG_CHUNK_MIN (4u << 10)
#define SEG_LINE    64

struct coll_shmseg {
    uint8_t *base;
    size_t bytes, chunk;
    int p;
    uint64_t *seq;      /* [p] chunks each member has streamed so far */
    const struct vc_comm *comm;   /* its members: only their deaths fail a wait */
};

static size_t seg_chunk(int p)
{
    size_t c = SEG_BUDGET / ((size_t)p * SEG_DEPTH);
    c = c > SEG_CHUNK_MAX ? SEG_CHUNK_MAX : c < SEG_CHUNK_MIN ? SEG_CHUNK_MIN : c;
    return c / SEG_LINE * SEG_LINE;
}

size_t coll_shmseg_bytes(int p)
{
    size_t up = (size_t)p;
    return (up + up * up) * SEG_LINE + up * SEG_DEPTH * seg_chunk(p);
}

static uint64_t *posted(struct coll_shmseg *g, int s)
{
    return (uint64_t *)(g->base + (size_t)s * SEG_LINE);
}

static uint64_t *done(struct coll_shmseg *g, int r, int s)
{
    size_t up = (size_t)g->p;
    return (uint64_t *)(g->base + (up + (size_t)r * up + (size_t)s) * SEG_LINE);
}

static uint8_t *slot(struct coll_shmseg *g, int s, uint64_t k)
{
    size_t up = (size_t)g->p;
    return g->base + (up + up * up) * SEG_LINE +
           ((size_t)s * SEG_DEPTH + (size_t)(k % SEG_DEPTH)) * g->chunk;
}

/* Measured (vcoll_osu_*, 2-core box under load 10-20, so only large
 * ratios count; us, segment vs messages):
 *   bcast np=2: 1 KiB 0.17 vs 1.2, 8 KiB 5.7 vs 9.3, 64 KiB 36 vs 61,
 *     128 KiB 127 vs 74, 1 MiB 1240 vs 645: past 64 KiB one CMA copy from
 *     the root beats copy-in plus copy-out on two ranks.
 *   bcast np=8 (4x oversubscribed): 2-16 KiB 9-14 vs 50-70, 512 KiB 426
 *     vs 1025, 1 MiB about even.
 *   allgather np=2: 8 B 0.16 vs 3.3, 32 KiB 12 vs 28, 128 KiB 114 vs 96,
 *     512 KiB 1258 vs 366 (same reason as bcast).
 *   allgather np=8: up to 32 KiB per rank 65-300 vs 240-1700; from 256
 *     KiB per rank every slot handoff waits for the scheduler to run all
 *     7 readers, and it falls behind.
 * With a core per rank the readers drain in parallel, so the caps on
 * larger communicators apply only when the node is oversubscribed. */
#define SEG_NP2_MAX        (64u << 10)
#define SEG_OVERSUB_TOTAL  (2u << 20)

int coll_shmseg_pays(int kind, int p, size_t bytes, int oversub)
{
    if (!bytes)
        return 0;
    if (p == 2)
        return bytes <= SEG_NP2_MAX;
    if (kind == COLL_ALLGATHER)
        bytes *= (size_t)p;
    return !oversub || bytes <= SEG_OVERSUB_TOTAL;
}

int coll_shmseg_eligible(const struct vc_comm *comm)
{
    const struct vc_ctx *c = &vc_ctx;
    if (!c->shm || comm->size < 2 || !c->boot.node_of)
        return 0;
    /* every member sees every other as local exactly when all share a
       node, so the answer is the same on all of them */
    for (int r = 0; r < comm->size; r++)
        if (c->boot.node_of[comm_world_rank(comm, r)] != c->boot.node_id)
            return 0;
    return 1;
}

void coll_shmseg_free(struct coll_shmseg *g)
{
    if (!g)
        return;
    if (g->base)
        munmap(g->base, g->bytes);
    free(g->seq);
    free(g);
}

/* all members learn whether every one of them succeeded */
static int agree(struct vc_comm *comm, int ok, int *all_ok)
{
    int32_t bad = !ok, any = 0;
    int rc = coll_run(COLL_ALLREDUCE, comm, &bad, &any, 1, VC_INT32, VC_MAX, 0, NULL);
    *all_ok = !rc && !any;
    return rc;
}

/* Collective over comm. *out = NULL (and VC_SUCCESS) when the segment
   cannot be had: every member then falls back alike. */
int coll_shmseg_create(struct vc_comm *comm, struct coll_shmseg **out)
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
    if (comm->rank == 0 && ok) {
        /* unique on the node: my pid and the communicator's context */
        snprintf(name, sizeof name, "/vcoll-cseg-%ld-%u", (long)getpid(), comm->ctx);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        ok = fd >= 0 && ftruncate(fd, (off_t)g->bytes) == 0;
    }
    if ((rc = coll_run(COLL_BCAST, comm, NULL, name, sizeof name, VC_BYTE, VC_SUM, 0, NULL)))
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
    LOG_DEBUG("coll: shared segment of %zu bytes for comm ctx %u (size %d)", g->bytes,
              comm->ctx, comm->size);
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

/* Stream: member s writes len[s] bytes (mine from src) through its ring;
   I copy member s's stream to dst[s] (NULL: not reading it). */
static int stream(struct coll_shmseg *g, int me, const size_t *len, const void *src,
                  void *const *dst)
{
    int p = g->p, rc = VC_SUCCESS;
    size_t C = g->chunk;
    uint64_t mine_n = (len[me] + C - 1) / C, w = 0, left = 0;
    uint64_t base_me = g->seq[me];
    uint64_t rd[64], *rdp = p <= 64 ? rd : calloc((size_t)p, sizeof *rdp);
    unsigned idle = 0;
    double next_check = 0;

    if (!rdp)
        return VC_ERR_NOMEM;
    for (int s = 0; s < p; s++) {
        rdp[s] = 0;
        if (s != me && dst[s])
            left += (len[s] + C - 1) / C;
    }
    while (w < mine_n || left) {
        int moved = 0;
        /* write while every reader has emptied the slot I need */
        while (w < mine_n) {
            uint64_t g_abs = base_me + w;
            int free_slot = 1;
            for (int r = 0; r < p && free_slot && g_abs >= SEG_DEPTH; r++)
                if (r != me && __atomic_load_n(done(g, r, me), __ATOMIC_ACQUIRE) <
                                   g_abs + 1 - SEG_DEPTH)
                    free_slot = 0;
            if (!free_slot)
                break;
            size_t off = (size_t)w * C, n = len[me] - off < C ? len[me] - off : C;
            memcpy(slot(g, me, g_abs), (const uint8_t *)src + off, n);
            __atomic_store_n(posted(g, me), g_abs + 1, __ATOMIC_RELEASE);
            w++;
            moved = 1;
        }
        for (int s = 0; s < p; s++) {
            if (s == me || !dst[s])
                continue;
            uint64_t n_s = (len[s] + C - 1) / C;
            uint64_t avail = __atomic_load_n(posted(g, s), __ATOMIC_ACQUIRE);
            while (rdp[s] < n_s && g->seq[s] + rdp[s] < avail) {
                uint64_t g_abs = g->seq[s] + rdp[s];
                size_t off = (size_t)rdp[s] * C, n = len[s] - off < C ? len[s] - off : C;
                memcpy((uint8_t *)dst[s] + off, slot(g, s, g_abs), n);
                __atomic_store_n(done(g, me, s), g_abs + 1, __ATOMIC_RELEASE);
                rdp[s]++;
                left--;
                moved = 1;
            }
        }
        if (moved) {
            idle = 0;
            continue;
        }
        if ((rc = vc_wait_step(g->comm, &idle, &next_check)))
            break;
    }
    if (!rc)
        for (int s = 0; s < p; s++)
            g->seq[s] += (len[s] + C - 1) / C;
    if (rdp != rd)
        free(rdp);
    return rc;
}

/* bcast (root >= 0: the root streams bytes from src into everyone's
   rbuf) or allgather (root < 0: every member streams its block) */
static int run_streams(struct coll_shmseg *g, int me, int root, const void *src,
                       void *rbuf, size_t bytes)
{
    size_t lenb[64] = {0}, *len = lenb;
    void *dstb[64] = {0}, **dst = dstb;
    int rc = VC_ERR_NOMEM;
    if (g->p > 64) {
        len = calloc((size_t)g->p, sizeof *len);
        dst = calloc((size_t)g->p, sizeof *dst);
    }
    if (len && dst) {
        for (int s = 0; s < g->p; s++) {
            len[s] = root < 0 || s == root ? bytes : 0;
            if (root < 0)
                dst[s] = (uint8_t *)rbuf + (size_t)s * bytes;
            else
                dst[s] = s == root && me != root ? rbuf : NULL;
        }
        rc = stream(g, me, len, src, dst);
    }
    if (len != lenb)
        free(len);
    if (dst != dstb)
        free(dst);
    return rc;
}

int coll_shm_bcast(struct coll_shmseg *g, void *buf, size_t bytes, int root, int me)
{
    return run_streams(g, me, root, buf, buf, bytes);
}

int coll_shm_allgather(struct coll_shmseg *g, const void *in, void *rbuf, size_t blk,
                       int me)
{
    uint8_t *mine = (uint8_t *)rbuf + (size_t)me * blk;
    if (in != VC_IN_PLACE)
        memcpy(mine, in, blk);
    return run_streams(g, me, -1, mine, rbuf, blk);
}
