/*
 * shm_alltoallv.c -- alltoallv through a one-node communicator's segment
 * (the "shm" algorithm of alltoallv; shm_node.c runs it).
 *
 * Why: ranks that share cores pay a scheduling wait for every rendezvous
 * handshake; through the segment each rank writes its blocks once and
 * every reader copies its own out, as alltoall does (shm_seg.c).
 *
 * What differs from alltoall: a reader knows how much each member sends
 * it (its receive count) but not where that block lies among the
 * member's others, so each member's stream starts with a header -- the
 * stream's length and each destination's offset in it -- and the blocks
 * follow, packed, straight from the send buffer. Each reader copies each
 * header out once, checks its own entry against the stream's length and
 * its receive count, and only then reads.
 *
 * Blocks past SHM_A2AV_BLOCK_MAX go as messages instead (rendezvous: one
 * copy, where the segment's two lose; measured on alltoall, see
 * rules_builtin.c). Sender and receiver both know the block's size, so
 * they agree on the path with no exchange; every member still writes its
 * header, so every reader learns every stream's length and all keep the
 * rings' positions alike.
 *
 * Which calls come here cannot depend on their sizes (only the sender of
 * a block knows them before the headers). But after a call every member
 * has read every header, so all know its average block alike: when it
 * was past SHM_A2AV_BLOCK_MAX, the next calls go to the message
 * algorithms (the header round only costs there), all but every
 * SHM_A2AV_RELEARN-th, which comes here again to see whether the sizes
 * changed. Codes repeat the same exchange (a transpose per step), so the
 * first call decides for the ones after it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "comm_priv.h"
#include "shm_seg.h"

#define SHM_A2AV_BLOCK_MAX (32u << 10)
#define SHM_A2AV_RELEARN 32

typedef struct a2av {
    int me, p, bad;
    size_t es;
    const size_t *rcnt;
    size_t *msg;        /* per member: bytes it sends me as a message */
    uint64_t total;     /* every block of every header, but to oneself */
} a2av_t;

/* the blocks a header announces, but its writer's own */
static uint64_t hdr_total(const uint8_t *hdr, int s, int p)
{
    uint64_t t = 0, n;
    for (int j = 0; j < p; j++)
        if (j != s) {
            memcpy(&n, hdr + (2 + 2 * (size_t)j) * sizeof n, sizeof n);
            t = t + n < t ? UINT64_MAX : t + n;     /* a forged size must not wrap */
        }
    return t;
}

int coll_shm_alltoallv_declines(struct coll_shmseg *g)
{
    if (!g->a2av_big)
        return 0;
    if (++g->a2av_skipped < SHM_A2AV_RELEARN)
        return 1;
    g->a2av_skipped = 0;
    return 0;
}

static int in_stream(size_t bytes)
{
    return bytes && bytes <= SHM_A2AV_BLOCK_MAX;
}

int coll_a2av_hdr_check(const uint8_t *hdr, int me, size_t want, size_t *len, size_t *off,
                        size_t *take, size_t *msg)
{
    uint64_t h[3];
    int bad = 0;
    memcpy(&h[0], hdr, sizeof h[0]);
    memcpy(&h[1], hdr + (1 + 2 * (size_t)me) * sizeof h[0], 2 * sizeof h[0]);
    *len = (size_t)h[0];
    *off = *take = *msg = 0;
    if (h[2] != (uint64_t)want)
        bad = 1;        /* counts that do not match across ranks */
    if (h[1] == UINT64_MAX) {
        *msg = (size_t)h[2];
    } else if (h[1] <= h[0] && h[2] <= h[0] - h[1]) {
        *off = (size_t)h[1];
        *take = (size_t)(h[2] < want ? h[2] : want);
    } else {
        bad = 1;        /* not inside its own stream */
    }
    return bad;
}

static void range(void *ctx, int s, const uint8_t *hdr, size_t *len, size_t *off, size_t *take)
{
    a2av_t *x = ctx;
    x->total += hdr_total(hdr, s, x->p);
    if (coll_a2av_hdr_check(hdr, x->me, x->rcnt[s] * x->es, len, off, take, &x->msg[s]))
        x->bad = 1;
}

int coll_shm_alltoallv(struct coll_shmseg *g, struct vc_comm *comm, int tag, const void *in,
                       void *rbuf, const size_t *scnt, const size_t *sdsp, const size_t *rcnt,
                       const size_t *rdsp, size_t es)
{
    int p = g->p, me = comm->rank, rc = VC_ERR_NOMEM, rc2;
    size_t hsize = (2 * (size_t)p + 1) * sizeof(uint64_t);
    uint8_t *copy = NULL, *tmp = NULL;
    const uint8_t *sb = in;
    if (in == VC_IN_PLACE) {
        /* my blocks are in rbuf, which the receives overwrite: aside */
        size_t ext = 0;
        for (int j = 0; j < p; j++)
            if (rcnt[j] && (rdsp[j] + rcnt[j]) * es > ext)
                ext = (rdsp[j] + rcnt[j]) * es;
        if (!(copy = malloc(ext ? ext : 1)))
            return VC_ERR_NOMEM;
        core_copy(copy, rbuf, ext);
        sb = copy;
        scnt = rcnt;
        sdsp = rdsp;
    }
    uint64_t *hdr = malloc(hsize);
    size_t *msg = calloc((size_t)p, sizeof *msg);
    coll_seg_args_t sa;
    int args = coll_seg_args_init(&sa, p) == VC_SUCCESS;
    size_t *len = sa.len, *off = sa.off, *take = sa.take;
    void **dst = sa.dst;
    coll_seg_src_t *src = calloc((size_t)p + 1, sizeof *src);
    struct vc_request **req = calloc(2 * (size_t)p, sizeof *req);
    a2av_t x = {me, p, 0, es, rcnt, msg, 0};
    coll_sched_t ss, rs;    /* the big blocks: sends now, receives once announced */
    coll_args_t a;
    int nsrc = 1, ns = 0, nr = 0;
    size_t tmp_bytes = 0;
    coll_args_set(&a, COLL_ALLTOALLV, me, p, 0, 0, VC_BYTE, VC_SUM, 0);
    sched_init(&ss, &a);
    sched_init(&rs, &a);
    if (!hdr || !msg || !args || !src || !req)
        goto out;
    /* my stream: the header, then my streamed blocks in destination order;
       bigger blocks go as messages, started now so their handshakes run
       while the streams do */
    uint64_t at = hsize;
    src[0] = (coll_seg_src_t){hdr, hsize};
    for (int j = 0; j < p; j++) {
        size_t n = scnt[j] * es;
        hdr[1 + 2 * j] = UINT64_MAX;
        hdr[2 + 2 * j] = n;
        if (j == me || !n)
            continue;
        if (in_stream(n)) {
            hdr[1 + 2 * j] = at;
            src[nsrc++] = (coll_seg_src_t){sb + sdsp[j] * es, n};
            at += n;
        } else {
            sched_send(&ss, COLL_SBUF, sdsp[j] * es, n, j);
        }
    }
    hdr[0] = at;
    len[me] = (size_t)at;
    void *base[COLL_NBUF] = {(void *)sb, rbuf, NULL};
    if ((rc = sched_done(&ss)) || (rc = coll_exec_post(&ss, base, comm, tag, req, &ns)))
        goto reap;
    for (int j = 0; j < p; j++)
        dst[j] = j == me ? NULL : (uint8_t *)rbuf + rdsp[j] * es;
    if (scnt[me] != rcnt[me])
        x.bad = 1;
    else
        core_copy((uint8_t *)rbuf + rdsp[me] * es, sb + sdsp[me] * es, rcnt[me] * es);
    coll_seg_hdr_t hd = {hsize, range, &x};
    if ((rc = coll_seg_stream(g, me, len, src, dst, off, take, &hd)))
        goto reap;
    x.total += hdr_total((const uint8_t *)hdr, me, p);
    g->a2av_big = p > 1 && x.total > (uint64_t)p * (uint64_t)(p - 1) * SHM_A2AV_BLOCK_MAX;
    /* the messages the headers announced (a bigger one than I expect goes
       to scratch: it must be taken, and the call fails) */
    for (int j = 0; j < p; j++) {
        size_t want = rcnt[j] * es;
        if (j == me || !msg[j])
            continue;
        if (msg[j] <= want) {
            sched_recv(&rs, COLL_RBUF, rdsp[j] * es, msg[j], j);
        } else {
            sched_recv(&rs, COLL_TMP, 0, msg[j], j);
            tmp_bytes = msg[j] > tmp_bytes ? msg[j] : tmp_bytes;
        }
    }
    if (!(rc = sched_done(&rs)) && tmp_bytes && !(tmp = malloc(tmp_bytes)))
        rc = VC_ERR_NOMEM;
    base[COLL_TMP] = tmp;
    if (!rc)
        rc = coll_exec_post(&rs, base, comm, tag, req + ns, &nr);
reap:
    /* every posted request finishes before its buffers go */
    rc2 = coll_exec_reap(comm, req, ns + nr);
    rc = rc ? rc : rc2;
    if (!rc && x.bad)
        rc = VC_ERR_TRUNCATE;
out:
    sched_free(&ss);
    sched_free(&rs);
    free(copy);
    free(tmp);
    free(hdr);
    coll_seg_args_fini(&sa);     /* safe after a failed init too */
    free(msg);
    free(src);
    free(req);
    return rc;
}
