/*
 * large_rt.c -- what the generated large-count forms (large.c, from
 * calls.tab) use.
 *
 * MPI-4's MPI_Bcast_c and friends (MPICH 4 exports them, mpi4py calls
 * them): one rank may call MPI_Bcast_c while another calls MPI_Bcast, which
 * is correct MPI (only signatures must match), so both must take the same
 * route. Each _c call becomes its int form: a count past INT_MAX is
 * expressed as count 1 of a datatype with the same signature (blocks of
 * the type plus a remainder), which the int form stages like any other
 * type. Vector forms convert their arrays; an entry past INT_MAX there
 * goes to MPI's own _c call (no rank could express such a block through
 * an int form at all).
 */
#include <limits.h>
#include <stdlib.h>
#include "vcmpi.h"

#if MPI_VERSION >= 4

int vcmpi_big(MPI_Count count, MPI_Datatype dt, int *c, MPI_Datatype *t, int *made)
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

void vcmpi_unbig(MPI_Datatype *t, int made)
{
    if (made)
        PMPI_Type_free(t);
}
#endif

int vcmpi_comm_n(MPI_Comm comm)
{
    int n = 0, inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    return n;
}

int vcmpi_at_root(int root, MPI_Comm comm)
{
    int me = -1;
    PMPI_Comm_rank(comm, &me);
    return me == root;
}

#if MPI_VERSION >= 4
/* n entries as ints; *whole set (NULL back) when one does not fit */
#define TO_INTS(src, n, whole, rc)                                              \
    int *v = malloc((size_t)((n) > 0 ? (n) : 1) * sizeof *v);                 \
    if (!v) {                                                                   \
        *(rc) = MPI_ERR_NO_MEM;                                                 \
        return NULL;                                                            \
    }                                                                           \
    for (int i = 0; i < (n); i++) {                                             \
        if ((src)[i] > INT_MAX || (src)[i] < INT_MIN) {                         \
            free(v);                                                            \
            *(whole) = 1;                                                       \
            return NULL;                                                        \
        }                                                                       \
        v[i] = (int)(src)[i];                                                   \
    }                                                                           \
    return v

int *vcmpi_ints_count(const MPI_Count *src, int n, int *whole, int *rc)
{
    TO_INTS(src, n, whole, rc);
}

int *vcmpi_ints_aint(const MPI_Aint *src, int n, int *whole, int *rc)
{
    TO_INTS(src, n, whole, rc);
}

#endif
