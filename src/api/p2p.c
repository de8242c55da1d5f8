/*
 * p2p.c -- public point-to-point calls and the calls on requests (waits,
 * tests, and starting and freeing persistent collectives): validate every
 * argument, then hand over to the protocol layer. Nothing reaches p2p.c
 * unchecked.
 *
 * A persistent request is completed like any other, but kept: it goes back
 * to inactive and the handle stays; an inactive one is, to every wait and
 * test, what VC_REQUEST_NULL is (done at once, empty status).
 */
#include <stddef.h>
#include "vcoll.h"
#include "api.h"
#include "p2p/p2p.h"
#include "coll/coll.h"
#include "net/net.h"
#include "dtype/dtype.h"

static int check_buf(const void *buf, size_t count, vc_dtype_t dt, size_t *bytes)
{
    int rc = dtype_bytes(dt, count, bytes);
    if (rc)
        return rc;
    if (!buf && count)
        return VC_ERR_BUFFER;
    return VC_SUCCESS;
}

/* wild = 1 for receives: VC_ANY_SOURCE / VC_ANY_TAG are allowed */
static int check_args(const void *buf, size_t count, vc_dtype_t dt, int peer, int tag,
                      vc_comm_t comm, int wild, size_t *bytes)
{
    VC_CHECK_INIT();
    if (comm_check(comm))
        return VC_ERR_COMM;
    int rc = check_buf(buf, count, dt, bytes);
    if (rc)
        return rc;
    if (!(wild && peer == VC_ANY_SOURCE) && (peer < 0 || peer >= comm->size))
        return VC_ERR_RANK;
    if (!(wild && tag == VC_ANY_TAG) && (tag < 0 || tag > VC_TAG_UB))
        return VC_ERR_TAG;
    return VC_SUCCESS;
}
#define check_send(b, c, d, p, t, m, n) check_args(b, c, d, p, t, m, 0, n)
#define check_recv(b, c, d, p, t, m, n) check_args(b, c, d, p, t, m, 1, n)

static void empty_status(vc_status_t *status)
{
    if (status) {
        status->source = VC_ANY_SOURCE;
        status->tag = VC_ANY_TAG;
        status->error = VC_SUCCESS;
        status->bytes = 0;
    }
}

/* Wait + copy status, then free the request and set *slot to NULL -- or,
   a persistent one, make it inactive and keep it. NULL and inactive
   requests: the empty status at once. Shared by every wait and test and
   the blocking calls. */
static int complete_slot(vc_request_t *slot, vc_status_t *status)
{
    struct vc_request *r = *slot;
    if (r == VC_REQUEST_NULL || req_inactive(r)) {
        empty_status(status);
        return VC_SUCCESS;
    }
    int rc = p2p_wait(ctx_lib.p2p, r);
    if (status)
        *status = r->status;
    if (r->persist) {
        r->persist = PERSIST_INACTIVE;
        return rc;
    }
    req_free(r);
    *slot = VC_REQUEST_NULL;
    return rc;
}

static int complete(struct vc_request *r, vc_status_t *status)
{
    return complete_slot(&r, status);
}

int vc_isend(const void *buf, size_t count, vc_dtype_t dtype, int dest, int tag,
             vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    size_t bytes;
    int rc = check_send(buf, count, dtype, dest, tag, comm, &bytes);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    return p2p_isend(buf, bytes, dest, tag, comm, 0, req);
}

int vc_irecv(void *buf, size_t count, vc_dtype_t dtype, int source, int tag,
             vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    size_t bytes;
    int rc = check_recv(buf, count, dtype, source, tag, comm, &bytes);
    if (rc)
        return rc;
    if (!req)
        return VC_ERR_ARG;
    return p2p_irecv(buf, bytes, source, tag, comm, 0, 0, req);
}

int vc_send(const void *buf, size_t count, vc_dtype_t dtype, int dest, int tag,
            vc_comm_t comm)
{
    VC_API_ENTER();
    size_t bytes;
    int rc = check_send(buf, count, dtype, dest, tag, comm, &bytes);
    if (rc)
        return rc;
    rc = p2p_send_fast(buf, bytes, dest, tag, comm, 0, 0);
    if (rc != NET_AGAIN)
        return rc;
    struct vc_request *r;
    rc = p2p_isend(buf, bytes, dest, tag, comm, 0, &r);
    return rc ? rc : complete(r, NULL);
}

int vc_recv(void *buf, size_t count, vc_dtype_t dtype, int source, int tag,
            vc_comm_t comm, vc_status_t *status)
{
    VC_API_ENTER();
    struct vc_request *r;
    int rc = vc_irecv(buf, count, dtype, source, tag, comm, &r);
    return rc ? rc : complete(r, status);
}

int vc_sendrecv(const void *sbuf, size_t scount, vc_dtype_t sdtype, int dest, int stag,
                void *rbuf, size_t rcount, vc_dtype_t rdtype, int source, int rtag,
                vc_comm_t comm, vc_status_t *status)
{
    VC_API_ENTER();
    size_t sbytes, rbytes;
    int rc = check_send(sbuf, scount, sdtype, dest, stag, comm, &sbytes);
    if (rc)
        return rc;
    rc = check_recv(rbuf, rcount, rdtype, source, rtag, comm, &rbytes);
    if (rc)
        return rc;
    struct vc_request *rr, *sr;
    rc = p2p_irecv(rbuf, rbytes, source, rtag, comm, 0, 0, &rr);
    if (rc)
        return rc;
    rc = p2p_isend(sbuf, sbytes, dest, stag, comm, 0, &sr);
    if (rc) {
        complete(rr, status);
        return rc;
    }
    int src = complete(sr, NULL);
    int rrc = complete(rr, status);
    return rrc ? rrc : src;
}

int vc_wait(vc_request_t *req, vc_status_t *status)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!req)
        return VC_ERR_ARG;
    if (*req == VC_REQUEST_NULL) {   /* as in MPI: waiting on nothing is fine */
        empty_status(status);
        return VC_SUCCESS;
    }
    if (!req_valid(*req))
        return VC_ERR_REQUEST;
    return complete_slot(req, status);
}

int vc_test(vc_request_t *req, int *flag, vc_status_t *status)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!req || !flag)
        return VC_ERR_ARG;
    if (*req == VC_REQUEST_NULL || (req_valid(*req) && req_inactive(*req))) {
        *flag = 1;
        empty_status(status);
        return VC_SUCCESS;
    }
    if (!req_valid(*req))
        return VC_ERR_REQUEST;
    if (!(*req)->done) {
        p2p_progress(ctx_lib.p2p);
        /* a request whose peer is dead is finished: report it */
        if (!(*req)->done)
            p2p_test_idle(ctx_lib.p2p, *req);
    }
    *flag = (*req)->done;
    return *flag ? complete_slot(req, status) : VC_SUCCESS;
}

/* n, the array and every entry of a multi-request call */
static int check_reqs(int n, vc_request_t reqs[])
{
    VC_CHECK_INIT();
    if (n < 0 || (n > 0 && !reqs))
        return VC_ERR_ARG;
    return req_check_array(n, reqs);
}

/* complete reqs[i] (done or not) into its status slot */
static int complete_at(vc_request_t reqs[], int i, vc_status_t *status)
{
    return complete_slot(&reqs[i], status);
}

int vc_waitall(int n, vc_request_t reqs[], vc_status_t statuses[])
{
    VC_API_ENTER();
    /* validate everything before waiting on anything */
    int rc = check_reqs(n, reqs), err = VC_SUCCESS;
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        rc = complete_at(reqs, i, statuses ? &statuses[i] : NULL);
        if (rc && !err)
            err = rc;
    }
    return err;
}

static int all_done(int n, vc_request_t reqs[])
{
    for (int i = 0; i < n; i++)
        if (reqs[i] && !reqs[i]->done)
            return 0;
    return 1;
}

int vc_testall(int n, vc_request_t reqs[], int *flag, vc_status_t statuses[])
{
    VC_API_ENTER();
    int rc = check_reqs(n, reqs), err = VC_SUCCESS;
    if (rc)
        return rc;
    if (!flag)
        return VC_ERR_ARG;
    /* all or nothing, as in MPI: nothing is freed unless all are done */
    if (!all_done(n, reqs)) {
        p2p_progress(ctx_lib.p2p);
        /* a request whose peer is dead is finished: report it */
        if (!all_done(n, reqs))
            p2p_test_idle_n(ctx_lib.p2p, n, reqs);
        if (!all_done(n, reqs)) {
            *flag = 0;
            return VC_SUCCESS;
        }
    }
    *flag = 1;
    for (int i = 0; i < n; i++) {
        rc = complete_at(reqs, i, statuses ? &statuses[i] : NULL);
        if (rc && !err)
            err = rc;
    }
    return err;
}

int vc_waitany(int n, vc_request_t reqs[], int *index, vc_status_t *status)
{
    VC_API_ENTER();
    int rc = check_reqs(n, reqs);
    if (rc)
        return rc;
    if (!index)
        return VC_ERR_ARG;
    int i = p2p_waitany(ctx_lib.p2p, n, reqs);
    if (i < 0) {
        *index = VC_UNDEFINED;
        empty_status(status);
        return VC_SUCCESS;
    }
    *index = i;
    return complete_at(reqs, i, status);
}

int vc_testany(int n, vc_request_t reqs[], int *index, int *flag, vc_status_t *status)
{
    VC_API_ENTER();
    int rc = check_reqs(n, reqs);
    if (rc)
        return rc;
    if (!index || !flag)
        return VC_ERR_ARG;
    *index = VC_UNDEFINED;
    int live = 0, i;
    for (i = 0; i < n && !live; i++)
        live = reqs[i] != VC_REQUEST_NULL && !req_inactive(reqs[i]);
    if (!live) {   /* nothing to wait for counts as done, as in MPI */
        *flag = 1;
        empty_status(status);
        return VC_SUCCESS;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (i = 0; i < n; i++)
            if (reqs[i] && !req_inactive(reqs[i]) && reqs[i]->done) {
                *flag = 1;
                *index = i;
                return complete_at(reqs, i, status);
            }
        if (!pass) {
            p2p_progress(ctx_lib.p2p);
            /* a request whose peer is dead is finished: report it */
            p2p_test_idle_n(ctx_lib.p2p, n, reqs);
        }
    }
    *flag = 0;
    return VC_SUCCESS;
}

/* ---- persistent requests (the collectives' vc_<name>_init) ---- */

int vc_start(vc_request_t *req)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!req)
        return VC_ERR_ARG;
    if (!req_valid(*req))
        return VC_ERR_REQUEST;
    return coll_exec_restart(*req);    /* VC_ERR_REQUEST unless inactive persistent */
}

int vc_startall(int n, vc_request_t reqs[])
{
    VC_API_ENTER();
    int rc = check_reqs(n, reqs);
    if (rc)
        return rc;
    /* all or none: every entry must be startable before any starts */
    for (int i = 0; i < n; i++)
        if (!req_inactive(reqs[i]))
            return VC_ERR_REQUEST;
    for (int i = 0; i < n; i++)
        if ((rc = coll_exec_restart(reqs[i])))
            return rc;
    return VC_SUCCESS;
}

int vc_request_free(vc_request_t *req)
{
    VC_API_ENTER();
    VC_CHECK_INIT();
    if (!req)
        return VC_ERR_ARG;
    /* only an inactive persistent request: an active one is still in flight,
       and any other request is freed by completing it */
    if (!req_valid(*req) || !req_inactive(*req))
        return VC_ERR_REQUEST;
    req_free(*req);
    *req = VC_REQUEST_NULL;
    return VC_SUCCESS;
}

/* source / tag of a probe: as for a receive (wildcards allowed) */
static int check_probe(int source, int tag, vc_comm_t comm)
{
    size_t bytes;
    return check_recv(NULL, 0, VC_BYTE, source, tag, comm, &bytes);
}

int vc_iprobe(int source, int tag, vc_comm_t comm, int *flag, vc_status_t *status)
{
    VC_API_ENTER();
    int rc = check_probe(source, tag, comm);
    if (rc)
        return rc;
    if (!flag)
        return VC_ERR_ARG;
    return p2p_iprobe(source, tag, comm, 0, flag, status);
}

int vc_probe(int source, int tag, vc_comm_t comm, vc_status_t *status)
{
    VC_API_ENTER();
    int rc = check_probe(source, tag, comm);
    return rc ? rc : p2p_probe(source, tag, comm, 0, status);
}
