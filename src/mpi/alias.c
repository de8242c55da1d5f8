/*
 * alias.c -- send and receive buffers that MPI says must not be the same
 * memory.
 *
 * Passing one buffer as both a collective's send and receive buffer
 * (instead of MPI_IN_PLACE) is erroneous. MPICH checks the usual shapes on
 * the calling rank before it communicates and returns MPI_ERR_BUFFER
 * through the communicator's error handler; Open MPI 4.1 checks none and
 * runs the call. Through the drop-in, MPICH's own tests of that error
 * (errors/coll/noalias*) got a result instead, or a root that alone made
 * the erroneous call waited in vcoll for ranks that never came.
 *
 * So the drop-in built for MPICH finds exactly the shapes MPICH rejects
 * (its C binding's checks: the same buffer, or the caller's own block of
 * the other buffer, with the same type and a nonzero count) and gives that
 * call to MPICH, which fails it before communicating: its own class,
 * message and handler. Only those shapes: a call MPICH would run must stay
 * on vcoll with the other ranks; and only when this MPICH checks at all
 * (vcmpi_alias_setup).
 * Built for Open MPI, nothing is checked, as Open MPI checks nothing.
 */
#include <limits.h>
#include <stddef.h>
#include "vcmpi.h"

#if VCMPI_ALIAS_CHECKS
/* Whether this MPICH checks at all (a build without error checking, or
   MPIR_CVAR_COLL_ALIAS_CHECK=0 in any spelling MPICH reads) is MPICH's
   own answer: one aliased allreduce on the drop-in's copy of
   MPI_COMM_SELF, at setup, with errors returned. MPICH checks before its
   one-rank shortcut, so the answer covers the build, the variable and its
   precedence. (A program that turns the check off later through MPI_T is
   not followed.) */
void vcmpi_alias_setup(void)
{
    MPI_Errhandler old = MPI_ERRHANDLER_NULL;
    int x = 0, cls = MPI_SUCCESS;
    if (PMPI_Comm_get_errhandler(vcmpi.self, &old) != MPI_SUCCESS ||
        PMPI_Comm_set_errhandler(vcmpi.self, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return;     /* no checks known: none made (the calls stay on vcoll) */
    int rc = PMPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, vcmpi.self);
    if (rc != MPI_SUCCESS)
        PMPI_Error_class(rc, &cls);
    PMPI_Comm_set_errhandler(vcmpi.self, old);
    PMPI_Errhandler_free(&old);
    vcmpi.alias_checks = cls == MPI_ERR_BUFFER;
}

/* one == many + elems elements of dt (MPICH counts in the type's size;
   the call's own type, so a predefined one is in the drop-in's table) */
static int at(const void *one, const void *many, MPI_Aint elems, MPI_Datatype dt)
{
    ptrdiff_t d = (const char *)one - (const char *)many;
    if (elems == 0 || (d != 0 && (d < 0) != (elems < 0)))
        return d == 0;
    MPI_Aint size = vcmpi_type_size(dt);
    return size >= 0 && d == elems * size;
}

int vcmpi_alias_block(const void *one, int oc, MPI_Datatype ot, const void *many, int mc,
                      MPI_Datatype mt, int me)
{
    /* MPICH counts the offset me * mc in an int: where that overflows,
       its address is not this one, so no answer here is safe but "no" */
    return vcmpi_alias_checks() && one != MPI_IN_PLACE && ot == mt && oc == mc && oc != 0 &&
           (MPI_Aint)me * mc <= INT_MAX && at(one, many, (MPI_Aint)me * mc, mt);
}

int vcmpi_alias_vblock(const void *one, int oc, MPI_Datatype ot, const void *many,
                       const int mcs[], const int ds[], MPI_Datatype mt, int me)
{
    return vcmpi_alias_checks() && one != MPI_IN_PLACE && ot == mt && oc != 0 && mcs && ds &&
           mcs[me] != 0 && at(one, many, ds[me], mt);
}
#endif
