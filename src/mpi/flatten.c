/*
 * flatten.c -- a datatype's layout as a list of byte segments, so packing
 * is memcpy over that list instead of a trip through MPI_Pack per call.
 *
 * One element of the type is walked once (MPI_Type_get_envelope/contents,
 * the type map in its order), adjacent pieces merged, and the list kept in
 * the type's cached facts (types.c). Types this walk does not follow
 * (subarray, darray, named types with internal padding), or whose list
 * would be long, keep no list: stage.c then packs with MPI_Pack.
 */
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

#define MAX_SEGS 4096        /* past this, MPI's own engine is no slower */

typedef struct {
    vcmpi_seg_t *s;
    size_t n, cap;
    int fail;
} list_t;

static void add(list_t *l, MPI_Aint off, size_t len)
{
    if (l->fail || !len)
        return;
    if (l->n && l->s[l->n - 1].off + (MPI_Aint)l->s[l->n - 1].len == off) {
        l->s[l->n - 1].len += len;     /* the next bytes in memory and in order */
        return;
    }
    if (l->n == MAX_SEGS) {
        l->fail = 1;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        vcmpi_seg_t *s = realloc(l->s, cap * sizeof *s);
        if (!s) {
            l->fail = 1;
            return;
        }
        l->s = s;
        l->cap = cap;
    }
    l->s[l->n].off = off;
    l->s[l->n].len = len;
    l->n++;
}

static void walk(list_t *l, MPI_Datatype dt, MPI_Aint base, int depth);

/* count copies of dt, the i-th at base + disp(i) */
static void repeat(list_t *l, MPI_Datatype dt, MPI_Aint base, int count, MPI_Aint first,
                   MPI_Aint step, int depth)
{
    for (int i = 0; i < count && !l->fail; i++)
        walk(l, dt, base + first + (MPI_Aint)i * step, depth);
}

static void free_types(MPI_Datatype *t, int n)
{
    for (int i = 0; i < n; i++) {
        int a, b, c, comb;
        if (PMPI_Type_get_envelope(t[i], &a, &b, &c, &comb) == MPI_SUCCESS &&
            comb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&t[i]);
    }
}

static void walk(list_t *l, MPI_Datatype dt, MPI_Aint base, int depth)
{
    int ni, na, nd, comb;
    if (l->fail)
        return;
    if (depth > 32 || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        l->fail = 1;
        return;
    }
    if (comb == MPI_COMBINER_NAMED) {
        int sz;
        MPI_Aint lb, ext;
        /* a predefined type with padding inside (MPI_SHORT_INT) has holes
           this walk cannot see */
        if (PMPI_Type_size(dt, &sz) != MPI_SUCCESS ||
            PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS || (sz != ext && dt != MPI_DOUBLE_INT &&
            dt != MPI_LONG_INT && dt != MPI_LONG_DOUBLE_INT))
            l->fail = 1;
        else
            add(l, base, (size_t)sz);
        return;
    }
    int *iv = malloc((size_t)(ni ? ni : 1) * sizeof *iv);
    MPI_Aint *av = malloc((size_t)(na ? na : 1) * sizeof *av);
    MPI_Datatype *tv = malloc((size_t)(nd ? nd : 1) * sizeof *tv);
    if (!iv || !av || !tv || PMPI_Type_get_contents(dt, ni, na, nd, iv, av, tv) != MPI_SUCCESS) {
        free(iv), free(av), free(tv);
        l->fail = 1;
        return;
    }
    MPI_Aint lb, ext = 0;
    if (nd > 0 && PMPI_Type_get_extent(tv[0], &lb, &ext) != MPI_SUCCESS)
        l->fail = 1;
    switch (comb) {
    case MPI_COMBINER_DUP:
        walk(l, tv[0], base, depth + 1);
        break;
    case MPI_COMBINER_RESIZED:          /* only the extent changes */
        walk(l, tv[0], base, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        repeat(l, tv[0], base, iv[0], 0, ext, depth + 1);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? (MPI_Aint)iv[2] * ext : av[0];
        for (int i = 0; i < iv[0] && !l->fail; i++)
            repeat(l, tv[0], base + (MPI_Aint)i * stride, iv[1], 0, ext, depth + 1);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < iv[0] && !l->fail; i++) {
            MPI_Aint d = comb == MPI_COMBINER_INDEXED ? (MPI_Aint)iv[1 + iv[0] + i] * ext : av[i];
            repeat(l, tv[0], base + d, iv[1 + i], 0, ext, depth + 1);
        }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < iv[0] && !l->fail; i++) {
            MPI_Aint d = comb == MPI_COMBINER_INDEXED_BLOCK ? (MPI_Aint)iv[2 + i] * ext : av[i];
            repeat(l, tv[0], base + d, iv[1], 0, ext, depth + 1);
        }
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < iv[0] && !l->fail; i++) {
            MPI_Aint e;
            if (PMPI_Type_get_extent(tv[i], &lb, &e) != MPI_SUCCESS)
                l->fail = 1;
            else
                repeat(l, tv[i], base + av[i], iv[1 + i], 0, e, depth + 1);
        }
        break;
    default:                            /* subarray, darray, f90 types */
        l->fail = 1;
    }
    free_types(tv, nd);
    free(iv), free(av), free(tv);
}

vcmpi_flat_t *vcmpi_flatten(MPI_Datatype dt, size_t size)
{
    list_t l = {0};
    walk(&l, dt, 0, 0);
    size_t total = 0;
    for (size_t i = 0; i < l.n; i++)
        total += l.s[i].len;
    vcmpi_flat_t *f = NULL;
    /* the list must account for every byte of the type's data */
    if (!l.fail && total == size && (f = malloc(sizeof *f + l.n * sizeof f->seg[0]))) {
        f->refs = 1;
        f->n = l.n;
        memcpy(f->seg, l.s, l.n * sizeof f->seg[0]);
    }
    free(l.s);
    return f;
}

void vcmpi_flat_hold(vcmpi_flat_t *f)
{
    if (f)
        __atomic_fetch_add(&f->refs, 1, __ATOMIC_RELAXED);
}

void vcmpi_flat_drop(vcmpi_flat_t *f)
{
    if (f && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(f);
}

void vcmpi_flat_copy(int dir, char *user, size_t count, MPI_Aint extent,
                     const vcmpi_flat_t *f, char *packed)
{
    for (size_t k = 0; k < count; k++) {
        char *u = user + (MPI_Aint)k * extent;
        for (size_t i = 0; i < f->n; i++) {
            if (dir == 0)
                memcpy(packed, u + f->seg[i].off, f->seg[i].len);
            else
                memcpy(u + f->seg[i].off, packed, f->seg[i].len);
            packed += f->seg[i].len;
        }
    }
}
