/*
 * fortran_rt.c -- conversions for the generated Fortran entry points
 * (fortran_rt.h says why they exist).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "fortran_rt.h"

#ifdef VCF_ENABLED

/* The sentinels' addresses: common blocks in libmpi under the manglings
 * compilers use (gfortran: the lower-case name with one underscore), and
 * for MPICH's mpi_f08 (whose wrappers of calls without buffers the
 * drop-in replaces: fortran_rt.h) the module variables of its weights
 * sentinels. Looked up once; a race only repeats the same lookups. */
#define VCF_MANGLINGS 4
static struct {
    int done;
    void *in_place[VCF_MANGLINGS], *bottom[VCF_MANGLINGS];
    void *unweighted[VCF_MANGLINGS], *weights_empty[VCF_MANGLINGS];
    void *argv_null[VCF_MANGLINGS], *argvs_null[VCF_MANGLINGS];
    void *errcodes_ignore[VCF_MANGLINGS];
} sent;

static void lookup(void *out[VCF_MANGLINGS], const char *const names[VCF_MANGLINGS])
{
    for (int i = 0; i < VCF_MANGLINGS; i++)
        out[i] = names[i] ? dlsym(RTLD_DEFAULT, names[i]) : NULL;
}

static void sentinels(void)
{
    static const char *const ip[VCF_MANGLINGS] = {
        "mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
        "MPI_FORTRAN_IN_PLACE"};
    static const char *const bt[VCF_MANGLINGS] = {
        "mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
        "MPI_FORTRAN_BOTTOM"};
#ifdef VCF_F08
    static const char *const uw[VCF_MANGLINGS] = {
        "__mpi_f08_link_constants_MOD_mpi_unweighted"};
    static const char *const we[VCF_MANGLINGS] = {
        "__mpi_f08_link_constants_MOD_mpi_weights_empty"};
    static const char *const an[VCF_MANGLINGS] = {
        "__mpi_f08_link_constants_MOD_mpi_argv_null"};
    static const char *const asn[VCF_MANGLINGS] = {
        "__mpi_f08_link_constants_MOD_mpi_argvs_null"};
    static const char *const ei[VCF_MANGLINGS] = {
        "__mpi_f08_link_constants_MOD_mpi_errcodes_ignore"};
#else
    static const char *const uw[VCF_MANGLINGS] = {
        "mpi_fortran_unweighted_", "mpi_fortran_unweighted", "mpi_fortran_unweighted__",
        "MPI_FORTRAN_UNWEIGHTED"};
    static const char *const we[VCF_MANGLINGS] = {
        "mpi_fortran_weights_empty_", "mpi_fortran_weights_empty",
        "mpi_fortran_weights_empty__", "MPI_FORTRAN_WEIGHTS_EMPTY"};
    static const char *const an[VCF_MANGLINGS] = {
        "mpi_fortran_argv_null_", "mpi_fortran_argv_null", "mpi_fortran_argv_null__",
        "MPI_FORTRAN_ARGV_NULL"};
    static const char *const asn[VCF_MANGLINGS] = {
        "mpi_fortran_argvs_null_", "mpi_fortran_argvs_null", "mpi_fortran_argvs_null__",
        "MPI_FORTRAN_ARGVS_NULL"};
    static const char *const ei[VCF_MANGLINGS] = {
        "mpi_fortran_errcodes_ignore_", "mpi_fortran_errcodes_ignore",
        "mpi_fortran_errcodes_ignore__", "MPI_FORTRAN_ERRCODES_IGNORE"};
#endif
    if (__atomic_load_n(&sent.done, __ATOMIC_ACQUIRE))
        return;
    lookup(sent.in_place, ip);
    lookup(sent.bottom, bt);
    lookup(sent.unweighted, uw);
    lookup(sent.weights_empty, we);
    lookup(sent.argv_null, an);
    lookup(sent.argvs_null, asn);
    lookup(sent.errcodes_ignore, ei);
    __atomic_store_n(&sent.done, 1, __ATOMIC_RELEASE);
}

static int is(const void *p, void *const set[VCF_MANGLINGS])
{
    for (int i = 0; i < VCF_MANGLINGS; i++)
        if (set[i] && p == set[i])
            return 1;
    return 0;
}

#ifndef VCF_NO_BUFFERS
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

/* Passed on as it is, Fortran's MPI_UNWEIGHTED would be read as an array
   of weights: the graph would be weighted, with whatever the sentinel's
   memory holds (MPICH's dgraph_unwgtf90 found it) */
const int *vcf_weights(const MPI_Fint *w)
{
    sentinels();
    if (is(w, sent.unweighted))
        return MPI_UNWEIGHTED;
    if (is(w, sent.weights_empty))
        return MPI_WEIGHTS_EMPTY;
    return (const int *)w;
}

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
    for (MPI_Fint i = 0; c && i < n; i++)
        VCF_STATUS_F2C(f + (size_t)i * VCF_STATUS_INTS, &c[i]);
    return c;
}

/* a Fortran status is sizeof(MPI_Status) bytes of INTEGERs (MPI_STATUS_SIZE) */
void vcf_statuses_out(MPI_Status *c, MPI_Fint *f, MPI_Fint n, int rc)
{
    if (!c || c == MPI_STATUSES_IGNORE)
        return;
    /* MPI_ERR_IN_STATUS: the statuses say which failed */
    for (MPI_Fint i = 0; (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS || VCF_STATUS_ON_ERROR) &&
                         i < n; i++)
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

/* Both MPIs' Fortran bindings drop a string's leading and trailing blanks:
   the same here, so a file or port name means what it means on the plain
   MPI. len: the hidden length, as VCF_STRLEN (an int under Open MPI) */
char *vcf_str_in(const char *f, long long len, int *ok)
{
    size_t b = 0, e = len > 0 ? (size_t)len : 0;
    while (b < e && f[b] == ' ')
        b++;
    while (e > b && f[e - 1] == ' ')
        e--;
    char *c = malloc(e - b + 1);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    memcpy(c, f + b, e - b);
    c[e - b] = '\0';
    return c;
}

/* n strings len bytes long, stride bytes apart, each trimmed as by
   vcf_str_in: a NULL-terminated array, each string malloc'd */
static char **strings_in(const char *f, size_t n, size_t stride, size_t len, int *ok)
{
    char **c = calloc(n + 1, sizeof *c);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    for (size_t j = 0; j < n && *ok; j++)
        c[j] = vcf_str_in(f + j * stride, (long long)len, ok);
    return c;
}

/* spawn's arguments, one list: the strings up to the first blank one (MPI:
   in Fortran an argument list ends with an empty string, and blanks around
   an argument are dropped, as around a string) */
static char **args_in(const char *f, size_t stride, size_t len, int *ok)
{
    size_t n = 0;
    for (;; n++) {
        const char *e = f + n * stride;
        size_t k = 0;
        while (k < len && e[k] == ' ')
            k++;
        if (k == len)
            break;
    }
    return strings_in(f, n, stride, len, ok);
}

char **vcf_argv_in(const char *f, long long len, int *ok)
{
    sentinels();
    if (is(f, sent.argv_null))
        return MPI_ARGV_NULL;
    size_t l = len > 0 ? (size_t)len : 0;
    return args_in(f, l, l, ok);
}

/* spawn_multiple's n commands */
char **vcf_strs_in(const char *f, MPI_Fint n, long long len, int *ok)
{
    size_t l = len > 0 ? (size_t)len : 0;
    return strings_in(f, n > 0 ? (size_t)n : 0, l, l, ok);
}

/* ARRAY_OF_ARGV(n, *): command i's arguments are column-major row i, so
   one argument is n elements after the one before */
char ***vcf_argvs_in(const char *f, MPI_Fint n, long long len, int *ok)
{
    sentinels();
    if (is(f, sent.argvs_null))
        return MPI_ARGVS_NULL;
    size_t l = len > 0 ? (size_t)len : 0, m = n > 0 ? (size_t)n : 0;
    char ***c = calloc(m > 0 ? m : 1, sizeof *c);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    for (size_t i = 0; i < m && *ok; i++)
        c[i] = args_in(f + i * l, m * l, l, ok);
    return c;
}

void vcf_argv_free(char **c)
{
    for (size_t j = 0; c && c[j]; j++)
        free(c[j]);
    free(c);
}

void vcf_argvs_free(char ***c, MPI_Fint n)
{
    for (MPI_Fint i = 0; c && i < n; i++)
        vcf_argv_free(c[i]);
    free(c);
}

MPI_Info *vcf_infos_in(const MPI_Fint *f, MPI_Fint n, int *ok)
{
    MPI_Info *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    for (MPI_Fint i = 0; i < n; i++)
        c[i] = PMPI_Info_f2c(f[i]);
    return c;
}

/* an INTEGER array is an int array here (fortran_rt.h) */
int *vcf_errcodes(MPI_Fint *f)
{
    sentinels();
    return is(f, sent.errcodes_ignore) ? MPI_ERRCODES_IGNORE : (int *)f;
}

void vcf_indices_out(int *c, MPI_Fint *f, int n)
{
    for (int i = 0; c && i < n; i++)
        f[i] = c[i] + 1;
    free(c);
}

#endif
