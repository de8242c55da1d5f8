/*
 * api_gather.c -- public gather, gatherv, scatter, scatterv and allgatherv,
 * blocking, non-blocking and persistent: validate as MPI would, then run the
 * schedule.
 *
 * MPI gives each rank its own view of the arguments: only the root's
 * receive side (gather, gatherv) or send side (scatter, scatterv) matters,
 * and a non-root's counts/displacements may be NULL, so a non-root checks
 * only its own block. VC_IN_PLACE is accepted exactly where MPI allows it
 * (gather(v): sbuf at the root; scatter(v): rbuf at the root; allgatherv:
 * sbuf) and is VC_ERR_BUFFER elsewhere, as for reduce. A buffer that is
 * exactly this rank's slot of the other buffer is treated as in place.
 *
 * Counts that disagree with the root's view: a block larger than its
 * receiving slot is VC_ERR_TRUNCATE (what MPI reports); allgatherv also
 * refuses a send count smaller than rcounts[rank] (VC_ERR_ARG), because
 * every other rank would read that many elements of it.
 */
#include <stdint.h>
#include <stdlib.h>
#include "api.h"
#include "coll/coll.h"
#include "coll/registry.h"
#include "dtype/dtype.h"

/* Every block and the whole extent (largest displs[i] + counts[i], in
   elements, into *extent) fit in bytes, and so does the sum of counts
   (allgatherv's packed scratch). */
static int check_vec(vc_dtype_t dt, const size_t *counts, const size_t *displs, int n,
                     size_t *extent)
{
    size_t bytes, sum = 0, ext = 0;
    int rc;
    /* no block is larger than the sum, so the sum's check below covers
       each block's bytes (the datatype was checked with the count) */
    for (int i = 0; i < n; i++) {
        if (displs[i] > SIZE_MAX - counts[i] || sum > SIZE_MAX - counts[i])
            return VC_ERR_COUNT;
        sum += counts[i];
        if (counts[i] && displs[i] + counts[i] > ext)
            ext = displs[i] + counts[i];
    }
    if ((rc = dtype_bytes(dt, ext, &bytes)) || (rc = dtype_bytes(dt, sum, &bytes)))
        return rc;
    *extent = ext;
    return VC_SUCCESS;
}

/* communicator, root range, datatype and this rank's count */
static int check_rooted(vc_comm_t comm, int root, vc_dtype_t dt, size_t count,
                        size_t *bytes)
{
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (root < 0 || root >= comm->size)
        return VC_ERR_RANK;
    return dtype_bytes(dt, count, bytes);
}

/* the side a non-root of a rooted collective owns: one block, no in place */
static int check_own_block(const void *buf, size_t count)
{
    return buf == VC_IN_PLACE ? VC_ERR_BUFFER : api_check_buf(buf, count);
}

/* the root's full buffer: real (not VC_IN_PLACE) when anything goes in it */
static int check_root_buf(const void *buf, size_t extent)
{
    return buf == VC_IN_PLACE ? VC_ERR_BUFFER : api_check_buf(buf, extent);
}

/* form: FORM_BLOCKING, FORM_NONBLOCKING or FORM_PERSISTENT (api_coll_run) */
static int run(int kind, vc_comm_t comm, const void *sbuf, void *rbuf, size_t count,
               vc_dtype_t dt, int root, const coll_vec_t *v, int form, vc_request_t *req)
{
    return api_coll_run(kind, comm, sbuf, rbuf, count, dt, VC_SUM, root, v, req, form);
}

/* Gather and scatter are one check with the buffers' roles swapped: `one`
   is this rank's block (gather: sbuf, in place at the root; scatter: rbuf,
   in place at the root) and `all` the root's p blocks. */
static int rooted_run(int kind, const void *one, void *all, size_t count, vc_dtype_t dt,
                      int root, vc_comm_t comm, const coll_vec_t *v, int form,
                      vc_request_t *req)
{
    int gather = kind == COLL_GATHER || kind == COLL_GATHERV;
    return gather ? run(kind, comm, one, all, count, dt, root, v, form, req)
                  : run(kind, comm, all, (void *)one, count, dt, root, v, form, req);
}

static int gather_scatter(int kind, const void *one, void *all, size_t count,
                          vc_dtype_t dt, int root, vc_comm_t comm, int form,
                          vc_request_t *req)
{
    size_t bytes;
    int rc = check_rooted(comm, root, dt, count, &bytes);
    if (rc)
        return rc;
    if (comm->rank != root) {
        if ((rc = check_own_block(one, count)))
            return rc;
        return rooted_run(kind, one, NULL, count, dt, root, comm, NULL, form, req);
    }
    if ((rc = api_check_total(dt, count, (size_t)comm->size)) ||
        (rc = check_root_buf(all, count)) ||
        (one != VC_IN_PLACE && (rc = api_check_buf(one, count))))
        return rc;
    if (count && one == (const char *)all + (size_t)root * bytes)
        one = VC_IN_PLACE;
    return rooted_run(kind, one, all, count, dt, root, comm, NULL, form, req);
}

/* gatherv and scatterv likewise; counts and displacements only at the root.
   A block larger than its slot on the other side is VC_ERR_TRUNCATE. */
static int gatherv_scatterv(int kind, const void *one, size_t count, void *all,
                            const size_t *counts, const size_t *displs, vc_dtype_t dt,
                            int root, vc_comm_t comm, int form, vc_request_t *req)
{
    size_t bytes, ext;
    int rc = check_rooted(comm, root, dt, count, &bytes);
    if (rc)
        return rc;
    if (comm->rank != root) {
        if ((rc = check_own_block(one, count)))
            return rc;
        return rooted_run(kind, one, NULL, count, dt, root, comm, &(coll_vec_t){0}, form, req);
    }
    if (!counts || !displs)
        return VC_ERR_ARG;
    if ((rc = check_vec(dt, counts, displs, comm->size, &ext)) ||
        (rc = check_root_buf(all, ext)) ||
        (kind == COLL_GATHERV && (rc = api_check_disjoint(counts, displs, comm->size))))
        return rc;
    if (one != VC_IN_PLACE) {
        if ((rc = api_check_buf(one, count)))
            return rc;
        if (kind == COLL_GATHERV ? count > counts[root] : count < counts[root])
            return VC_ERR_TRUNCATE;
        if (count && one == (const char *)all + displs[root] * dtype_size(dt))
            one = VC_IN_PLACE;
    }
    coll_vec_t v = {.counts = counts, .displs = displs};
    return rooted_run(kind, one, all, count, dt, root, comm, &v, form, req);
}

/* ---- allgatherv: every rank has the counts ---- */

static int allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                      const size_t *displs, vc_dtype_t dt, vc_comm_t comm, int form,
                      vc_request_t *req)
{
    size_t bytes, ext;
    int rc = api_check_comm(comm);
    if (rc)
        return rc;
    if (!rcounts || !displs)
        return VC_ERR_ARG;
    if ((rc = dtype_bytes(dt, scount, &bytes)) ||
        (rc = check_vec(dt, rcounts, displs, comm->size, &ext)) ||
        (rc = check_root_buf(rbuf, ext)) ||
        (rc = api_check_disjoint(rcounts, displs, comm->size)))
        return rc;
    if (sbuf != VC_IN_PLACE) {
        size_t mine = rcounts[comm->rank];
        if ((rc = api_check_buf(sbuf, scount)))
            return rc;
        if (scount != mine)
            return scount > mine ? VC_ERR_TRUNCATE : VC_ERR_ARG;
        if (scount && sbuf == (const char *)rbuf + displs[comm->rank] * dtype_size(dt))
            sbuf = VC_IN_PLACE;
    }
    coll_vec_t v = {.counts = rcounts, .displs = displs};
    return run(COLL_ALLGATHERV, comm, sbuf, rbuf, scount, dt, 0, &v, form, req);
}

/* ---- the public calls: blocking, non-blocking and persistent forms of
   each, one check ---- */

#define B FORM_BLOCKING
#define NB FORM_NONBLOCKING
#define P FORM_PERSISTENT

int vc_gather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
              vc_comm_t comm)
{
    VC_API_ENTER();
    return gather_scatter(COLL_GATHER, sbuf, rbuf, count, dtype, root, comm, B, NULL);
}

int vc_igather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
               vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return gather_scatter(COLL_GATHER, sbuf, rbuf, count, dtype, root, comm, NB, req);
}

int vc_gather_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                   vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return gather_scatter(COLL_GATHER, sbuf, rbuf, count, dtype, root, comm, P, req);
}

int vc_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
               const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm)
{
    VC_API_ENTER();
    return gatherv_scatterv(COLL_GATHERV, sbuf, scount, rbuf, rcounts, displs, dtype, root,
                            comm, B, NULL);
}

int vc_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm,
                vc_request_t *req)
{
    VC_API_ENTER();
    return gatherv_scatterv(COLL_GATHERV, sbuf, scount, rbuf, rcounts, displs, dtype, root,
                            comm, NB, req);
}

int vc_gatherv_init(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                    const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm,
                    vc_request_t *req)
{
    VC_API_ENTER();
    return gatherv_scatterv(COLL_GATHERV, sbuf, scount, rbuf, rcounts, displs, dtype, root,
                            comm, P, req);
}

int vc_scatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
               vc_comm_t comm)
{
    VC_API_ENTER();
    return gather_scatter(COLL_SCATTER, rbuf, (void *)sbuf, count, dtype, root, comm, B,
                          NULL);
}

int vc_iscatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return gather_scatter(COLL_SCATTER, rbuf, (void *)sbuf, count, dtype, root, comm, NB,
                          req);
}

int vc_scatter_init(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                    vc_comm_t comm, vc_request_t *req)
{
    VC_API_ENTER();
    return gather_scatter(COLL_SCATTER, rbuf, (void *)sbuf, count, dtype, root, comm, P,
                          req);
}

int vc_scatterv(const void *sbuf, const size_t scounts[], const size_t displs[],
                void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm)
{
    VC_API_ENTER();
    return gatherv_scatterv(COLL_SCATTERV, rbuf, rcount, (void *)sbuf, scounts, displs, dtype,
                            root, comm, B, NULL);
}

int vc_iscatterv(const void *sbuf, const size_t scounts[], const size_t displs[],
                 void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm,
                 vc_request_t *req)
{
    VC_API_ENTER();
    return gatherv_scatterv(COLL_SCATTERV, rbuf, rcount, (void *)sbuf, scounts, displs, dtype,
                            root, comm, NB, req);
}

int vc_scatterv_init(const void *sbuf, const size_t scounts[], const size_t displs[],
                     void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm,
                     vc_request_t *req)
{
    VC_API_ENTER();
    return gatherv_scatterv(COLL_SCATTERV, rbuf, rcount, (void *)sbuf, scounts, displs, dtype,
                            root, comm, P, req);
}

int vc_allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                  const size_t displs[], vc_dtype_t dtype, vc_comm_t comm)
{
    VC_API_ENTER();
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, B, NULL);
}

int vc_iallgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                   const size_t displs[], vc_dtype_t dtype, vc_comm_t comm,
                   vc_request_t *req)
{
    VC_API_ENTER();
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, NB, req);
}

int vc_allgatherv_init(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                       const size_t displs[], vc_dtype_t dtype, vc_comm_t comm,
                       vc_request_t *req)
{
    VC_API_ENTER();
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, P, req);
}
