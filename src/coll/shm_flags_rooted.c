/*
 * shm_flags_rooted.c -- small blocking bcast, gather, gatherv, scatter and
 * scatterv for a world on one node through the node's flag slots
 * (shm_flags.c), no messages: the algorithm "flags" of each.
 *
 * Bcast: the root writes one line, a length word and the bytes, and
 * leaves; every other rank copies them out.
 *
 * Gather: every rank writes its block into its own line (a length word,
 * then the bytes) and leaves; the root copies each line's block out as it
 * appears. Scatter: the root writes one line, a table of (offset, length)
 * per rank and the blocks, and leaves; each rank copies its entry's block
 * out. Through messages the root of a gather takes p - 1 matches and
 * receives and a non-root a send with its header and request; here it is
 * a copy and a flag each.
 *
 * The vector forms take any sizes, since only the root knows them all and
 * the ranks must agree on the algorithm without talking: a block that does
 * not fit (gather: a line; scatter: its share of the root's line) goes by
 * message instead (its length word, or its table entry, says BY_MSG), on
 * a tag every rank takes in every call. Under a correct program both sides
 * know which from the block's size, so the receiver posts the message's
 * receive before it reads the line.
 *
 * Every rank publishes a line in every call (the root of a gather and the
 * others of a scatter an empty one), so the slot reuse of shm_flags.c
 * holds: a rank's line of call k says it is past call k-1. A line is read
 * once into locals and checked against the line's size before use.
 */
#include <stdint.h>
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "comm_priv.h"
#include "shm_run.h"
#include "shm_slots.h"
#include "core/comm.h"
#include "core/log.h"
#include "dtype/dtype.h"
#include "p2p/p2p.h"
#include "progress/progress.h"

size_t coll_flags_need(int kind, size_t bytes, size_t total, int p)
{
    switch (kind) {
    case COLL_BARRIER:
    case COLL_REDUCE:
    case COLL_ALLREDUCE: return bytes;
    case COLL_ALLTOALL:
    case COLL_ALLGATHER:
    case COLL_ALLGATHERV:
    case COLL_REDUCE_SCATTER:           /* the whole vector, on every rank */
    case COLL_REDUCE_SCATTER_BLOCK: return total;
    case COLL_BCAST:
    case COLL_GATHER: return 8 + bytes;
    case COLL_SCATTER: return (size_t)p * sizeof(coll_flags_ent_t) + (size_t)(p - 1) * bytes;
    case COLL_GATHERV: return 8;
    case COLL_SCATTERV:
    case COLL_ALLTOALLV: return (size_t)p * sizeof(coll_flags_ent_t);
    default: return SIZE_MAX;   /* no flags variant */
    }
}

/* wait for rank's line of call k; it is then read with acquire order.
   busy: receives are posted, drive them on every look (the idle step
   polls the transports only now and then). *first = 1 instead when
   `until` (a receive from that rank, or NULL) completes first. yield:
   give the core up on every empty look, for a wait on ranks that may
   need it (a gather's root, ranks outnumbering cores: np 8 on 2 cores,
   gatherv 8 B-2 KiB 2.6-2.9 us against 2.8-3.2 spinning first); the
   others spin first, their root is running (scatterv there 0.7-2.0 us
   against 0.9-3.0 yielding at once) */
int coll_flags_await_line(const struct vc_comm *comm, int rank, uint64_t k, int yield,
                          int busy, const struct vc_request *until, int *first,
                          const unsigned char **data)
{
    *first = 0;
    const uint64_t *seqw;
    size_t cap;
    *data = coll_flags_line(comm, rank, k, &seqw, &cap);
    unsigned idle = 0;
    double next_check = 0;
    int who = yield ? PROG_YIELD_AT_ONCE : rank;
    while (__atomic_load_n(seqw, __ATOMIC_ACQUIRE) < k) {
        if (until && until->done) {
            *first = 1;
            return VC_SUCCESS;
        }
        if (busy && p2p_progress(comm->p2p) > 0)
            continue;
        int rc = prog_wait_step(p2p_prog(comm->p2p), comm, &idle, &next_check, who);
        if (rc)
            return rc;
    }
    return VC_SUCCESS;
}

/* a block that does not fit the line, by message (tag: this call's) */
int coll_flags_post(int way, void *buf, size_t n, int peer, int tag, struct vc_comm *comm,
                    struct vc_request **req)
{
    *req = NULL;
    if (way == COLL_POST_RECV)
        return p2p_irecv(buf, n, peer, tag, comm, 1, 0, req);
    /* a send that fits the transport at once needs no request (*req NULL) */
    if (p2p_send_fast(buf, n, peer, tag, comm, 1,
                      way == COLL_POST_SEND_FANIN ? P2P_SEND_EAGER : 0) == VC_SUCCESS)
        return VC_SUCCESS;
    return p2p_isend(buf, n, peer, tag, comm, 1, req);
}

/* wait for and free the n requests; a receive must bring exactly `want` */
int coll_flags_finish(struct vc_comm *comm, struct vc_request **req, const size_t *want, int n,
                      int rc)
{
    int w = n ? p2p_waitall(comm->p2p, n, req) : VC_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!w && req[i]->kind == REQ_RECV && req[i]->status.bytes != want[i])
            w = VC_ERR_TRUNCATE;
        req_free(req[i]);
    }
    return rc ? rc : w;
}

/* What every rooted call does first, on every rank: number the call (*k),
   take its tag (used or not, so the counters stay in step), wait until
   the slots may be written (coll_flags_settle), find my line and count
   the call. */
int coll_flags_begin(const coll_call_t *c, uint64_t *k, int *tag, unsigned char **line,
                     size_t *cap)
{
    coll_comm_t *cc = c->cc;
    const uint64_t *seqw;
    *k = ++cc->shm_seq;
    *tag = coll_next_tag(c->comm);
    int rc = coll_flags_settle(c->comm, cc, *k);
    if (rc)
        return rc;
    *line = coll_flags_line(c->comm, c->comm->rank, *k, &seqw, cap);
    cc->seg_calls[c->kind]++;
    return VC_SUCCESS;
}

int coll_flags_gather(const coll_call_t *c)
{
    struct vc_comm *comm = c->comm;
    coll_comm_t *cc = c->cc;
    int p = comm->size, me = comm->rank, root = c->root;
    int oversub = cc->layout.oversub;
    size_t es = dtype_size(c->dt), cap;
    uint64_t k;
    int tag;
    unsigned char *line;
    int rc = coll_flags_begin(c, &k, &tag, &line, &cap);
    if (rc)
        return rc;

    if (me != root) {
        uint64_t n = c->count * es;
        uint64_t len = n + 8 <= cap ? n : COLL_FLAGS_BY_MSG;
        struct vc_request *r = NULL;
        coll_line_w_t w = {.data = line};
        coll_line_put(&w, 0, &len, 8);
        if (len != COLL_FLAGS_BY_MSG)
            coll_line_put(&w, 8, c->sbuf, n);
        coll_line_end(&w);
        /* the message before the line: the root has its receive posted
           already, and the sooner it sees the message the sooner it asks
           me to copy my part of a large one (p2p.c, split copies) */
        if (len == COLL_FLAGS_BY_MSG) {
            rc = coll_flags_post(COLL_POST_SEND_FANIN, (void *)c->sbuf, n, root, tag, comm, &r);
            if (!rc && r && r->done && r->status.error)
                rc = r->status.error;
            if (rc) {       /* nothing is on its way: the root must not wait */
                len = COLL_FLAGS_BY_FAIL;
                memcpy(line, &len, 8);
            }
        }
        coll_flags_publish_empty(comm, k);
        if (rc || !r) {
            if (r)
                req_free(r);    /* done: it failed */
            return rc;
        }
        return coll_flags_finish(comm, &r, NULL, 1, VC_SUCCESS);
    }

    coll_flags_publish_empty(comm, k);   /* nothing in it: says I am past call k-1 */
    unsigned char *rb = c->rbuf;
    /* blocks too big for a line come by message: post those receives
       first, so an eager one finds its buffer (a sender that disagrees is
       settled below, one way or the other) */
    struct vc_request *req[64];
    size_t want[64];
    signed char *slot = p <= 64 ? (signed char[64]){0} : NULL;
    int nreq = 0, err = VC_SUCCESS;
    for (int i = 1; i < p && slot; i++) {
        int r = coll_flags_after(root, i, p);
        size_t n = coll_blk_bytes(c, r, es);
        slot[r] = -1;
        if (n + 8 <= cap)
            continue;
        want[nreq] = n;
        if ((rc = coll_flags_post(COLL_POST_RECV, rb + coll_blk_off(c, r, es), n, r, tag, comm,
                                  &req[nreq])))
            break;
        slot[r] = (signed char)nreq++;
    }
    /* my own block once those are under way (a large message's sender
       copies its part beside me: p2p.c, split copies) */
    if (nreq)
        p2p_progress(comm->p2p);
    if (c->sbuf != VC_IN_PLACE && c->count)
        core_copy(rb + coll_blk_off(c, root, es), c->sbuf,
               c->count * es);
    for (int i = 1; i < p && !rc; i++) {
        int r = coll_flags_after(root, i, p);
        size_t n = coll_blk_bytes(c, r, es);
        unsigned char *dst = rb + coll_blk_off(c, r, es);
        int pre = slot ? slot[r] : -1, first;
        const unsigned char *src;
        /* yield at once only with nothing to drive: with big blocks on
           their way the root has their copies to do (np 4 on 2 cores,
           gatherv 32-64 KiB through the drop-in: 0.76-0.89 of Open MPI
           against 0.85-1.01 yielding) */
        rc = coll_flags_await_line(comm, r, k, oversub && !nreq, nreq > 0,
                                   pre >= 0 ? req[pre] : NULL, &first, &src);
        if (rc)
            break;
        if (first)          /* its message is in: the line can only agree */
            continue;
        uint64_t len;
        memcpy(&len, src, 8);
        if (len == COLL_FLAGS_BY_MSG) {
            if (pre >= 0)
                continue;
            if (nreq == (int)(sizeof req / sizeof req[0])) {   /* many big blocks: drain */
                rc = coll_flags_finish(comm, req, want, nreq, VC_SUCCESS);
                nreq = 0;
                slot = NULL;
                if (rc)
                    break;
            }
            want[nreq] = n;
            rc = coll_flags_post(COLL_POST_RECV, dst, n, r, tag, comm, &req[nreq]);
            nreq += !rc;
            continue;
        }
        if (pre >= 0) {     /* no message will come: it fitted after all, or failed */
            p2p_cancel(comm->p2p, req[pre]);
            req[pre]->done = 1;
            want[pre] = req[pre]->status.bytes;
            err = err ? err : VC_ERR_TRUNCATE;
        }
        if (len == COLL_FLAGS_BY_FAIL) {
            LOG_WARN("gather: rank %d could not send its block", r);
            err = VC_ERR_TRANSPORT;
            continue;
        }
        if (len > cap - 8) {
            LOG_WARN("gather: rank %d's line in the node segment names %llu bytes "
                     "(at most %zu fit): dropped", r, (unsigned long long)len, cap - 8);
            err = VC_ERR_TRANSPORT;
            continue;
        }
        if (len != n && !err)
            err = VC_ERR_TRUNCATE;      /* the ranks disagree on the counts */
        core_copy(dst, src + 8, len < n ? len : n);
    }
    rc = coll_flags_finish(comm, req, want, nreq, rc);
    if (!rc)
        cc->flags_seen = k;     /* every line of call k seen */
    return rc ? rc : err;
}

int coll_flags_bcast(const coll_call_t *c)
{
    struct vc_comm *comm = c->comm;
    uint64_t n = c->count * dtype_size(c->dt), k;
    size_t cap;
    int tag;
    unsigned char *line;
    int rc = coll_flags_begin(c, &k, &tag, &line, &cap);
    if (rc)
        return rc;
    if (comm->rank == c->root) {
        /* (selection saw n + 8 fit; every rank asks with the same n) */
        coll_line_w_t w = {.data = line};
        coll_line_put(&w, 0, &n, 8);
        coll_line_put(&w, 8, c->rbuf, (size_t)n);
        coll_line_end(&w);
        coll_flags_publish_empty(comm, k);
        return VC_SUCCESS;
    }
    coll_flags_publish_empty(comm, k);   /* empty: I am past call k-1 */
    const unsigned char *src;
    int first;
    if ((rc = coll_flags_await_line(comm, c->root, k, 0, 0, NULL, &first, &src)))
        return rc;
    uint64_t len;
    memcpy(&len, src, 8);
    if (len > cap - 8) {
        LOG_WARN("bcast: the root's line in the node segment says %llu bytes, more than "
                 "its %zu: dropped", (unsigned long long)len, cap - 8);
        return VC_ERR_TRANSPORT;
    }
    size_t got = (size_t)(len < n ? len : n);
    if (got)    /* (a count of 0 may come with no buffer) */
        core_copy(c->rbuf, src + 8, got);
    return len == n ? VC_SUCCESS : VC_ERR_TRUNCATE;
}

int coll_flags_scatter(const coll_call_t *c)
{
    struct vc_comm *comm = c->comm;
    int p = comm->size, me = comm->rank, root = c->root;
    size_t es = dtype_size(c->dt), cap;
    uint64_t k;
    int tag;
    unsigned char *line;
    int rc = coll_flags_begin(c, &k, &tag, &line, &cap);
    if (rc)
        return rc;

    if (me != root) {
        coll_flags_publish_empty(comm, k);   /* empty: I am past call k-1 */
        size_t n = c->count * es;
        /* a block over its share comes by message: receive it at once, so
           an eager one finds its buffer */
        struct vc_request *r = NULL;
        if (n > coll_flags_share(cap, p) &&
            (rc = coll_flags_post(COLL_POST_RECV, c->rbuf, n, root, tag, comm, &r)))
            return rc;
        int first;
        const unsigned char *src;
        rc = coll_flags_await_line(comm, root, k, 0, r != NULL, r, &first, &src);
        /* the message is in (the root's line can only agree), or the wait
           failed: a receive under way must settle before rbuf is given
           back (a live root may still be copying into it) */
        if (r && (first || rc))
            return coll_flags_finish(comm, &r, &n, 1, rc);
        if (rc)
            return rc;
        coll_flags_ent_t e;
        memcpy(&e, src + (size_t)me * sizeof e, sizeof e);
        if (e.len == COLL_FLAGS_BY_MSG) {
            if (!r && (rc = coll_flags_post(COLL_POST_RECV, c->rbuf, n, root, tag, comm, &r)))
                return rc;
            return coll_flags_finish(comm, &r, &n, 1, VC_SUCCESS);
        }
        if (r) {            /* the root disagrees on its size, or failed: no message comes */
            p2p_cancel(comm->p2p, r);
            req_free(r);
            rc = VC_ERR_TRUNCATE;
        }
        if (e.len == COLL_FLAGS_BY_FAIL) {
            LOG_WARN("scatter: the root could not send this rank's block");
            return VC_ERR_TRANSPORT;
        }
        if (e.off < (size_t)p * sizeof e || e.off > cap || e.len > cap - e.off) {
            LOG_WARN("scatter: the root's line in the node segment names bytes %u..%u of %zu "
                     "for rank %d: dropped", e.off, e.off + e.len, cap, me);
            return VC_ERR_TRANSPORT;
        }
        core_copy(c->rbuf, src + e.off, e.len < n ? e.len : n);
        return rc ? rc : e.len == n ? VC_SUCCESS : VC_ERR_TRUNCATE;
    }

    /* the root: the table, the blocks within their share after it */
    const unsigned char *sb = c->sbuf;
    struct vc_request *req[64];
    int nreq = 0, failed = 0, bymsg = 0;
    size_t used = (size_t)p * sizeof(coll_flags_ent_t), fit = coll_flags_share(cap, p);
    coll_line_w_t w = {.data = line};
    for (int i = 1; i <= p; i++) {
        int r = coll_flags_after(root, i, p);
        size_t n = coll_blk_bytes(c, r, es);
        coll_flags_ent_t e = {0, 0};
        if (r == root) {
            /* its own block is copied locally */
        } else if (n <= fit) {
            e = (coll_flags_ent_t){(uint32_t)used, (uint32_t)n};
            if (n)
                coll_line_put(&w, used, sb + coll_blk_off(c, r, es), n);
            used += n;
        } else {
            e.len = COLL_FLAGS_BY_MSG;
            bymsg++;
        }
        coll_line_put8(&w, (size_t)r * sizeof e, &e);
    }
    coll_line_end(&w);
    /* the messages first: a rank that reads BY_MSG finds its message on
       the way, or already there */
    for (int i = 1; bymsg && i < p && !rc; i++) {
        int r = coll_flags_after(root, i, p);
        coll_flags_ent_t e;
        memcpy(&e, line + (size_t)r * sizeof e, sizeof e);
        if (e.len != COLL_FLAGS_BY_MSG)
            continue;
        if (nreq == (int)(sizeof req / sizeof req[0])) {
            /* (waiting on sends whose ranks wait on the line) */
            coll_flags_publish_empty(comm, k);
            if ((rc = coll_flags_finish(comm, req, NULL, nreq, VC_SUCCESS)))
                break;
            nreq = 0;
        }
        size_t n = coll_blk_bytes(c, r, es);
        rc = coll_flags_post(COLL_POST_SEND, (void *)(sb + coll_blk_off(c, r, es)), n, r, tag,
                             comm, &req[nreq]);
        if (!rc && req[nreq] && req[nreq]->done && req[nreq]->status.error) {
            rc = req[nreq]->status.error;
            req_free(req[nreq]);
        } else {
            nreq += !rc && req[nreq];
        }
        if (rc)
            failed = i;
    }
    /* what could not be sent is marked, or its rank would wait for it
       (before the line is published; past 64 blocks by message it may be
       out already, and a failure there is left to the transport's) */
    for (int i = failed; i && i < p; i++) {
        int r = coll_flags_after(root, i, p);
        coll_flags_ent_t e;
        memcpy(&e, line + (size_t)r * sizeof e, sizeof e);
        if (e.len == COLL_FLAGS_BY_MSG) {
            e.len = COLL_FLAGS_BY_FAIL;
            memcpy(line + (size_t)r * sizeof e, &e, sizeof e);
        }
    }
    coll_flags_publish_empty(comm, k);
    size_t own = coll_blk_bytes(c, root, es);    /* fits rbuf: the API checked */
    if (c->rbuf != VC_IN_PLACE && own)
        core_copy(c->rbuf, sb + coll_blk_off(c, root, es), own);
    return coll_flags_finish(comm, req, NULL, nreq, rc);
}
