/*
 * request.c -- non-blocking collectives on vcoll behind MPI requests.
 *
 * The application gets a generalized request (MPI_Grequest_start) and waits
 * on it with MPI's own calls, which are intercepted here: vcoll makes
 * progress only when called, so every wait/test first drives vcoll's
 * requests in the array, completes the generalized requests whose vcoll
 * operation is done, and lets MPI do the rest. Requests that are not ours
 * cost one empty-table check.
 */
#include <stdlib.h>
#include "vcmpi.h"

static int query_fn(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

/* cancelling a collective is erroneous in MPI: nothing to undo */
static int cancel_fn(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

int vcmpi_req_start(MPI_Comm comm, vc_request_t vr, void *keep, MPI_Request *req)
{
    vcmpi_req_t *e = calloc(1, sizeof *e);
    int rc = e ? PMPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, req) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&vcmpi.lock);
        if (vcmpi.nreq == vcmpi.capreq) {
            int cap = vcmpi.capreq ? 2 * vcmpi.capreq : 16;
            vcmpi_req_t **n = realloc(vcmpi.reqs, (size_t)cap * sizeof *n);
            if (n) {
                vcmpi.reqs = n;
                vcmpi.capreq = cap;
            }
        }
        if (vcmpi.nreq < vcmpi.capreq) {
            e->mreq = *req;
            e->vreq = vr;
            e->comm = comm;
            e->keep = keep;
            vcmpi.reqs[vcmpi.nreq++] = e;
            e = NULL;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
        pthread_mutex_unlock(&vcmpi.lock);
        if (!e)
            return MPI_SUCCESS;
        PMPI_Grequest_complete(*req);
        PMPI_Request_free(req);
    }
    /* nowhere to keep it: finish the operation now, correct if not overlapped */
    int vrc = vc_wait(&vr, VC_STATUS_IGNORE);
    free(keep);
    free(e);
    *req = MPI_REQUEST_NULL;
    if (vrc)
        return vcmpi_error(comm, vrc);
    return MPI_SUCCESS;
}

static vcmpi_req_t *find(MPI_Request r)
{
    vcmpi_req_t *e = NULL;
    if (r == MPI_REQUEST_NULL)
        return NULL;
    pthread_mutex_lock(&vcmpi.lock);
    for (int i = 0; i < vcmpi.nreq && !e; i++)
        if (vcmpi.reqs[i]->mreq == r)
            e = vcmpi.reqs[i];
    pthread_mutex_unlock(&vcmpi.lock);
    return e;
}

static void complete(vcmpi_req_t *e, int vrc)
{
    e->done = 1;
    e->err = vrc;
    free(e->keep);
    e->keep = NULL;
    PMPI_Grequest_complete(e->mreq);
}

/* drive e; block = wait for it */
static void drive(vcmpi_req_t *e, int block)
{
    if (!e || e->done)
        return;
    int flag = 1, vrc = block ? vc_wait(&e->vreq, VC_STATUS_IGNORE)
                              : vc_test(&e->vreq, &flag, VC_STATUS_IGNORE);
    if (flag || vrc)
        complete(e, vrc);
}

/* MPI has freed e's request: forget it; its error, raised on its comm */
static int reap(vcmpi_req_t *e)
{
    int err = e->err;
    MPI_Comm comm = e->comm;
    pthread_mutex_lock(&vcmpi.lock);
    for (int i = 0; i < vcmpi.nreq; i++)
        if (vcmpi.reqs[i] == e) {
            vcmpi.reqs[i] = vcmpi.reqs[--vcmpi.nreq];
            break;
        }
    pthread_mutex_unlock(&vcmpi.lock);
    free(e);
    return err ? vcmpi_error(comm, err) : MPI_SUCCESS;
}

/* ours among reqs[0..n): entries in *mine (index-aligned, NULL if not
   ours); drives them; returns how many are still running, or -1 if none
   is ours (*mine not allocated) */
static int scan(int n, MPI_Request reqs[], vcmpi_req_t ***mine)
{
    *mine = NULL;
    if (!__atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) || n <= 0)
        return -1;
    int ours = 0, running = 0;
    vcmpi_req_t **m = calloc((size_t)n, sizeof *m);
    if (!m)
        return -1;
    for (int i = 0; i < n; i++)
        if ((m[i] = find(reqs[i]))) {
            ours++;
            drive(m[i], 0);
            running += !m[i]->done;
        }
    if (!ours) {
        free(m);
        return -1;
    }
    *mine = m;
    return running;
}

/* after MPI completed some of reqs: reap ours that it freed */
static int reap_freed(int n, MPI_Request reqs[], vcmpi_req_t **mine, int rc)
{
    for (int i = 0; mine && i < n; i++)
        if (mine[i] && reqs[i] != mine[i]->mreq) {
            int err = reap(mine[i]);
            if (err && rc == MPI_SUCCESS)
                rc = err;
        }
    free(mine);
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    if (!e)
        return PMPI_Wait(req, status);
    drive(e, 1);
    int rc = PMPI_Wait(req, status);
    int err = reap(e);
    return rc != MPI_SUCCESS ? rc : err;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    if (!e)
        return PMPI_Test(req, flag, status);
    drive(e, 0);
    int rc = PMPI_Test(req, flag, status);
    if (rc == MPI_SUCCESS && *flag)
        rc = reap(e);
    return rc;
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(req) : NULL;
    drive(e, 0);
    return PMPI_Request_get_status(req, flag, status);
}

/* freeing a collective's request is erroneous; finish it rather than leak */
int MPI_Request_free(MPI_Request *req)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    if (!e)
        return PMPI_Request_free(req);
    drive(e, 1);
    int rc = PMPI_Request_free(req);
    int err = reap(e);
    return rc != MPI_SUCCESS ? rc : err;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    vcmpi_req_t **mine;
    int flag;
    /* ours advance only when polled, MPI's when MPI is called: alternate
       (a probe drives MPI's progress without completing anything) */
    while (scan(n, reqs, &mine) > 0) {
        free(mine);
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, vcmpi.priv, &flag, MPI_STATUS_IGNORE);
    }
    return reap_freed(n, reqs, mine, PMPI_Waitall(n, reqs, statuses));
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    vcmpi_req_t **mine;
    scan(n, reqs, &mine);
    int rc = PMPI_Testall(n, reqs, flag, statuses);
    return reap_freed(n, reqs, mine, rc);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    vcmpi_req_t **mine;
    scan(n, reqs, &mine);
    int rc = PMPI_Testany(n, reqs, index, flag, status);
    return reap_freed(n, reqs, mine, rc);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    vcmpi_req_t **mine;
    int flag = 0, rc;
    if (scan(n, reqs, &mine) < 0)
        return PMPI_Waitany(n, reqs, index, status);
    for (;;) {
        rc = PMPI_Testany(n, reqs, index, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return reap_freed(n, reqs, mine, rc);
        free(mine);
        scan(n, reqs, &mine);
    }
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    vcmpi_req_t **mine;
    scan(n, reqs, &mine);
    int rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
    return reap_freed(n, reqs, mine, rc);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    vcmpi_req_t **mine;
    int rc;
    if (scan(n, reqs, &mine) < 0)
        return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    for (;;) {
        rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return reap_freed(n, reqs, mine, rc);
        free(mine);
        scan(n, reqs, &mine);
    }
}
