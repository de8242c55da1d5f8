/*
 * shm_flags_alltoallv.c -- small blocking alltoallv for a world on one
 * node through the node's flag slots: the algorithm "flags" of alltoallv.
 *
 * Every rank writes one line, as a scatter's root does (shm_run.h): a
 * table with an entry per destination, then the blocks that fit their
 * share of the line. It publishes the line and copies its own block out of
 * every other rank's line. Through messages each pair takes a match, a
 * header and a request per direction; here it is one line written and p-1
 * read (two ranks, 8-256 B through the drop-in: pairwise ran 1.10-1.33 of
 * Open MPI where alltoall's flags ran 0.66-0.84).
 *
 * Only the sender knows a block's size before the call, so the algorithm
 * cannot be chosen by size (rules_builtin.c chooses it by rank count); a
 * block that does not fit its share goes by message on the call's tag
 * instead, and both ends tell which from its size alone, the receiver
 * posting the receive before it reads the line. Every rank publishes and
 * reads every line, so the slot reuse of shm_flags.c holds as for the
 * symmetric calls. In place it declines (shm_flags.c), on every rank alike
 * (MPI has all ranks pass MPI_IN_PLACE or none): the blocks sent by
 * message would be read from rbuf while receives overwrite it.
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
#include "net/net.h"
#include "p2p/p2p.h"

/* The table of p entries must fit a line (route.c asks for p entries),
   so p is at most this: the requests fit the stack, and no allocation can
   fail on one rank while the others wait for its line. */
#define MAX_P ((int)(NET_SHM_SLOT_BYTES / sizeof(coll_flags_ent_t)))

typedef struct {
    struct vc_request *req[2 * MAX_P];  /* sends, then receives (want: their sizes) */
    size_t want[2 * MAX_P];
    int rpre[MAX_P];                    /* per source: its receive's index in req, or -1 */
} a2av_reqs_t;

/* the line: the table and the blocks within their share; the blocks past
   it by message (before the line is published, so a rank that reads
   BY_MSG finds its message on the way); one that could not be sent is
   marked BY_FAIL */
static int write_line(const coll_call_t *c, unsigned char *line, size_t cap, int tag,
                      a2av_reqs_t *q, int *nreq)
{
    struct vc_comm *comm = c->comm;
    int p = comm->size, me = comm->rank, rc = VC_SUCCESS;
    size_t es = dtype_size(c->dt), fit = coll_flags_share(cap, p);
    size_t used = (size_t)p * sizeof(coll_flags_ent_t);
    const unsigned char *sb = c->sbuf;
    const size_t *cnt = c->v->counts, *dsp = c->v->displs;
    coll_line_w_t w = {.data = line};
    for (int r = 0; r < p; r++) {
        size_t n = cnt[r] * es;
        coll_flags_ent_t e = {0, 0};
        if (r == me) {
            /* my own block is copied locally */
        } else if (n <= fit) {
            e = (coll_flags_ent_t){(uint32_t)used, (uint32_t)n};
            if (n)
                coll_line_put(&w, used, sb + dsp[r] * es, n);
            used += n;
        } else {
            struct vc_request *s = NULL;
            e.len = COLL_FLAGS_BY_MSG;
            if (!rc) {
                rc = coll_flags_post(COLL_POST_SEND, (void *)(sb + dsp[r] * es), n, r, tag, comm,
                                     &s);
                if (!rc && s && s->done && s->status.error) {
                    rc = s->status.error;
                    req_free(s);
                    s = NULL;
                }
            }
            if (rc)
                e.len = COLL_FLAGS_BY_FAIL;     /* this one and the rest */
            else if (s)
                q->req[(*nreq)++] = s;
        }
        coll_line_put8(&w, (size_t)r * sizeof e, &e);
    }
    coll_line_end(&w);
    return rc;
}

/* my block from rank r, whose line (src, cap bytes) of this call is there:
   from the line, or by the message its entry announces */
static int take(const coll_call_t *c, int r, const unsigned char *src, size_t cap,
                a2av_reqs_t *q, int *nreq, int tag)
{
    struct vc_comm *comm = c->comm;
    int p = comm->size, me = comm->rank;
    size_t es = dtype_size(c->dt);
    size_t n = c->v->rcounts[r] * es;
    unsigned char *dst = (unsigned char *)c->rbuf + c->v->rdispls[r] * es;
    coll_flags_ent_t e;
    memcpy(&e, src + (size_t)me * sizeof e, sizeof e);
    int pre = q->rpre[r], rc = VC_SUCCESS;
    if (e.len == COLL_FLAGS_BY_MSG) {
        if (pre >= 0)
            return VC_SUCCESS;
        /* r sends a block larger than I expect (its share is mine): the
           receive of my size reports the truncation */
        q->want[*nreq] = n;
        if ((rc = coll_flags_post(COLL_POST_RECV, dst, n, r, tag, comm, &q->req[*nreq])))
            return rc;
        q->rpre[r] = (*nreq)++;
        return VC_SUCCESS;
    }
    if (pre >= 0) {     /* no message comes: r's block fitted after all, or failed */
        p2p_cancel(comm->p2p, q->req[pre]);
        req_free(q->req[pre]);
        q->req[pre] = NULL;
        rc = VC_ERR_TRUNCATE;
    }
    if (e.len == COLL_FLAGS_BY_FAIL) {
        LOG_WARN("alltoallv: rank %d could not send this rank's block", r);
        return VC_ERR_TRANSPORT;
    }
    if (e.off < (size_t)p * sizeof e || e.off > cap || e.len > cap - e.off) {
        LOG_WARN("alltoallv: rank %d's line in the node segment names bytes %u..%u of %zu "
                 "for rank %d: dropped", r, e.off, e.off + e.len, cap, me);
        return VC_ERR_TRANSPORT;
    }
    core_copy(dst, src + e.off, e.len < n ? e.len : n);
    return rc ? rc : e.len == n ? VC_SUCCESS : VC_ERR_TRUNCATE;
}

int coll_flags_alltoallv(const coll_call_t *c)
{
    struct vc_comm *comm = c->comm;
    coll_comm_t *cc = c->cc;
    int p = comm->size, me = comm->rank;
    size_t es = dtype_size(c->dt), cap;
    a2av_reqs_t q;
    uint64_t k;
    int tag, nreq = 0, err = VC_SUCCESS;
    unsigned char *line;
    if (p > MAX_P)
        return VC_ERR_INTERNAL;     /* route.c would not have chosen it, on any rank */
    int rc = coll_flags_begin(c, &k, &tag, &line, &cap);
    if (rc)
        return rc;
    /* the blocks too big for a line come by message: receive them first,
       so an eager one finds its buffer */
    size_t fit = coll_flags_share(cap, p);
    for (int r = 0; r < p; r++)
        q.rpre[r] = -1;
    for (int i = 1; i < p && !rc; i++) {
        int r = coll_flags_after(me, i, p);
        size_t n = c->v->rcounts[r] * es;
        if (n <= fit)
            continue;
        q.want[nreq] = n;
        unsigned char *dst = (unsigned char *)c->rbuf + c->v->rdispls[r] * es;
        if (!(rc = coll_flags_post(COLL_POST_RECV, dst, n, r, tag, comm, &q.req[nreq])))
            q.rpre[r] = nreq++;
    }
    /* a receive that cannot be posted fails this rank, but the line still
       goes out: the others wait for it */
    err = rc;
    rc = write_line(c, line, cap, tag, &q, &nreq);
    err = err ? err : rc;
    coll_flags_publish_empty(comm, k);
    size_t own = c->v->counts[me] * es, mine = c->v->rcounts[me] * es;
    if (own)
        core_copy((unsigned char *)c->rbuf + c->v->rdispls[me] * es,
               (const unsigned char *)c->sbuf + c->v->displs[me] * es, own < mine ? own : mine);
    if (own > mine && !err)
        err = VC_ERR_TRUNCATE;
    rc = VC_SUCCESS;
    for (int i = 1; i < p && !rc; i++) {
        int r = coll_flags_after(me, i, p), pre = q.rpre[r], first;
        const unsigned char *src;
        rc = coll_flags_await_line(comm, r, k, cc->layout.oversub, nreq > 0,
                                   pre >= 0 ? q.req[pre] : NULL, &first, &src);
        if (rc || first)        /* its message is in: the line can only agree */
            continue;
        int t = take(c, r, src, cap, &q, &nreq, tag);
        err = err ? err : t;
    }
    /* the cancelled receives are gone: close the gaps */
    int n = 0;
    for (int i = 0; i < nreq; i++)
        if (q.req[i]) {
            q.want[n] = q.want[i];
            q.req[n++] = q.req[i];
        }
    rc = coll_flags_finish(comm, q.req, q.want, n, rc);
    if (!rc)
        cc->flags_seen = k;     /* every line of call k seen, or its rank's message */
    return rc ? rc : err;
}
