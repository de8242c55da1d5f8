/*
 * fortran_rt.c -- conversions for the generated Fortran entry points
 * (fortran_rt.h says why they exist).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include "fortran_rt.h"

#ifdef VCF_ENABLED
#ifndef VCF_NO_BUFFERS

/* The sentinels' addresses: common blocks in libmpi under the manglings
 * compilers use (gfortran: the lower-case name with one underscore). Looked
 * up once; a race only repeats the same lookups. */
static struct {
    int done;
    void *in_place[4], *bottom[4];
} sent;

static void lookup(void *out[4], const char *const names[4])
{
    for (int i = 0; i < 4; i++)
        out[i] = dlsym(RTLD_DEFAULT, names[i]);
}

static void sentinels(void)
{
    static const char *const ip[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                      "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    static const char *const bt[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                      "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    if (__atomic_load_n(&sent.done, __ATOMIC_ACQUIRE))
        return;
    lookup(sent.in_place, ip);
    lookup(sent.bottom, bt);
    __atomic_store_n(&sent.done, 1, __ATOMIC_RELEASE);
}

static int is(void *p, void *const set[4])
{
    for (int i = 0; i < 4; i++)
        if (set[i] && p == set[i])
            return 1;
    return 0;
}

void *vcf_buf(void *p)
{
    sentinels();
    if (is(p, sent.in_place))
        return MPI_IN_PLACE;
    if (is(p, sent.bottom))
        return MPI_BOTTOM;
    return p;
}
#endif

MPI_Request *vcf_reqs_in(const MPI_Fint *f, MPI_Fint n, int *ok)
{
    MPI_Request *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    for (MPI_Fint i = 0; i < n; i++)
        c[i] = PMPI_Request_f2c(f[i]);
    return c;
}

void vcf_reqs_out(MPI_Request *c, MPI_Fint *f, MPI_Fint n)
{
    for (MPI_Fint i = 0; c && i < n; i++)
        f[i] = PMPI_Request_c2f(c[i]);
    free(c);
}

MPI_Status *vcf_statuses_in(const MPI_Fint *f, MPI_Fint n, int *ok)
{
    if (VCF_STATUSES_IGNORE(f))
        return MPI_STATUSES_IGNORE;
    MPI_Status *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c)
        *ok = 0;
    return c;
}

/* a Fortran status is sizeof(MPI_Status) bytes of INTEGERs (MPI_STATUS_SIZE) */
void vcf_statuses_out(MPI_Status *c, MPI_Fint *f, MPI_Fint n, int rc)
{
    if (!c || c == MPI_STATUSES_IGNORE)
        return;
    /* MPI_ERR_IN_STATUS: the statuses say which failed */
    for (MPI_Fint i = 0; (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && i < n; i++)
        VCF_STATUS_C2F(&c[i], f + (size_t)i * VCF_STATUS_INTS);
    free(c);
}

int *vcf_ints_in(MPI_Fint n, int *ok)
{
    int *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c)
        *ok = 0;
    return c;
}

void vcf_indices_out(int *c, MPI_Fint *f, int n)
{
    for (int i = 0; c && i < n; i++)
        f[i] = c[i] + 1;
    free(c);
}

#endif
