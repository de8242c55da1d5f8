/*
 * large.c -- MPI-4's large-count collectives (MPI_Bcast_c, ...), which
 * MPICH 4 exports and mpi4py calls. One rank may call MPI_Bcast_c while
 * another calls MPI_Bcast: that is correct MPI (only signatures must
 * match), so both must take the same route. Each _c call becomes its int
 * form here: a count past INT_MAX is expressed as count 1 of a datatype
 * with the same signature (blocks of dt plus a remainder), which the int
 * form stages like any other type. Vector forms convert their arrays; an
 * entry past INT_MAX there goes to MPI's own _c call (a per-rank fact, but
 * no rank can express such a block through the int form at all).
 */
#include <limits.h>
#include <stdlib.h>
#include "vcmpi.h"

#if MPI_VERSION >= 4

/* count of dt as (*c, *t), the same signature; *t to free when made */
static int big(MPI_Count count, MPI_Datatype dt, int *c, MPI_Datatype *t, int *made)
{
    *made = 0;
    if (count <= INT_MAX) {
        *c = (int)count;
        *t = dt;
        return count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
    }
    const MPI_Count blk = (MPI_Count)1 << 30;
    MPI_Count q = count / blk, r = count % blk;
    MPI_Aint lb, ext;
    MPI_Datatype chunk, whole, parts[2];
    int rc = PMPI_Type_get_extent(dt, &lb, &ext);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_contiguous((int)blk, dt, &chunk);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Type_contiguous((int)q, chunk, &parts[0]);
        PMPI_Type_free(&chunk);
    }
    if (rc == MPI_SUCCESS) {
        int lens[2] = {1, (int)r};
        MPI_Aint disp[2] = {0, (MPI_Aint)(q * blk) * ext};
        parts[1] = dt;
        rc = PMPI_Type_create_struct(r ? 2 : 1, lens, disp, parts, &whole);
        PMPI_Type_free(&parts[0]);
    }
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(&whole)) == MPI_SUCCESS) {
        *c = 1;
        *t = whole;
        *made = 1;
    }
    return rc;
}

static void unbig(MPI_Datatype *t, int made)
{
    if (made)
        PMPI_Type_free(t);
}

/* one data argument */
#define BIG1(call)                                                              \
    int c1, m1, rc = big(count, dt, &c1, &t1, &m1);                             \
    if (rc == MPI_SUCCESS)                                                      \
        rc = call;                                                              \
    unbig(&t1, m1);                                                             \
    return rc
/* a send side and a receive side */
#define BIG2(call)                                                              \
    int sc1, rc1, ms, mr, rc = big(scount, st, &sc1, &ts, &ms);                 \
    if (rc == MPI_SUCCESS && (rc = big(rcount, rt, &rc1, &tr, &mr)) == MPI_SUCCESS) { \
        rc = call;                                                              \
        unbig(&tr, mr);                                                         \
    }                                                                           \
    unbig(&ts, ms);                                                             \
    return rc

int MPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    MPI_Datatype t1;
    BIG1(MPI_Bcast(buf, c1, t1, root, comm));
}

int MPI_Ibcast_c(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    MPI_Datatype t1;
    BIG1(MPI_Ibcast(buf, c1, t1, root, comm, req));
}

int MPI_Reduce_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                 int root, MPI_Comm comm)
{
    MPI_Datatype t1;
    BIG1(MPI_Reduce(sb, rb, c1, t1, op, root, comm));
}

int MPI_Ireduce_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    MPI_Datatype t1;
    BIG1(MPI_Ireduce(sb, rb, c1, t1, op, root, comm, req));
}

int MPI_Allreduce_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm)
{
    MPI_Datatype t1;
    BIG1(MPI_Allreduce(sb, rb, c1, t1, op, comm));
}

int MPI_Iallreduce_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req)
{
    MPI_Datatype t1;
    BIG1(MPI_Iallreduce(sb, rb, c1, t1, op, comm, req));
}

int MPI_Scan_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm)
{
    MPI_Datatype t1;
    BIG1(MPI_Scan(sb, rb, c1, t1, op, comm));
}

int MPI_Exscan_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                 MPI_Comm comm)
{
    MPI_Datatype t1;
    BIG1(MPI_Exscan(sb, rb, c1, t1, op, comm));
}

int MPI_Reduce_scatter_block_c(const void *sb, void *rb, MPI_Count count, MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm)
{
    MPI_Datatype t1;
    BIG1(MPI_Reduce_scatter_block(sb, rb, c1, t1, op, comm));
}

int MPI_Allgather_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                    MPI_Count rcount, MPI_Datatype rt, MPI_Comm comm)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Allgather(sb, sc1, ts, rb, rc1, tr, comm));
}

int MPI_Iallgather_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                     MPI_Count rcount, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Iallgather(sb, sc1, ts, rb, rc1, tr, comm, req));
}

int MPI_Alltoall_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                   MPI_Count rcount, MPI_Datatype rt, MPI_Comm comm)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Alltoall(sb, sc1, ts, rb, rc1, tr, comm));
}

int MPI_Ialltoall_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                    MPI_Count rcount, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Ialltoall(sb, sc1, ts, rb, rc1, tr, comm, req));
}

int MPI_Gather_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                 MPI_Count rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Gather(sb, sc1, ts, rb, rc1, tr, root, comm));
}

int MPI_Igather_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                  MPI_Count rcount, MPI_Datatype rt, int root, MPI_Comm comm,
                  MPI_Request *req)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Igather(sb, sc1, ts, rb, rc1, tr, root, comm, req));
}

int MPI_Scatter_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                  MPI_Count rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Scatter(sb, sc1, ts, rb, rc1, tr, root, comm));
}

int MPI_Iscatter_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                   MPI_Count rcount, MPI_Datatype rt, int root, MPI_Comm comm,
                   MPI_Request *req)
{
    MPI_Datatype ts, tr;
    BIG2(MPI_Iscatter(sb, sc1, ts, rb, rc1, tr, root, comm, req));
}

/* n counts and displacements as ints, or NULL when one does not fit */
static int *ints(int n, const MPI_Count *cnt, const MPI_Aint *dsp)
{
    int *v = malloc((size_t)(n ? n : 1) * 2 * sizeof *v);
    for (int i = 0; v && i < n; i++) {
        if ((cnt && (cnt[i] > INT_MAX || cnt[i] < 0)) ||
            (dsp && (dsp[i] > INT_MAX || dsp[i] < INT_MIN))) {
            free(v);
            return NULL;
        }
        v[i] = cnt ? (int)cnt[i] : 0;
        v[n + i] = dsp ? (int)dsp[i] : 0;
    }
    return v;
}

static int comm_n(MPI_Comm comm)
{
    int n = 0, inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    return n;
}

int MPI_Allgatherv_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                     const MPI_Count rcs[], const MPI_Aint ds[], MPI_Datatype rt,
                     MPI_Comm comm)
{
    int n = comm_n(comm), *v = ints(n, rcs, ds), c;
    if (!v || scount > INT_MAX) {
        free(v);
        return PMPI_Allgatherv_c(sb, scount, st, rb, rcs, ds, rt, comm);
    }
    c = (int)scount;
    int rc = MPI_Allgatherv(sb, c, st, rb, v, v + n, rt, comm);
    free(v);
    return rc;
}

int MPI_Gatherv_c(const void *sb, MPI_Count scount, MPI_Datatype st, void *rb,
                  const MPI_Count rcs[], const MPI_Aint ds[], MPI_Datatype rt, int root,
                  MPI_Comm comm)
{
    int me = -1, n = comm_n(comm), *v = NULL;
    PMPI_Comm_rank(comm, &me);
    /* the vector arguments count at the root only */
    if (me == root && !(v = ints(n, rcs, ds)))
        return PMPI_Gatherv_c(sb, scount, st, rb, rcs, ds, rt, root, comm);
    if (scount > INT_MAX) {
        free(v);
        return PMPI_Gatherv_c(sb, scount, st, rb, rcs, ds, rt, root, comm);
    }
    int rc = MPI_Gatherv(sb, (int)scount, st, rb, v, v ? v + n : NULL, rt, root, comm);
    free(v);
    return rc;
}

int MPI_Scatterv_c(const void *sb, const MPI_Count scs[], const MPI_Aint ds[],
                   MPI_Datatype st, void *rb, MPI_Count rcount, MPI_Datatype rt, int root,
                   MPI_Comm comm)
{
    int me = -1, n = comm_n(comm), *v = NULL;
    PMPI_Comm_rank(comm, &me);
    if (me == root && !(v = ints(n, scs, ds)))
        return PMPI_Scatterv_c(sb, scs, ds, st, rb, rcount, rt, root, comm);
    if (rcount > INT_MAX) {
        free(v);
        return PMPI_Scatterv_c(sb, scs, ds, st, rb, rcount, rt, root, comm);
    }
    int rc = MPI_Scatterv(sb, v, v ? v + n : NULL, st, rb, (int)rcount, rt, root, comm);
    free(v);
    return rc;
}

int MPI_Alltoallv_c(const void *sb, const MPI_Count scs[], const MPI_Aint sds[],
                    MPI_Datatype st, void *rb, const MPI_Count rcs[], const MPI_Aint rds[],
                    MPI_Datatype rt, MPI_Comm comm)
{
    int n = comm_n(comm), *r = ints(n, rcs, rds);
    int *s = sb == MPI_IN_PLACE ? NULL : ints(n, scs, sds);
    if (!r || (sb != MPI_IN_PLACE && !s)) {
        free(r);
        free(s);
        return PMPI_Alltoallv_c(sb, scs, sds, st, rb, rcs, rds, rt, comm);
    }
    int rc = MPI_Alltoallv(sb, s, s ? s + n : NULL, st, rb, r, r + n, rt, comm);
    free(r);
    free(s);
    return rc;
}

int MPI_Reduce_scatter_c(const void *sb, void *rb, const MPI_Count rcs[], MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm)
{
    int n = comm_n(comm), *v = ints(n, rcs, NULL);
    if (!v)
        return PMPI_Reduce_scatter_c(sb, rb, rcs, dt, op, comm);
    int rc = MPI_Reduce_scatter(sb, rb, v, dt, op, comm);
    free(v);
    return rc;
}

#endif
