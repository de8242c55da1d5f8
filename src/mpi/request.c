/*
 * request.c -- non-blocking and persistent collectives on vcoll behind MPI
 * requests.
 *
 * The application gets a generalized request (MPI_Grequest_start) and waits
 * on it with MPI's own calls, which are intercepted here: vcoll makes
 * progress only when called, so every wait/test drives all of vcoll's
 * outstanding requests (not just the ones in its arguments: another rank
 * may be waiting on one of them), completes the generalized requests whose
 * vcoll operation is done, and lets MPI do the rest. With nothing of
 * vcoll's outstanding, a call costs one counter read.
 */
#include <stdlib.h>
#include "vcmpi.h"

__thread int vcmpi_pinit;
__thread MPI_Info vcmpi_pinfo;

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

static void stage_free(vcmpi_stage_t *st, int ok, int *err)
{
    if (!st)
        return;
    int rc = vcmpi_stage_finish(st, ok);
    free(st);
    if (rc && err && !*err)
        *err = VC_ERR_NOMEM;     /* an unpack that failed: no data */
}

/* vr finished at its start (a root that only writes its line, a rank
   whose data was already there: shm_flags_nb.c)? One look, if no other
   thread is driving vcoll; *vrc its result when it did */
static int done_now(vc_request_t *vr, int *vrc)
{
    int flag = 0;
    if (pthread_mutex_trylock(&vcmpi.poll_lock))
        return 0;
    *vrc = vc_test(vr, &flag, VC_STATUS_IGNORE);
    pthread_mutex_unlock(&vcmpi.poll_lock);
    return flag || *vrc;
}

int vcmpi_req_start(MPI_Comm comm, vc_request_t vr, vcmpi_stage_t *st, MPI_Request *req)
{
    int vrc = VC_SUCCESS;
    /* done already, with nothing to unpack: an MPI request completed now,
       which no wait has to find, drive or reap. A send to MPI_PROC_NULL is
       MPI's cheapest such request (both MPIs hand out a prebuilt complete
       one, no allocation); its status says what MPI defines for a
       collective's (MPI_ERROR; MPI_SOURCE and MPI_TAG are undefined) */
    if (!st && done_now(&vr, &vrc)) {
        if (vrc) {
            *req = MPI_REQUEST_NULL;
            return vcmpi_error(comm, vrc);
        }
        return PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, vcmpi.self, req);
    }
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
            e->stage = st;
            vcmpi.reqs[vcmpi.nreq++] = e;
            __atomic_fetch_add(&vcmpi.nactive, 1, __ATOMIC_RELEASE);
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
    vrc = vc_wait(&vr, VC_STATUS_IGNORE);
    stage_free(st, !vrc, &vrc);
    free(e);
    *req = MPI_REQUEST_NULL;
    if (vrc)
        return vcmpi_error(comm, vrc);
    return MPI_SUCCESS;
}

/* a free tag for a persistent request's receive (under lock): tags in use
   are those of the table's persistent entries */
static int ptag_free(int tag)
{
    for (int i = 0; i < vcmpi.nreq; i++)
        if (vcmpi.reqs[i]->persistent && vcmpi.reqs[i]->ptag == tag)
            return 0;
    return 1;
}

int vcmpi_preq_init(MPI_Comm comm, vc_request_t vr, vcmpi_stage_t *st, MPI_Request *req)
{
    static char none;
    vcmpi_req_t *e = calloc(1, sizeof *e);
    int rc = e ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    pthread_mutex_lock(&vcmpi.lock);
    if (e && vcmpi.nreq == vcmpi.capreq) {
        int cap = vcmpi.capreq ? 2 * vcmpi.capreq : 16;
        vcmpi_req_t **n = realloc(vcmpi.reqs, (size_t)cap * sizeof *n);
        if (n) {
            vcmpi.reqs = n;
            vcmpi.capreq = cap;
        }
    }
    if (e && vcmpi.nreq < vcmpi.capreq) {
        /* 32767 is the least MPI_TAG_UB MPI allows */
        int tag = vcmpi.next_ptag, tries = 0;
        while (!ptag_free(tag) && tries++ < 32767)
            tag = (tag + 1) % 32767;
        vcmpi.next_ptag = (tag + 1) % 32767;
        rc = tries > 32767 ? MPI_ERR_INTERN
                           : PMPI_Recv_init(&none, 0, MPI_BYTE, 0, tag, vcmpi.self, req);
        if (rc == MPI_SUCCESS) {
            e->mreq = *req;
            e->vreq = vr;
            e->comm = comm;
            e->stage = st;
            e->persistent = 1;
            e->ptag = tag;
            e->done = 1;        /* inactive */
            vcmpi.reqs[vcmpi.nreq++] = e;
            e = NULL;
        }
    } else if (e) {
        rc = MPI_ERR_NO_MEM;
    }
    pthread_mutex_unlock(&vcmpi.lock);
    if (!e)
        return MPI_SUCCESS;
    free(e);
    stage_free(st, 0, NULL);
    vc_request_free(&vr);
    *req = MPI_REQUEST_NULL;
    return vcmpi_mpi_error(comm, rc);
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

/* called with poll_lock held: only one thread touches vcoll requests */
static void complete(vcmpi_req_t *e, int vrc)
{
    if (e->persistent) {
        /* the stage stays for the next start; the zero-byte message to
           ourselves completes MPI's side (a send that cannot block: its
           receive was posted by MPI_Start) */
        MPI_Request s;
        if (e->stage && vcmpi_stage_unpack(e->stage) && !vrc)
            vrc = VC_ERR_NOMEM;
        e->err = vrc;
        __atomic_store_n(&e->done, 1, __ATOMIC_RELEASE);
        __atomic_fetch_sub(&vcmpi.nactive, 1, __ATOMIC_RELEASE);
        if (e->mside &&
            PMPI_Isend(NULL, 0, MPI_BYTE, 0, e->ptag, vcmpi.self, &s) == MPI_SUCCESS)
            PMPI_Request_free(&s);
        return;
    }
    stage_free(e->stage, !vrc, &vrc);
    e->stage = NULL;
    e->err = vrc;
    __atomic_store_n(&e->done, 1, __ATOMIC_RELEASE);
    __atomic_fetch_sub(&vcmpi.nactive, 1, __ATOMIC_RELEASE);
    PMPI_Grequest_complete(e->mreq);
}

static void test_one(vcmpi_req_t *e)
{
    int flag = 1;
    if (__atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
        return;
    int vrc = vc_test(&e->vreq, &flag, VC_STATUS_IGNORE);
    if (flag || vrc)
        complete(e, vrc);
}

void vcmpi_poll(void)
{
    if (!__atomic_load_n(&vcmpi.nactive, __ATOMIC_ACQUIRE) ||
        pthread_mutex_trylock(&vcmpi.poll_lock))
        return;
    pthread_mutex_lock(&vcmpi.lock);
    /* the table may grow meanwhile (another thread starting one): copy */
    int n = vcmpi.nreq;
    vcmpi_req_t *few[16], **all = n <= 16 ? few : malloc((size_t)n * sizeof *all);
    if (all)
        for (int i = 0; i < n; i++)
            all[i] = vcmpi.reqs[i];
    pthread_mutex_unlock(&vcmpi.lock);
    if (all) {
        int events;
        vc_poll(&events);
        for (int i = 0; i < n; i++)
            test_one(all[i]);
        if (all != few)
            free(all);
    }
    pthread_mutex_unlock(&vcmpi.poll_lock);
}

/* drive e; block = wait for it (vcoll's wait drives MPI through the idle
   hook, and every other vcoll request through its progress) */
static void drive(vcmpi_req_t *e, int block)
{
    if (!e || __atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
        return;
    if (!block) {
        vcmpi_poll();
        return;
    }
    pthread_mutex_lock(&vcmpi.poll_lock);
    if (!__atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
        complete(e, vc_wait(&e->vreq, VC_STATUS_IGNORE));
    pthread_mutex_unlock(&vcmpi.poll_lock);
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

/* a persistent request's error from its last start, reported once */
static int perr(vcmpi_req_t *e)
{
    int err = e->err;
    e->err = 0;
    return err ? vcmpi_error(e->comm, err) : MPI_SUCCESS;
}

/* A persistent request handed to MPI (an array call): from now on MPI's
   receive is posted at every start, and now if it is active (done, it is
   inactive on MPI's side too, as it should be). A receive MPI would not
   post leaves it vcoll's alone: no message may go unmatched. */
static void mpi_side(vcmpi_req_t *e)
{
    if (!e || !e->persistent || e->mside)
        return;
    pthread_mutex_lock(&vcmpi.poll_lock);
    e->mside = __atomic_load_n(&e->done, __ATOMIC_ACQUIRE) ||
               PMPI_Start(&e->mreq) == MPI_SUCCESS;
    pthread_mutex_unlock(&vcmpi.poll_lock);
}

/* a persistent request MPI's receive does not stand for: its state is
   vcoll's alone */
static int vc_only(const vcmpi_req_t *e)
{
    return e && e->persistent && !e->mside;
}

/* ours among reqs[0..n) (index-aligned, NULL if not ours), or NULL when
   none is; every persistent one of them handed to MPI */
static vcmpi_req_t **ours(int n, const MPI_Request reqs[])
{
    if (!__atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) || n <= 0)
        return NULL;
    int k = 0;
    vcmpi_req_t **m = calloc((size_t)n, sizeof *m);
    for (int i = 0; m && i < n; i++) {
        k += (m[i] = find(reqs[i])) != NULL;
        mpi_side(m[i]);
    }
    if (!k) {
        free(m);
        m = NULL;
    }
    return m;
}

/* after MPI completed some of reqs: reap ours that it freed */
static int reap_freed(int n, MPI_Request reqs[], vcmpi_req_t **mine, int rc)
{
    for (int i = 0; mine && i < n; i++) {
        int err = MPI_SUCCESS;
        if (mine[i] && reqs[i] != mine[i]->mreq)
            err = reap(mine[i]);
        else if (mine[i] && mine[i]->persistent && mine[i]->err &&
                 __atomic_load_n(&mine[i]->done, __ATOMIC_ACQUIRE))
            err = perr(mine[i]);
        if (err && rc == MPI_SUCCESS)
            rc = err;
    }
    free(mine);
    return rc;
}

int vcmpi_block(MPI_Request *req, MPI_Status *status)
{
    int flag = 0, rc = MPI_SUCCESS;
    while (vcmpi_must_drive()) {
        if ((rc = PMPI_Test(req, &flag, status)) != MPI_SUCCESS || flag)
            return rc;
        vcmpi_poll();
    }
    return PMPI_Wait(req, status);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    if (!e)
        return vcmpi_block(req, status);
    drive(e, 1);
    int rc = PMPI_Wait(req, status);     /* vc_only: inactive, returns at once */
    int err = e->persistent ? perr(e) : reap(e);
    return rc != MPI_SUCCESS ? rc : err;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    vcmpi_poll();
    if (!e)
        return PMPI_Test(req, flag, status);
    if (vc_only(e) && !__atomic_load_n(&e->done, __ATOMIC_ACQUIRE)) {
        *flag = 0;      /* MPI's inactive receive would say done */
        return MPI_SUCCESS;
    }
    int rc = PMPI_Test(req, flag, status);
    if (rc == MPI_SUCCESS && *flag)
        rc = e->persistent ? perr(e) : reap(e);
    return rc;
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(req) : NULL;
    vcmpi_poll();
    if (vc_only(e) && !__atomic_load_n(&e->done, __ATOMIC_ACQUIRE)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    return PMPI_Request_get_status(req, flag, status);
}

/* Freeing a non-blocking collective's request is erroneous: finish it
 * rather than leak. A persistent one is freed when inactive (MPI-4); an
 * active one is finished first, as the same mistake. */
int MPI_Request_free(MPI_Request *req)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    if (!e)
        return PMPI_Request_free(req);
    drive(e, 1);
    if (e->persistent) {
        int rc = PMPI_Wait(req, MPI_STATUS_IGNORE);     /* inactive: returns at once */
        vc_request_free(&e->vreq);
        stage_free(e->stage, 0, NULL);
        e->stage = NULL;
        e->err = 0;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Request_free(req);
        int err = reap(e);
        return rc != MPI_SUCCESS ? rc : err;
    }
    int rc = PMPI_Request_free(req);
    int err = reap(e);
    return rc != MPI_SUCCESS ? rc : err;
}

/* MPI_Start of a persistent collective on vcoll: the data packed again
 * (its contents may have changed since the last start), MPI's receive
 * posted if the request has been handed to MPI (mside), then vcoll's
 * request started. A start vcoll refuses completes
 * at once and reports its error at the wait, as a failed transfer would. */
static int pstart(vcmpi_req_t *e)
{
    if (!__atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
        return vcmpi_mpi_error(e->comm, MPI_ERR_REQUEST);     /* already active */
    int rc = e->stage ? vcmpi_stage_repack(e->stage) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        return vcmpi_mpi_error(e->comm, rc);
    if (e->mside && (rc = PMPI_Start(&e->mreq)) != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&vcmpi.poll_lock);
    e->err = 0;
    __atomic_store_n(&e->done, 0, __ATOMIC_RELEASE);
    __atomic_fetch_add(&vcmpi.nactive, 1, __ATOMIC_RELEASE);
    int vrc = vc_start(&e->vreq);
    if (vrc)
        complete(e, vrc);
    pthread_mutex_unlock(&vcmpi.poll_lock);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *req)
{
    vcmpi_req_t *e = __atomic_load_n(&vcmpi.nreq, __ATOMIC_RELAXED) ? find(*req) : NULL;
    return e && e->persistent ? pstart(e) : PMPI_Start(req);
}

/* an array of vcoll's and MPI's persistent requests, in any mix */
int MPI_Startall(int n, MPI_Request reqs[])
{
    if (n < 0 || (n && !reqs))
        return PMPI_Startall(n, reqs);      /* MPI reports the error */
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Start(&reqs[i]);
    return rc;
}

/* The multi-request waits: while anything of vcoll's is outstanding (in
 * the array or not), alternate MPI's test with a vcoll poll; then MPI's own
 * wait does the rest. */
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    vcmpi_req_t **mine = ours(n, reqs);
    int flag = 0, rc = MPI_SUCCESS;
    while (vcmpi_pending()) {
        vcmpi_poll();
        if ((rc = PMPI_Testall(n, reqs, &flag, statuses)) != MPI_SUCCESS || flag)
            return reap_freed(n, reqs, mine, rc);
    }
    return reap_freed(n, reqs, mine, PMPI_Waitall(n, reqs, statuses));
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    vcmpi_req_t **mine = ours(n, reqs);
    vcmpi_poll();
    return reap_freed(n, reqs, mine, PMPI_Testall(n, reqs, flag, statuses));
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    vcmpi_req_t **mine = ours(n, reqs);
    vcmpi_poll();
    return reap_freed(n, reqs, mine, PMPI_Testany(n, reqs, index, flag, status));
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    vcmpi_req_t **mine = ours(n, reqs);
    int flag = 0, rc = MPI_SUCCESS;
    while (vcmpi_pending()) {
        vcmpi_poll();
        if ((rc = PMPI_Testany(n, reqs, index, &flag, status)) != MPI_SUCCESS || flag)
            return reap_freed(n, reqs, mine, rc);
    }
    return reap_freed(n, reqs, mine, PMPI_Waitany(n, reqs, index, status));
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    vcmpi_req_t **mine = ours(n, reqs);
    vcmpi_poll();
    return reap_freed(n, reqs, mine, PMPI_Testsome(n, reqs, outcount, indices, statuses));
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    vcmpi_req_t **mine = ours(n, reqs);
    int rc = MPI_SUCCESS;
    while (vcmpi_pending()) {
        vcmpi_poll();
        if ((rc = PMPI_Testsome(n, reqs, outcount, indices, statuses)) != MPI_SUCCESS ||
            *outcount != 0)
            return reap_freed(n, reqs, mine, rc);
    }
    return reap_freed(n, reqs, mine, PMPI_Waitsome(n, reqs, outcount, indices, statuses));
}
