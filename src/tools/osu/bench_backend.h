/*
 * bench_backend.h -- the few communication calls the OSU-style benchmarks
 * need, mapped onto vcoll (default) or onto MPI (-DBENCH_MPI).
 *
 * The benchmarks are written once against bk_*; building the same source
 * with an MPI compiler and -DBENCH_MPI gives the peer numbers that vcoll is
 * compared with, so differences come from the libraries, not the harness.
 * Every bk_* call returns BK_OK or a library error code (bk_strerror
 * explains it); BK_UNSUPPORTED means "this build of the library does not
 * implement the call yet".
 */
#ifndef BENCH_BACKEND_H
#define BENCH_BACKEND_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_MPI
/* ------------------------------------------------------------------ MPI */
#include <stdio.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

typedef MPI_Request bk_req_t;
typedef MPI_Datatype bk_dtype_t;
typedef MPI_Op bk_op_t;

#define BK_OK MPI_SUCCESS
/* MPI has no "not implemented" code; -1 is never returned by MPI calls. */
#define BK_UNSUPPORTED (-1)
#define BK_BYTE MPI_BYTE
#define BK_CHAR MPI_CHAR
#define BK_INT MPI_INT
#define BK_FLOAT MPI_FLOAT
#define BK_DOUBLE MPI_DOUBLE
#define BK_SUM MPI_SUM
#define BK_MIN MPI_MIN
#define BK_MAX MPI_MAX
#define BK_PREFIX "mpi"

/* level: BK_THREAD_* or -1 for plain MPI_Init; *granted gets the level
   given (-1 after a plain init) */
static inline int bk_init(int *argc, char ***argv, int level, int *granted)
{
    static const int lv[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};
    int rc, p = 0;
    *granted = -1;
    if (level < 0) {
        rc = MPI_Init(argc, argv);
    } else {
        rc = MPI_Init_thread(argc, argv, lv[level], &p);
        for (int i = 0; i < 4; i++)
            if (p == lv[i])
                *granted = i;
    }
    /* errors come back as codes (like vcoll) instead of aborting */
    if (rc == MPI_SUCCESS)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return rc;
}
static inline int bk_finalize(void) { return MPI_Finalize(); }
static inline void bk_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static inline int bk_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static inline int bk_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static inline double bk_wtime(void) { return MPI_Wtime(); }

/* Truncating copy of MPI's fixed-size strings (silences no real bug, unlike
 * a "%s" snprintf that gcc cannot prove fits). */
static inline void bk_copy_text(char *buf, size_t len, const char *text)
{
    if (len == 0)
        return;
    size_t k = strnlen(text, len - 1);
    memcpy(buf, text, k);
    buf[k] = '\0';
}

static inline const char *bk_strerror(int rc, char *buf, size_t len)
{
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (rc == BK_UNSUPPORTED)
        return "not supported";
    if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS)
        return "unknown MPI error";
    bk_copy_text(buf, len, text);
    return buf;
}

/* "Open MPI v4.1.4, ..." -> first line only, for the table header */
static inline void bk_library_name(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    v[strcspn(v, "\n,")] = '\0';
    bk_copy_text(buf, len, v);
}

static inline const char *bk_transport(void) { return NULL; }

static inline int bk_send(const void *b, size_t n, bk_dtype_t t, int dst, int tag)
{
    return MPI_Send(b, (int)n, t, dst, tag, MPI_COMM_WORLD);
}
static inline int bk_recv(void *b, size_t n, bk_dtype_t t, int src, int tag)
{
    return MPI_Recv(b, (int)n, t, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static inline int bk_isend(const void *b, size_t n, bk_dtype_t t, int dst, int tag,
                           bk_req_t *r)
{
    return MPI_Isend(b, (int)n, t, dst, tag, MPI_COMM_WORLD, r);
}
static inline int bk_irecv(void *b, size_t n, bk_dtype_t t, int src, int tag,
                           bk_req_t *r)
{
    return MPI_Irecv(b, (int)n, t, src, tag, MPI_COMM_WORLD, r);
}
/* gcc 12 reads MPI_STATUSES_IGNORE (a null pointer) as a zero-sized status
 * array and warns about MPI_Waitall writing to it; MPI never does. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
static inline int bk_waitall(int n, bk_req_t *r)
{
    return MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
}
#pragma GCC diagnostic pop
static inline int bk_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static inline int bk_bcast(void *b, size_t n, bk_dtype_t t, int root)
{
    return MPI_Bcast(b, (int)n, t, root, MPI_COMM_WORLD);
}
static inline int bk_reduce(const void *s, void *r, size_t n, bk_dtype_t t, bk_op_t op,
                            int root)
{
    return MPI_Reduce(s, r, (int)n, t, op, root, MPI_COMM_WORLD);
}
static inline int bk_allreduce(const void *s, void *r, size_t n, bk_dtype_t t,
                               bk_op_t op)
{
    return MPI_Allreduce(s, r, (int)n, t, op, MPI_COMM_WORLD);
}
static inline int bk_allgather(const void *s, void *r, size_t n, bk_dtype_t t)
{
    return MPI_Allgather(s, (int)n, t, r, (int)n, t, MPI_COMM_WORLD);
}
static inline int bk_gather(const void *s, void *r, size_t n, bk_dtype_t t, int root)
{
    return MPI_Gather(s, (int)n, t, r, (int)n, t, root, MPI_COMM_WORLD);
}

static inline int bk_alltoall(const void *s, void *r, size_t n, bk_dtype_t t)
{
    return MPI_Alltoall(s, (int)n, t, r, (int)n, t, MPI_COMM_WORLD);
}
/* persistent allreduce (MPI-4; Open MPI 4.1 has it as MPIX_, in its
   pcollreq extension); older MPIs have none */
static inline int bk_allreduce_init(const void *s, void *r, size_t n, bk_dtype_t t,
                                    bk_op_t op, bk_req_t *q)
{
#if MPI_VERSION >= 4
    return MPI_Allreduce_init(s, r, (int)n, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, q);
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
    return MPIX_Allreduce_init(s, r, (int)n, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, q);
#else
    (void)s, (void)r, (void)n, (void)t, (void)op, (void)q;
    return BK_UNSUPPORTED;
#endif
}
static inline int bk_start(bk_req_t *q) { return MPI_Start(q); }
static inline int bk_wait(bk_req_t *q) { return MPI_Wait(q, MPI_STATUS_IGNORE); }
static inline int bk_request_free(bk_req_t *q) { return MPI_Request_free(q); }

/* Neighborhood collectives run on a Cartesian communicator of their own;
 * reorder 0 keeps world's rank order, as vc_comm_create_cart does, so both
 * libraries build the same grid. */
typedef MPI_Comm bk_comm_t;
static inline int bk_cart_create(int ndims, const int dims[], const int periods[],
                                 bk_comm_t *c)
{
    int rc = MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, c);
    if (rc == MPI_SUCCESS)
        MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
    return rc;
}
static inline int bk_comm_free(bk_comm_t *c) { return MPI_Comm_free(c); }
static inline int bk_neighbor_alltoall(const void *s, void *r, size_t n, bk_dtype_t t,
                                       bk_comm_t c)
{
    return MPI_Neighbor_alltoall(s, (int)n, t, r, (int)n, t, c);
}

#else
/* ---------------------------------------------------------------- vcoll */
#include <stdio.h>
#include "vcoll.h"

typedef vc_request_t bk_req_t;
typedef vc_dtype_t bk_dtype_t;
typedef vc_op_t bk_op_t;

#define BK_OK VC_SUCCESS
#define BK_UNSUPPORTED VC_ERR_UNSUPPORTED
#define BK_BYTE VC_BYTE
#define BK_CHAR VC_INT8
#define BK_INT VC_INT32
#define BK_FLOAT VC_FLOAT
#define BK_DOUBLE VC_DOUBLE
#define BK_SUM VC_SUM
#define BK_MIN VC_MIN
#define BK_MAX VC_MAX
#define BK_PREFIX "vcoll"

static inline int bk_init(int *argc, char ***argv, int level, int *granted)
{
    *granted = -1;
    return level < 0 ? vc_init(argc, argv) : vc_init_thread(argc, argv, level, granted);
}
static inline int bk_finalize(void) { return vc_finalize(); }
static inline void bk_abort(int code) { vc_abort(VC_COMM_WORLD, code); }
static inline int bk_rank(int *r) { return vc_comm_rank(VC_COMM_WORLD, r); }
static inline int bk_size(int *s) { return vc_comm_size(VC_COMM_WORLD, s); }
static inline double bk_wtime(void) { return vc_wtime(); }
static inline const char *bk_strerror(int rc, char *buf, size_t len)
{
    (void)buf; (void)len;
    return vc_strerror(rc);
}

static inline void bk_library_name(char *buf, size_t len)
{
    snprintf(buf, len, "vcoll %s", vc_version_string());
}

/* What the user asked for; "auto" lets vcoll pick per peer. */
static inline const char *bk_transport(void)
{
    const char *t = getenv("VCOLL_NET");
    return (t && *t) ? t : "auto";
}

static inline int bk_send(const void *b, size_t n, bk_dtype_t t, int dst, int tag)
{
    return vc_send(b, n, t, dst, tag, VC_COMM_WORLD);
}
static inline int bk_recv(void *b, size_t n, bk_dtype_t t, int src, int tag)
{
    return vc_recv(b, n, t, src, tag, VC_COMM_WORLD, VC_STATUS_IGNORE);
}
static inline int bk_isend(const void *b, size_t n, bk_dtype_t t, int dst, int tag,
                           bk_req_t *r)
{
    return vc_isend(b, n, t, dst, tag, VC_COMM_WORLD, r);
}
static inline int bk_irecv(void *b, size_t n, bk_dtype_t t, int src, int tag,
                           bk_req_t *r)
{
    return vc_irecv(b, n, t, src, tag, VC_COMM_WORLD, r);
}
static inline int bk_waitall(int n, bk_req_t *r) { return vc_waitall(n, r, NULL); }
static inline int bk_barrier(void) { return vc_barrier(VC_COMM_WORLD); }
static inline int bk_bcast(void *b, size_t n, bk_dtype_t t, int root)
{
    return vc_bcast(b, n, t, root, VC_COMM_WORLD);
}
static inline int bk_reduce(const void *s, void *r, size_t n, bk_dtype_t t, bk_op_t op,
                            int root)
{
    return vc_reduce(s, r, n, t, op, root, VC_COMM_WORLD);
}
static inline int bk_allreduce(const void *s, void *r, size_t n, bk_dtype_t t,
                               bk_op_t op)
{
    return vc_allreduce(s, r, n, t, op, VC_COMM_WORLD);
}
static inline int bk_allgather(const void *s, void *r, size_t n, bk_dtype_t t)
{
    return vc_allgather(s, r, n, t, VC_COMM_WORLD);
}
static inline int bk_gather(const void *s, void *r, size_t n, bk_dtype_t t, int root)
{
    return vc_gather(s, r, n, t, root, VC_COMM_WORLD);
}

static inline int bk_alltoall(const void *s, void *r, size_t n, bk_dtype_t t)
{
    return vc_alltoall(s, r, n, t, VC_COMM_WORLD);
}
static inline int bk_allreduce_init(const void *s, void *r, size_t n, bk_dtype_t t,
                                    bk_op_t op, bk_req_t *q)
{
    return vc_allreduce_init(s, r, n, t, op, VC_COMM_WORLD, q);
}
static inline int bk_start(bk_req_t *q) { return vc_start(q); }
static inline int bk_wait(bk_req_t *q) { return vc_wait(q, VC_STATUS_IGNORE); }
static inline int bk_request_free(bk_req_t *q) { return vc_request_free(q); }

typedef vc_comm_t bk_comm_t;
static inline int bk_cart_create(int ndims, const int dims[], const int periods[],
                                 bk_comm_t *c)
{
    return vc_comm_create_cart(VC_COMM_WORLD, ndims, dims, periods, c);
}
static inline int bk_comm_free(bk_comm_t *c) { return vc_comm_free(c); }
static inline int bk_neighbor_alltoall(const void *s, void *r, size_t n, bk_dtype_t t,
                                       bk_comm_t c)
{
    return vc_neighbor_alltoall(s, r, n, t, c);
}
#endif

#endif
