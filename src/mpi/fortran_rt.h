/*
 * fortran_rt.h -- what the generated Fortran entry points (fortran.c) use.
 *
 * Open MPI's Fortran bindings (mpif.h, use mpi, use mpi_f08) call PMPI_*
 * directly, so the drop-in's C MPI_* functions never see a Fortran
 * program. The drop-in therefore defines the Fortran symbols themselves:
 * mpi_allreduce_ and its other manglings, which mpif.h and `use mpi`
 * programs call (weak in libmpi_mpifh, so the preloaded definition wins),
 * and ompi_allreduce_f, which the mpi_f08 wrappers call through the PLT.
 * Each converts the arguments and calls the drop-in's C function, which
 * decides vcoll-or-MPI exactly as for C.
 *
 * MPICH's Fortran bindings call the C MPI_* functions, which the drop-in
 * already intercepts: there these symbols are not defined (VCF_ENABLED
 * unset), so MPICH's own conversions run.
 */
#ifndef VCMPI_FORTRAN_RT_H
#define VCMPI_FORTRAN_RT_H

#include "vcmpi.h"

#if defined(OPEN_MPI) && OPEN_MPI
#define VCF_ENABLED 1
#endif

_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "Fortran INTEGER arrays are passed to C as int arrays");

/* Fortran's .true. and .false. as Open MPI's Fortran sees them (gfortran) */
#define VCF_TRUE 1
#define VCF_FALSE 0

/* every name a Fortran binding reaches one entry point by */
#define VCF_ALIAS(fn, sym) \
    extern __typeof__(fn) sym __attribute__((alias(#fn), visibility("default")));
#define VCF_NAMES(fn, name, NAME)                                              \
    VCF_ALIAS(fn, mpi_##name) VCF_ALIAS(fn, mpi_##name##_)                     \
    VCF_ALIAS(fn, mpi_##name##__) VCF_ALIAS(fn, NAME) VCF_ALIAS(fn, ompi_##name##_f)

/* buffers: Fortran's MPI_IN_PLACE and MPI_BOTTOM are the addresses of
   common blocks, mapped to C's */
void *vcf_buf(void *p);
int vcf_status_ignore(const MPI_Fint *f);
/* arrays: converted copies (malloc'd; *ok = 0 when memory ran out) and
   back again (freed) */
MPI_Request *vcf_reqs_in(const MPI_Fint *f, MPI_Fint n, int *ok);
void vcf_reqs_out(MPI_Request *c, MPI_Fint *f, MPI_Fint n);
MPI_Status *vcf_statuses_in(const MPI_Fint *f, MPI_Fint n, int *ok);
void vcf_statuses_out(MPI_Status *c, MPI_Fint *f, MPI_Fint n, int rc);
int *vcf_ints_in(MPI_Fint n, int *ok);
void vcf_indices_out(int *c, MPI_Fint *f, int n);

#endif
