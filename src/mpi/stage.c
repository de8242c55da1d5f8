/*
 * stage.c -- any MPI datatype on vcoll, which moves bytes.
 *
 * MPI only asks the ranks of a collective to agree on type signatures, not
 * layouts: a root may gather into a strided column while the others send
 * MPI_DOUBLE. So whether a call runs on vcoll must not depend on a rank's
 * layout; instead each rank stages its own data: contiguous data is used
 * where it lies, anything else is packed into a temporary before the call
 * and unpacked from one after it. The packed form of a signature is the
 * same bytes on every rank, whatever the layouts.
 *
 * A stage collects what must happen after the vcoll call (unpacks, frees)
 * so a non-blocking call can carry it to its completion. A persistent
 * call's stage also keeps its packs, redone at every start (the program
 * may change its buffers between starts), and unpacks at every
 * completion; it is finished when the request is freed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "vcmpi.h"

/* PMPI_Pack and PMPI_Unpack count in int: go in chunks of at most this
   many bytes (whole elements), so no size overflows them */
#define CHUNK_BYTES ((size_t)1 << 30)

static int add_free(vcmpi_stage_t *s, void *p)
{
    if (s->nfree == VCMPI_STAGE_FREES) {
        free(p);
        return MPI_ERR_INTERN;
    }
    s->frees[s->nfree++] = p;
    return MPI_SUCCESS;
}

/* pack (dir 0) or unpack (dir 1) count elements between user and packed */
static int copy(int dir, void *user, int count, MPI_Datatype dt, const vcmpi_tinfo_t *ti,
                char *packed)
{
    if (ti->flat) {
        vcmpi_flat_copy(dir, user, (size_t)count, ti->extent, ti->flat, packed);
        return MPI_SUCCESS;
    }
    size_t per = ti->size ? CHUNK_BYTES / ti->size : (size_t)count;
    if (per == 0)
        per = 1;
    for (size_t done = 0; done < (size_t)count;) {
        size_t k = (size_t)count - done < per ? (size_t)count - done : per;
        char *u = (char *)user + (MPI_Aint)done * ti->extent;
        char *p = packed + done * ti->size;
        int pos = 0, rc;
        if (k * ti->size > INT_MAX)   /* one element larger than INT_MAX */
            return MPI_ERR_COUNT;
        if (dir == 0)
            rc = PMPI_Pack(u, (int)k, dt, p, (int)(k * ti->size), &pos, vcmpi.priv);
        else
            rc = PMPI_Unpack(p, (int)(k * ti->size), &pos, u, (int)k, dt, vcmpi.priv);
        if (rc != MPI_SUCCESS)
            return rc;
        done += k;
    }
    return MPI_SUCCESS;
}

int vcmpi_pack(const void *buf, int count, MPI_Datatype dt, const vcmpi_tinfo_t *ti,
               char *packed)
{
    return copy(0, (void *)buf, count, dt, ti, packed);
}

int vcmpi_unpack(void *buf, int count, MPI_Datatype dt, const vcmpi_tinfo_t *ti,
                 const char *packed)
{
    return copy(1, buf, count, dt, ti, (char *)packed);
}

/* one more (user, packed) pair on a list (un: unpacks at the end; pk: a
   persistent call's packs, redone at every start) */
static int remember(vcmpi_stage_t *s, vcmpi_unpack_t **list, int *n, int *cap, void *buf,
                    int count, MPI_Datatype dt, const vcmpi_tinfo_t *ti, char *packed)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 4;
        vcmpi_unpack_t *l = realloc(*list, (size_t)c * sizeof *l);
        if (!l)
            return MPI_ERR_NO_MEM;
        *list = l;
        *cap = c;
    }
    vcmpi_unpack_t *u = &(*list)[*n];
    int rc = vcmpi_stage_keep_type(s, dt, &u->dt);
    if (rc != MPI_SUCCESS)
        return rc;
    u->packed = packed;
    u->user = buf;
    u->count = count;
    u->ti = *ti;
    vcmpi_flat_hold(u->ti.flat);     /* the type may be freed before the end */
    (*n)++;
    return MPI_SUCCESS;
}

/* pack now, and for a persistent call at every start too */
static int pack_in(vcmpi_stage_t *s, const void *buf, int count, MPI_Datatype dt,
                   const vcmpi_tinfo_t *ti, char *packed)
{
    int rc = copy(0, (void *)buf, count, dt, ti, packed);
    if (rc == MPI_SUCCESS && s->persistent)
        rc = remember(s, &s->pk, &s->npk, &s->cappk, (void *)buf, count, dt, ti, packed);
    return rc;
}

int vcmpi_stage_repack(vcmpi_stage_t *s)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->npk && rc == MPI_SUCCESS; i++) {
        vcmpi_unpack_t *u = &s->pk[i];
        rc = copy(0, u->user, u->count, u->dt, &u->ti, u->packed);
    }
    return rc;
}

int vcmpi_stage_unpack(vcmpi_stage_t *s)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->nun; i++) {
        vcmpi_unpack_t *u = &s->un[i];
        int r = copy(1, u->user, u->count, u->dt, &u->ti, u->packed);
        if (r != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = r;
    }
    return rc;
}

/* Every call starts one of these, most to stage nothing: set the counts
   and flags only (the arrays behind them are written before they are
   read), and finish returns at once when nothing was staged. */
void vcmpi_stage_init(vcmpi_stage_t *s, MPI_Comm comm, int nonblocking)
{
    s->comm = comm;
    s->nonblocking = nonblocking;
    s->persistent = nonblocking && vcmpi_pinit;
    s->un = s->pk = NULL;
    s->nun = s->capun = s->npk = s->cappk = s->nfree = s->ndup = 0;
    s->has_vop = s->held = 0;
    s->ninline = 0;
}

void *vcmpi_stage_alloc(vcmpi_stage_t *s, size_t bytes)
{
    /* non-blocking and persistent stages outlive the wrapper's frame (they
       are copied into the request), so only blocking ones use inline_buf */
    size_t need = (bytes + 15) & ~(size_t)15;
    if (!s->nonblocking && bytes <= VCMPI_STAGE_INLINE &&
        need <= VCMPI_STAGE_INLINE - s->ninline) {
        void *p = s->inline_buf + s->ninline;
        s->ninline += need;
        return p;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (p && add_free(s, p))
        p = NULL;
    return p;
}

int vcmpi_stage_src(vcmpi_stage_t *s, const void *buf, int count, MPI_Datatype dt,
                    const vcmpi_tinfo_t *ti, const void **out)
{
    if (ti->contig || count == 0) {
        *out = (const char *)buf + ti->true_lb;
        return MPI_SUCCESS;
    }
    char *p = vcmpi_stage_alloc(s, (size_t)count * ti->size);
    if (!p)
        return MPI_ERR_NO_MEM;
    *out = p;
    return pack_in(s, buf, count, dt, ti, p);
}

/* the datatype must outlive a non-blocking call: MPI lets the program free
   it right after starting one; one dup per original */
int vcmpi_stage_keep_type(vcmpi_stage_t *s, MPI_Datatype dt, MPI_Datatype *kept)
{
    int ni, na, nd, comb;
    *kept = dt;
    if (!s->nonblocking || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED)
        return MPI_SUCCESS;
    for (int i = 0; i < s->ndup; i++)
        if (s->dup_of[i] == dt) {
            *kept = s->dup[i];
            return MPI_SUCCESS;
        }
    if (s->ndup == VCMPI_STAGE_DUPS)
        return MPI_ERR_INTERN;
    int rc = PMPI_Type_dup(dt, kept);
    if (rc == MPI_SUCCESS) {
        s->dup_of[s->ndup] = dt;
        s->dup[s->ndup++] = *kept;
    }
    return rc;
}

int vcmpi_stage_dst(vcmpi_stage_t *s, void *buf, int count, MPI_Datatype dt,
                    const vcmpi_tinfo_t *ti, int load, char *packed)
{
    int rc = load ? pack_in(s, buf, count, dt, ti, packed) : MPI_SUCCESS;
    return rc != MPI_SUCCESS ? rc
                             : remember(s, &s->un, &s->nun, &s->capun, buf, count, dt, ti,
                                        packed);
}

int vcmpi_stage_dst1(vcmpi_stage_t *s, void *buf, int count, MPI_Datatype dt,
                     const vcmpi_tinfo_t *ti, int load, void **out)
{
    if (ti->contig || count == 0) {
        *out = (char *)buf + ti->true_lb;
        return MPI_SUCCESS;
    }
    char *p = vcmpi_stage_alloc(s, (size_t)count * ti->size);
    if (!p)
        return MPI_ERR_NO_MEM;
    *out = p;
    return vcmpi_stage_dst(s, buf, count, dt, ti, load, p);
}

/* One vector side of n blocks: byte counts and displacements (into *v,
 * counts then displacements), the data where it lies when contiguous, else
 * a packed temporary (input: packed now; output: unpacked at the end;
 * both: in place). */
int vcmpi_stage_vec(vcmpi_stage_t *s, int n, const void *buf, const int *cnt,
                    const int *dsp, MPI_Datatype dt, int in, int out, void **vbuf,
                    size_t *v)
{
    vcmpi_tinfo_t ti;
    int err = 0;
    if (vcmpi_tinfo(dt, &ti))
        return MPI_ERR_TYPE;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (cnt[i] < 0)
            return MPI_ERR_COUNT;
        v[i] = (size_t)cnt[i] * ti.size;
        v[n + i] = ti.contig ? (size_t)((MPI_Aint)dsp[i] * ti.extent) : total;
        total += v[i];
    }
    if (ti.contig) {
        *vbuf = (char *)buf + ti.true_lb;
        return MPI_SUCCESS;
    }
    char *p = vcmpi_stage_alloc(s, total);
    if (!p)
        return MPI_ERR_NO_MEM;
    *vbuf = p;
    for (int i = 0; i < n && !err; i++) {
        char *user = (char *)buf + (MPI_Aint)dsp[i] * ti.extent;
        err = out ? vcmpi_stage_dst(s, user, cnt[i], dt, &ti, in, p + v[n + i])
                  : pack_in(s, user, cnt[i], dt, &ti, p + v[n + i]);
    }
    return err;
}

int vcmpi_stage_finish(vcmpi_stage_t *s, int ok)
{
    if (!vcmpi_stage_busy(s))
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->nun; i++) {
        vcmpi_unpack_t *u = &s->un[i];
        int r = ok ? copy(1, u->user, u->count, u->dt, &u->ti, u->packed) : MPI_SUCCESS;
        if (r != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = r;
        vcmpi_flat_drop(u->ti.flat);
    }
    for (int i = 0; i < s->npk; i++)
        vcmpi_flat_drop(s->pk[i].ti.flat);
    free(s->pk);
    s->pk = NULL;
    s->npk = s->cappk = 0;
    if (s->has_vop)
        vc_op_free(&s->vop);
    s->has_vop = 0;
    if (s->held)
        vcmpi_op_release(s->held_op);
    s->held = 0;
    for (int i = 0; i < s->ndup; i++)
        PMPI_Type_free(&s->dup[i]);
    for (int i = 0; i < s->nfree; i++)
        free(s->frees[i]);
    free(s->un);
    s->un = NULL;
    s->nun = s->capun = s->nfree = s->ndup = 0;
    return rc;
}
