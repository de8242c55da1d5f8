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
 * MPICH's mpif.h and `use mpi` bindings call the C MPI_* functions, which
 * the drop-in already intercepts, and so do its mpi_f08 wrappers of calls
 * with buffers (through their descriptor-handling layer). Its mpi_f08
 * wrappers of calls without buffers (MPI_Init, MPI_Wait, MPI_Comm_split,
 * ...) call PMPI_* directly: only those are defined here for MPICH, as
 * mpi_<name>_f08_, with f08's status type (MPI-4's MPI_F08_status).
 */
#ifndef VCMPI_FORTRAN_RT_H
#define VCMPI_FORTRAN_RT_H

#include "vcmpi.h"

#if defined(OPEN_MPI) && OPEN_MPI
#define VCF_ENABLED 1
#elif defined(MPICH) && MPI_VERSION >= 4
#define VCF_ENABLED 1
#define VCF_F08 1
#define VCF_NO_BUFFERS 1
#endif

_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "Fortran INTEGER arrays are passed to C as int arrays");

/* Fortran's .true. and .false. as Open MPI's Fortran sees them (gfortran) */
#define VCF_TRUE 1
#define VCF_FALSE 0

/* every name a Fortran binding reaches one entry point by */
#define VCF_ALIAS(fn, sym) \
    extern __typeof__(fn) sym __attribute__((alias(#fn), visibility("default")));
#ifdef VCF_F08
#define VCF_NAMES(fn, name, NAME) VCF_ALIAS(fn, mpi_##name##_f08_)
#define VCF_PNAMES(fn, name, NAME) VCF_NAMES(fn, name, NAME)
/* a status is MPI_F08_status; MPI_STATUS_IGNORE is its own object */
#define VCF_STATUS_IGNORE(f) ((const void *)(f) == (const void *)MPI_F08_STATUS_IGNORE)
#define VCF_STATUSES_IGNORE(f) ((const void *)(f) == (const void *)MPI_F08_STATUSES_IGNORE)
#define VCF_STATUS_C2F(c, f) PMPI_Status_c2f08((c), (MPI_F08_status *)(f))
#define VCF_STATUS_F2C(f, c) PMPI_Status_f082c((const MPI_F08_status *)(f), (c))
/* MPICH's mpi_f08 hands the caller's status memory to C: what the call
   writes there on an error (MPI_ERR_TRUNCATE's source and tag) is the
   caller's too */
#define VCF_STATUS_ON_ERROR 1
#define VCF_STATUS_INTS (sizeof(MPI_F08_status) / sizeof(MPI_Fint))
/* a string's hidden length: gfortran passes a size_t */
#define VCF_STRLEN size_t
#else
#define VCF_NAMES(fn, name, NAME)                                              \
    VCF_ALIAS(fn, mpi_##name) VCF_ALIAS(fn, mpi_##name##_)                     \
    VCF_ALIAS(fn, mpi_##name##__) VCF_ALIAS(fn, NAME) VCF_ALIAS(fn, ompi_##name##_f)
/* a persistent collective (NAME: ALLREDUCE_INIT): Open MPI 4.1 has them in
   its pcollreq extension, as mpix_allreduce_init_ (mpif-ext.h, mpi_ext)
   and ompix_allreduce_init_f (called by mpi_f08_ext's wrapper) */
#define VCF_PNAMES(fn, name, NAME)                                             \
    VCF_ALIAS(fn, mpix_##name) VCF_ALIAS(fn, mpix_##name##_)                   \
    VCF_ALIAS(fn, mpix_##name##__) VCF_ALIAS(fn, MPIX_##NAME)                  \
    VCF_ALIAS(fn, ompix_##name##_f)
/* a status is MPI_STATUS_SIZE INTEGERs */
#define VCF_STATUS_IGNORE(f) ((const MPI_Fint *)(f) == MPI_F_STATUS_IGNORE)
#define VCF_STATUSES_IGNORE(f) ((const MPI_Fint *)(f) == MPI_F_STATUSES_IGNORE)
#define VCF_STATUS_C2F(c, f) PMPI_Status_c2f((c), (f))
#define VCF_STATUS_F2C(f, c) PMPI_Status_f2c((f), (c))
/* Open MPI's Fortran wrappers copy a status back on success only */
#define VCF_STATUS_ON_ERROR 0
#define VCF_STATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))
/* a string's hidden length: mpi_f08 passes ompi_*_f an int by value,
   gfortran's calls of mpif.h's names a size_t, of which an int parameter
   reads the low half (x86-64, aarch64) */
#define VCF_STRLEN int
#endif

/* buffers: Fortran's MPI_IN_PLACE and MPI_BOTTOM are the addresses of
   common blocks, mapped to C's */
void *vcf_buf(void *p);
/* a weights array of a distributed graph: Fortran's MPI_UNWEIGHTED and
   MPI_WEIGHTS_EMPTY mapped to C's */
const int *vcf_weights(const MPI_Fint *w);
/* arrays: converted copies (malloc'd; *ok = 0 when memory ran out) and
   back again (freed). A status goes to C and back whole (statuses here,
   single ones in the generated code): single-completion calls leave its
   MPI_ERROR field as the caller set it, and so do the calls of many when
   they do not return MPI_ERR_IN_STATUS (MPICH's mprobef08 checks it); a C
   status never filled from the Fortran one would hand back a stack word. */
MPI_Request *vcf_reqs_in(const MPI_Fint *f, MPI_Fint n, int *ok);
void vcf_reqs_out(MPI_Request *c, MPI_Fint *f, MPI_Fint n);
MPI_Status *vcf_statuses_in(const MPI_Fint *f, MPI_Fint n, int *ok);
void vcf_statuses_out(MPI_Status *c, MPI_Fint *f, MPI_Fint n, int rc);
int *vcf_ints_in(MPI_Fint n, int *ok);
/* a CHARACTER(LEN=len) argument as a C string (malloc'd) */
char *vcf_str_in(const char *f, long long len, int *ok);
void vcf_indices_out(int *c, MPI_Fint *f, int n);
/* spawn's string arrays (CHARACTER(LEN=len)) as C's, and back to free:
   argv: one argument list (or MPI_ARGV_NULL); strs: n strings; argvs: n
   lists, ARRAY_OF_ARGV(n, *) (or MPI_ARGVS_NULL). Each string trimmed as
   by vcf_str_in; a NULL-terminated array, each string malloc'd. */
char **vcf_argv_in(const char *f, long long len, int *ok);
char **vcf_strs_in(const char *f, MPI_Fint n, long long len, int *ok);
char ***vcf_argvs_in(const char *f, MPI_Fint n, long long len, int *ok);
void vcf_argv_free(char **c);
void vcf_argvs_free(char ***c, MPI_Fint n);
MPI_Info *vcf_infos_in(const MPI_Fint *f, MPI_Fint n, int *ok);
/* spawn's error codes: Fortran's MPI_ERRCODES_IGNORE mapped to C's */
int *vcf_errcodes(MPI_Fint *f);

#endif
