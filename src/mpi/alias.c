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
 * on vcoll with the other ranks. MPICH skips the checks when told to
 * (MPIR_CVAR_COLL_ALIAS_CHECK, MPIR_CVAR_ERROR_CHECKING), and so does this.
 * Built for Open MPI, nothing is checked, as Open MPI checks nothing.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "vcmpi.h"

#if VCMPI_ALIAS_CHECKS
/* a boolean control variable of MPICH's, under any of its prefixes, set
   false */
static int off(const char *name)
{
    static const char *const pre[] = {"MPIR_CVAR_", "MPICH_", "MPIR_PARAM_"};
    char var[64];
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        snprintf(var, sizeof var, "%s%s", pre[i], name);
        const char *v = getenv(var);
        if (v && (!strcasecmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
                  !strcasecmp(v, "off")))
            return 1;
    }
    return 0;
}

int vcmpi_alias_checks(void)
{
    static int on = -1;    /* read once; a race reads the same environment */
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) {
        v = !off("COLL_ALIAS_CHECK") && !off("ERROR_CHECKING");
        __atomic_store_n(&on, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* one == many + elems elements of dt (MPICH counts in the type's size;
   the call's own type, so a predefined one is in the drop-in's table) */
static int at(const void *one, const void *many, MPI_Aint elems, MPI_Datatype dt)
{
    ptrdiff_t d = (const char *)one - (const char *)many;
    if (elems == 0 || (d != 0 && (d < 0) != (elems < 0)))
        return d == 0;
    return d == elems * (MPI_Aint)vcmpi_type_size(dt);
}

int vcmpi_alias_block(const void *one, int oc, MPI_Datatype ot, const void *many, int mc,
                      MPI_Datatype mt, int me)
{
    return one != MPI_IN_PLACE && ot == mt && oc == mc && oc != 0 &&
           at(one, many, (MPI_Aint)me * mc, mt) && vcmpi_alias_checks();
}

int vcmpi_alias_vblock(const void *one, int oc, MPI_Datatype ot, const void *many,
                       const int mcs[], const int ds[], MPI_Datatype mt, int me)
{
    return one != MPI_IN_PLACE && ot == mt && oc != 0 && mcs && ds && mcs[me] != 0 &&
           at(one, many, ds[me], mt) && vcmpi_alias_checks();
}
#endif
