/*
 * api_gather.c -- public gather, gatherv, scatter, scatterv and allgatherv,
 * blocking and non-blocking: validate as MPI would, then run the schedule.
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
#include "coll.h"
#include "dtype/dtype.h"

#define SORT_STACK 64   /* blocks sorted without malloc for overlap checks */

/* count * n elements fit (the whole buffer of a gather / scatter root) */
static int check_total(vc_dtype_t dt, size_t count, int n)
{
    size_t bytes;
    if (count && count > SIZE_MAX / (size_t)n)
        return VC_ERR_COUNT;
    return dtype_bytes(dt, count * (size_t)n, &bytes);
}

/* Every block and the whole extent (largest displs[i] + counts[i], in
   elements, into *extent) fit in bytes, and so does the sum of counts
   (allgatherv's packed scratch). */
static int check_vec(vc_dtype_t dt, const size_t *counts, const size_t *displs, int n,
                     size_t *extent)
{
    size_t bytes, sum = 0, ext = 0;
    int rc;
    for (int i = 0; i < n; i++) {
        if ((rc = dtype_bytes(dt, counts[i], &bytes)))
            return rc;
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

typedef struct { size_t d, c; } blk_t;

static int blk_cmp(const void *x, const void *y)
{
    const blk_t *a = x, *b = y;
    return a->d < b->d ? -1 : a->d > b->d;
}

/* MPI forbids receiving into one location twice: sort the non-empty blocks
   by displacement and look for one starting before its predecessor ends */
static int check_overlap(const size_t *counts, const size_t *displs, int n)
{
    blk_t stack[SORT_STACK], *b = stack;
    int m = 0, rc = VC_SUCCESS;
    if (n > SORT_STACK && !(b = malloc((size_t)n * sizeof *b)))
        return VC_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        if (counts[i])
            b[m++] = (blk_t){displs[i], counts[i]};
    qsort(b, (size_t)m, sizeof *b, blk_cmp);
    for (int i = 1; i < m && !rc; i++)
        if (b[i].d < b[i - 1].d + b[i - 1].c)
            rc = VC_ERR_ARG;
    if (b != stack)
        free(b);
    return rc;
}

/* communicator, root range, datatype and this rank's count */
static int check_rooted(vc_comm_t comm, int root, vc_dtype_t dt, size_t count,
                        size_t *bytes)
{
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    if (root < 0 || root >= comm->size)
        return VC_ERR_RANK;
    return dtype_bytes(dt, count, bytes);
}

/* the side a non-root of a rooted collective owns: one block, no in place */
static int check_own_block(const void *buf, size_t count)
{
    return buf == VC_IN_PLACE ? VC_ERR_BUFFER : coll_check_buf(buf, count);
}

/* the root's full buffer: real (not VC_IN_PLACE) when anything goes in it */
static int check_root_buf(const void *buf, size_t extent)
{
    return buf == VC_IN_PLACE ? VC_ERR_BUFFER : coll_check_buf(buf, extent);
}

/* nb: a non-blocking call, whose request pointer must be given */
static int run(int kind, vc_comm_t comm, const void *sbuf, void *rbuf, size_t count,
               vc_dtype_t dt, int root, const coll_vec_t *v, int nb, vc_request_t *req)
{
    if (nb && !req)
        return VC_ERR_ARG;
    return coll_run_v(kind, comm, sbuf, rbuf, count, dt, VC_SUM, root, v, nb ? req : NULL);
}

/* ---- gather / scatter ---- */

static int gather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt, int root,
                  vc_comm_t comm, int nb, vc_request_t *req)
{
    size_t bytes;
    int rc = check_rooted(comm, root, dt, count, &bytes);
    if (rc)
        return rc;
    if (comm->rank != root) {
        if ((rc = check_own_block(sbuf, count)))
            return rc;
        return run(COLL_GATHER, comm, sbuf, NULL, count, dt, root, NULL, nb, req);
    }
    if ((rc = check_total(dt, count, comm->size)) ||
        (rc = check_root_buf(rbuf, count)) ||
        (sbuf != VC_IN_PLACE && (rc = coll_check_buf(sbuf, count))))
        return rc;
    if (count && sbuf == (const char *)rbuf + (size_t)root * bytes)
        sbuf = VC_IN_PLACE;
    return run(COLL_GATHER, comm, sbuf, rbuf, count, dt, root, NULL, nb, req);
}

static int scatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dt, int root,
                   vc_comm_t comm, int nb, vc_request_t *req)
{
    size_t bytes;
    int rc = check_rooted(comm, root, dt, count, &bytes);
    if (rc)
        return rc;
    if (comm->rank != root) {
        if ((rc = check_own_block(rbuf, count)))
            return rc;
        return run(COLL_SCATTER, comm, NULL, rbuf, count, dt, root, NULL, nb, req);
    }
    if ((rc = check_total(dt, count, comm->size)) ||
        (rc = check_root_buf(sbuf, count)) ||
        (rbuf != VC_IN_PLACE && (rc = coll_check_buf(rbuf, count))))
        return rc;
    if (count && rbuf == (const char *)sbuf + (size_t)root * bytes)
        rbuf = VC_IN_PLACE;
    return run(COLL_SCATTER, comm, sbuf, rbuf, count, dt, root, NULL, nb, req);
}

/* ---- gatherv / scatterv: counts and displacements only at the root ---- */

static int gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                   const size_t *displs, vc_dtype_t dt, int root, vc_comm_t comm,
                   int nb, vc_request_t *req)
{
    size_t bytes, ext;
    int rc = check_rooted(comm, root, dt, scount, &bytes);
    if (rc)
        return rc;
    if (comm->rank != root) {
        if ((rc = check_own_block(sbuf, scount)))
            return rc;
        return run(COLL_GATHERV, comm, sbuf, NULL, scount, dt, root, &(coll_vec_t){0},
                   nb, req);
    }
    if (!rcounts || !displs)
        return VC_ERR_ARG;
    if ((rc = check_vec(dt, rcounts, displs, comm->size, &ext)) ||
        (rc = check_root_buf(rbuf, ext)) ||
        (rc = check_overlap(rcounts, displs, comm->size)))
        return rc;
    if (sbuf != VC_IN_PLACE) {
        if ((rc = coll_check_buf(sbuf, scount)))
            return rc;
        if (scount > rcounts[root])
            return VC_ERR_TRUNCATE;
        if (scount && sbuf == (const char *)rbuf + displs[root] * dtype_size(dt))
            sbuf = VC_IN_PLACE;
    }
    coll_vec_t v = {.counts = rcounts, .displs = displs};
    return run(COLL_GATHERV, comm, sbuf, rbuf, scount, dt, root, &v, nb, req);
}

static int scatterv(const void *sbuf, const size_t *scounts, const size_t *displs,
                    void *rbuf, size_t rcount, vc_dtype_t dt, int root, vc_comm_t comm,
                    int nb, vc_request_t *req)
{
    size_t bytes, ext;
    int rc = check_rooted(comm, root, dt, rcount, &bytes);
    if (rc)
        return rc;
    if (comm->rank != root) {
        if ((rc = check_own_block(rbuf, rcount)))
            return rc;
        return run(COLL_SCATTERV, comm, NULL, rbuf, rcount, dt, root, &(coll_vec_t){0},
                   nb, req);
    }
    if (!scounts || !displs)
        return VC_ERR_ARG;
    if ((rc = check_vec(dt, scounts, displs, comm->size, &ext)) ||
        (rc = check_root_buf(sbuf, ext)))
        return rc;
    if (rbuf != VC_IN_PLACE) {
        if ((rc = coll_check_buf(rbuf, rcount)))
            return rc;
        if (scounts[root] > rcount)
            return VC_ERR_TRUNCATE;
        if (rcount && rbuf == (const char *)sbuf + displs[root] * dtype_size(dt))
            rbuf = VC_IN_PLACE;
    }
    coll_vec_t v = {.counts = scounts, .displs = displs};
    return run(COLL_SCATTERV, comm, sbuf, rbuf, rcount, dt, root, &v, nb, req);
}

/* ---- allgatherv: every rank has the counts ---- */

static int allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                      const size_t *displs, vc_dtype_t dt, vc_comm_t comm, int nb,
                      vc_request_t *req)
{
    size_t bytes, ext;
    int rc = coll_check_common(comm);
    if (rc)
        return rc;
    if (!rcounts || !displs)
        return VC_ERR_ARG;
    if ((rc = dtype_bytes(dt, scount, &bytes)) ||
        (rc = check_vec(dt, rcounts, displs, comm->size, &ext)) ||
        (rc = check_root_buf(rbuf, ext)) ||
        (rc = check_overlap(rcounts, displs, comm->size)))
        return rc;
    if (sbuf != VC_IN_PLACE) {
        size_t mine = rcounts[comm->rank];
        if ((rc = coll_check_buf(sbuf, scount)))
            return rc;
        if (scount != mine)
            return scount > mine ? VC_ERR_TRUNCATE : VC_ERR_ARG;
        if (scount && sbuf == (const char *)rbuf + displs[comm->rank] * dtype_size(dt))
            sbuf = VC_IN_PLACE;
    }
    coll_vec_t v = {.counts = rcounts, .displs = displs};
    return run(COLL_ALLGATHERV, comm, sbuf, rbuf, scount, dt, 0, &v, nb, req);
}

/* ---- the public calls ---- */

int vc_gather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
              vc_comm_t comm)
{
    return gather(sbuf, rbuf, count, dtype, root, comm, 0, NULL);
}

int vc_igather(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
               vc_comm_t comm, vc_request_t *req)
{
    return gather(sbuf, rbuf, count, dtype, root, comm, 1, req);
}

int vc_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
               const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm)
{
    return gatherv(sbuf, scount, rbuf, rcounts, displs, dtype, root, comm, 0, NULL);
}

int vc_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                const size_t displs[], vc_dtype_t dtype, int root, vc_comm_t comm,
                vc_request_t *req)
{
    return gatherv(sbuf, scount, rbuf, rcounts, displs, dtype, root, comm, 1, req);
}

int vc_scatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
               vc_comm_t comm)
{
    return scatter(sbuf, rbuf, count, dtype, root, comm, 0, NULL);
}

int vc_iscatter(const void *sbuf, void *rbuf, size_t count, vc_dtype_t dtype, int root,
                vc_comm_t comm, vc_request_t *req)
{
    return scatter(sbuf, rbuf, count, dtype, root, comm, 1, req);
}

int vc_scatterv(const void *sbuf, const size_t scounts[], const size_t displs[],
                void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm)
{
    return scatterv(sbuf, scounts, displs, rbuf, rcount, dtype, root, comm, 0, NULL);
}

int vc_iscatterv(const void *sbuf, const size_t scounts[], const size_t displs[],
                 void *rbuf, size_t rcount, vc_dtype_t dtype, int root, vc_comm_t comm,
                 vc_request_t *req)
{
    return scatterv(sbuf, scounts, displs, rbuf, rcount, dtype, root, comm, 1, req);
}

int vc_allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                  const size_t displs[], vc_dtype_t dtype, vc_comm_t comm)
{
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, 0, NULL);
}

int vc_iallgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t rcounts[],
                   const size_t displs[], vc_dtype_t dtype, vc_comm_t comm,
                   vc_request_t *req)
{
    return allgatherv(sbuf, scount, rbuf, rcounts, displs, dtype, comm, 1, req);
}
