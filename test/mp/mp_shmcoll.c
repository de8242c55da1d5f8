/*
 * mp_shmcoll.c -- reduce, allreduce and barrier through shared segments
 * (the "shm" algorithms), run under mpirun on one node, any np.
 *
 * Every result is compared with a reference computed here by plain loops,
 * combining the members' inputs left to right in comm rank order (what the
 * segment reduction promises, so even a non-commutative user op and
 * non-integer double sums must match bit for bit). Counts cover 0, 1,
 * fewer elements than members, and windows of the segment's 64 KiB chunk
 * plus and minus one element and several chunks plus a remainder; out of
 * place and in place; roots first, last and in between; on the world, a
 * dup, and two splits (one with its members in reverse world order).
 *
 * With VCOLL_ALLREDUCE_ALG=shm / VCOLL_REDUCE_ALG=shm / VCOLL_BARRIER_ALG=shm
 * every call must have gone through a segment where one applies (the
 * library's per-communicator counter says so), so the test cannot pass on
 * another algorithm: on one node whenever the communicator has two or more
 * members; on emulated nodes (test/verbs/nodes.list; the node is the host
 * name) when my node holds two or more of its members, and for the
 * non-commutative op only if every node holds consecutive ranks. Over
 * several nodes the leaders combine node results in a tree, so only the
 * exact types are compared bit for bit there. With VCOLL_SHM_COLL_MAX too
 * small for any segment, none may have (the cap is enforced) and results
 * must still be right. With VCOLL_REDUCE_ALG=flags on one node, every
 * reduce of a built-in op on the world that fits a flag slot's line must
 * have gone through the slots (the same counter), folded in rank order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mp_util.h"
#include "coll/coll.h"
#include "net/net.h"

static int forced[3];   /* allreduce, reduce, barrier forced to shm */
static int rflags;      /* reduce forced to flags, the job on one node */
static int capped;      /* VCOLL_SHM_COLL_MAX below one segment */
static int quick;       /* MP_QUICK=1 (the TCG guest): windows up to two */

/* where the current communicator's members live, from their host names */
static struct {
    int nnodes, mates, blocked;     /* mates: members on my node, me included */
} where;

static void find_nodes(vc_comm_t comm)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    char (*h)[64] = calloc((size_t)p, 64), mine[64] = "";
    gethostname(mine, sizeof mine - 1);
    OK(vc_allgather(mine, h, 64, VC_BYTE, comm));
    where.nnodes = 0;
    where.mates = 0;
    where.blocked = 1;
    for (int r = 0; r < p; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            if (!strcmp(h[q], h[r])) {
                first = 0;
                /* a member of an earlier node after another node began */
                if (strcmp(h[r - 1], h[r]))
                    where.blocked = 0;
            }
        where.nnodes += first;
        where.mates += !strcmp(h[r], mine);
    }
    free(h);
}

typedef struct { int32_t a, b; } aff_t;     /* x -> a x + b (mod 2^32) */

/* (l op r)(x) = l(r(x)): associative, not commutative */
static aff_t aff_compose(aff_t l, aff_t r)
{
    aff_t o = {(int32_t)((uint32_t)l.a * (uint32_t)r.a),
               (int32_t)((uint32_t)l.a * (uint32_t)r.b + (uint32_t)l.b)};
    return o;
}

/* vc_user_fn: inout = in op inout */
static void aff_fn(const void *in, void *inout, size_t n, vc_dtype_t dt)
{
    const aff_t *x = in;
    aff_t *y = inout;
    (void)dt;
    for (size_t i = 0; i < n; i++)
        y[i] = aff_compose(x[i], y[i]);
}

enum { T_I32_SUM, T_DBL_SUM, T_DBL_FRAC, T_I64_MAX, T_U16_BXOR, T_AFF, T_N };
static const char *const tname[T_N] = {"int32 sum", "double sum", "double sum (fractions)",
                                       "int64 max", "uint16 bxor", "user affine"};
static const size_t tsize[T_N] = {4, 8, 8, 8, 2, 8};
static vc_op_t aff_op;

static uint32_t mix(int r, size_t i, int salt)
{
    uint32_t h = (uint32_t)r * 2654435761u ^ (uint32_t)i * 40503u ^ (uint32_t)salt * 97u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    return h ^ (h >> 15);
}

/* member r's element i, written to dst */
static void input(int t, int r, size_t i, int salt, void *dst)
{
    uint32_t h = mix(r, i, salt);
    switch (t) {
    case T_I32_SUM: { int32_t v = (int32_t)(h % 2001) - 1000; memcpy(dst, &v, 4); break; }
    case T_DBL_SUM: { double v = (double)(h % 2001) - 1000; memcpy(dst, &v, 8); break; }
    case T_DBL_FRAC: { double v = ((double)(h % 100003) - 50000) / 7.0; memcpy(dst, &v, 8); break; }
    case T_I64_MAX: { int64_t v = (int64_t)h * 1000003 - ((int64_t)1 << 40); memcpy(dst, &v, 8); break; }
    case T_U16_BXOR: { uint16_t v = (uint16_t)h; memcpy(dst, &v, 2); break; }
    case T_AFF: { aff_t v = {(int32_t)(h | 1), (int32_t)(h >> 7)}; memcpy(dst, &v, 8); break; }
    }
}

/* acc = acc op x, element-wise for one element */
static void combine(int t, void *acc, const void *x)
{
    switch (t) {
    case T_I32_SUM: { int32_t a, b; memcpy(&a, acc, 4); memcpy(&b, x, 4); a += b; memcpy(acc, &a, 4); break; }
    case T_DBL_SUM:
    case T_DBL_FRAC: { double a, b; memcpy(&a, acc, 8); memcpy(&b, x, 8); a += b; memcpy(acc, &a, 8); break; }
    case T_I64_MAX: { int64_t a, b; memcpy(&a, acc, 8); memcpy(&b, x, 8); if (b > a) a = b; memcpy(acc, &a, 8); break; }
    case T_U16_BXOR: { uint16_t a, b; memcpy(&a, acc, 2); memcpy(&b, x, 2); a ^= b; memcpy(acc, &a, 2); break; }
    case T_AFF: { aff_t a, b; memcpy(&a, acc, 8); memcpy(&b, x, 8); a = aff_compose(a, b); memcpy(acc, &a, 8); break; }
    }
}

static void type_of(int t, vc_dtype_t *dt, vc_op_t *op)
{
    static const vc_dtype_t dts[T_N] = {VC_INT32, VC_DOUBLE, VC_DOUBLE, VC_INT64, VC_UINT16,
                                        VC_INT32_INT};
    static const vc_op_t ops[T_N] = {VC_SUM, VC_SUM, VC_SUM, VC_MAX, VC_BXOR, VC_SUM};
    *dt = dts[t];
    *op = t == T_AFF ? aff_op : ops[t];
}

/* the reference: x0 op x1 op ... op x(p-1), left to right */
static void reference(int t, int p, size_t count, int salt, uint8_t *ref)
{
    size_t es = tsize[t];
    uint8_t x[16];
    for (size_t i = 0; i < count; i++) {
        input(t, 0, i, salt, ref + i * es);
        for (int r = 1; r < p; r++) {
            input(t, r, i, salt, x);
            combine(t, ref + i * es, x);
        }
    }
}

/* did the call run through a segment (or not, under the cap)? */
static void check_path(vc_comm_t comm, int kind, int which, uint64_t before, int noncomm,
                       size_t count, const char *what)
{
    uint64_t after = coll_shm_calls(comm, kind);
    int applies = where.mates > 1 && (!noncomm || where.nnodes == 1 || where.blocked);
    if (count == 0 && kind != COLL_BARRIER) {
        /* nothing to move: the blocking call returns at once on every rank */
        if (after != before)
            FAIL("%s: ran through a segment with nothing to move", what);
    } else if (capped && after != before)
        FAIL("%s: went through a segment although VCOLL_SHM_COLL_MAX leaves no room", what);
    else if (!capped && forced[which] && applies && after != before + 1)
        FAIL("%s: forced to shm but did not run through a segment (%llu -> %llu)", what,
             (unsigned long long)before, (unsigned long long)after);
}

static void compare(const uint8_t *got, const uint8_t *ref, size_t count, size_t es,
                    const char *what)
{
    for (size_t i = 0; i < count; i++)
        if (memcmp(got + i * es, ref + i * es, es)) {
            FAIL("%s: element %zu of %zu differs from the rank-order reference", what, i, count);
            return;
        }
}

static void one(vc_comm_t comm, const char *cname, int t, size_t count, int salt)
{
    int me, p;
    vc_comm_rank(comm, &me);
    vc_comm_size(comm, &p);
    /* fractional sums depend on the order: only the one-node segment's
       is known */
    if (t == T_DBL_FRAC && (!forced[0] || !forced[1] || capped || where.nnodes > 1))
        return;
    size_t es = tsize[t], bytes = count * es + 1;
    uint8_t *in = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes);
    vc_dtype_t dt;
    vc_op_t op;
    char what[160];
    type_of(t, &dt, &op);
    for (size_t i = 0; i < count; i++)
        input(t, me, i, salt, in + i * es);
    reference(t, p, count, salt, ref);

    for (int inplace = 0; inplace < 2; inplace++) {
        /* a one-chunk segment bcast between reductions leaves the root's
           ring at an odd chunk: the reductions must cope */
        uint8_t b[100];
        for (int i = 0; i < 100; i++)
            b[i] = me == inplace % p ? (uint8_t)(i * 7 + salt) : 0;
        OK(vc_bcast(b, sizeof b, VC_BYTE, inplace % p, comm));
        for (int i = 0; i < 100; i++)
            if (b[i] != (uint8_t)(i * 7 + salt)) {
                FAIL("bcast between reductions on %s: byte %d", cname, i);
                break;
            }
        snprintf(what, sizeof what, "allreduce %s on %s, count %zu%s", tname[t], cname, count,
                 inplace ? ", in place" : "");
        memset(out, 0xa5, bytes);
        if (inplace)
            memcpy(out, in, count * es);
        uint64_t c0 = coll_shm_calls(comm, COLL_ALLREDUCE);
        OK(vc_allreduce(inplace ? VC_IN_PLACE : in, out, count, dt, op, comm));
        check_path(comm, COLL_ALLREDUCE, 0, c0, t == T_AFF, count, what);
        compare(out, ref, count, es, what);
        if (out[count * es] != 0xa5)
            FAIL("%s: wrote past the end", what);

        int roots[3] = {0, p - 1, p / 2};
        for (int k = 0; k < 3; k++) {
            int root = roots[k];
            if (k && (root == roots[0] || (k == 2 && root == roots[1])))
                continue;
            snprintf(what, sizeof what, "reduce %s on %s to %d, count %zu%s", tname[t], cname,
                     root, count, inplace ? ", in place" : "");
            memset(out, 0xa5, bytes);
            int ip = inplace && me == root;
            if (ip)
                memcpy(out, in, count * es);
            c0 = coll_shm_calls(comm, COLL_REDUCE);
            OK(vc_reduce(ip ? VC_IN_PLACE : in, out, count, dt, op, root, comm));
            check_path(comm, COLL_REDUCE, 1, c0, t == T_AFF, count, what);
            /* the slots take the world's built-in ops up to a line (a
               fallback at these sizes counts nothing: linear, binomial) */
            if (rflags && comm == VC_COMM_WORLD && p > 1 && t != T_AFF && count > 0 &&
                count * es <= NET_SHM_SLOT_BYTES - 8 &&
                coll_shm_calls(comm, COLL_REDUCE) != c0 + 1)
                FAIL("%s: forced to flags but did not run through the slots", what);
            if (me == root)
                compare(out, ref, count, es, what);
            else if (out[0] != 0xa5 || out[count * es] != 0xa5)
                FAIL("%s: a non-root's receive buffer was written", what);
            if (out[count * es] != 0xa5)
                FAIL("%s: wrote past the end", what);
        }
    }
    free(in);
    free(out);
    free(ref);
}

static void suite(vc_comm_t comm, const char *cname)
{
    int p;
    vc_comm_size(comm, &p);
    find_nodes(comm);
    for (int t = 0; t < T_N; t++) {
        /* elements per 64 KiB window, then around and past it */
        size_t wc = 65536 / tsize[t];
        size_t counts[] = {0, 1, 2, 3, (size_t)p - 1, (size_t)p + 1, 17, 1000,
                           wc - 1, wc, wc + 1, 2 * wc + (size_t)p, 5 * wc + 3};
        int big = t == T_I32_SUM || t == T_DBL_FRAC || t == T_AFF;
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            if ((!big || quick) && counts[k] > (quick ? 2 * wc + (size_t)p : wc + 1))
                continue;
            one(comm, cname, t, counts[k], (int)(t * 31 + k));
        }
    }
    for (int i = 0; i < 10; i++) {
        uint64_t c0 = coll_shm_calls(comm, COLL_BARRIER);
        char what[96];
        snprintf(what, sizeof what, "barrier %d on %s", i, cname);
        OK(vc_barrier(comm));
        /* the world's one-node flag barrier is its own variant (auto only) */
        check_path(comm, COLL_BARRIER, 2, c0, 0, 0, what);
    }
}

static int is_shm(const char *var)
{
    const char *v = getenv(var);
    return v && !strcmp(v, "shm");
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    forced[0] = is_shm("VCOLL_ALLREDUCE_ALG");
    forced[1] = is_shm("VCOLL_REDUCE_ALG");
    forced[2] = is_shm("VCOLL_BARRIER_ALG");
    rflags = mp_forced_on_one_node("VCOLL_REDUCE_ALG", "flags");
    quick = getenv("MP_QUICK") && atoi(getenv("MP_QUICK"));
    const char *cap = getenv("VCOLL_SHM_COLL_MAX");
    /* a plain byte count below the smallest segment (2 members) */
    capped = cap && strspn(cap, "0123456789") == strlen(cap) &&
             strtoull(cap, NULL, 10) < coll_shmseg_bytes(2);
    OK(vc_op_create(aff_fn, 0, &aff_op));

    vc_comm_t dup, par, half;
    OK(vc_comm_dup(VC_COMM_WORLD, &dup));
    /* parity classes, members in reverse world order */
    OK(vc_comm_split(VC_COMM_WORLD, mp_rank % 2, -mp_rank, &par));
    OK(vc_comm_split(VC_COMM_WORLD, mp_rank < (mp_size + 1) / 2, mp_rank, &half));

    suite(VC_COMM_WORLD, "world");
    if (!quick)
        suite(dup, "dup");
    suite(par, "parity split (reversed)");
    if (!quick)
        suite(half, "halves split");

    OK(vc_comm_free(&par));
    OK(vc_comm_free(&half));
    /* the dup's segments stay usable after other communicators went */
    find_nodes(dup);
    one(dup, "dup after frees", T_AFF, 3 * 8192 + 5, 7);
    OK(vc_comm_free(&dup));
    OK(vc_op_free(&aff_op));

    int bad = mp_fails ? 1 : 0, any = 0;
    vc_allreduce(&bad, &any, 1, VC_INT32, VC_MAX, VC_COMM_WORLD);
    if (mp_rank == 0 && !any)
        printf("mp_shmcoll: OK (np=%d%s%s%s%s)\n", mp_size, forced[0] ? ", allreduce shm" : "",
               forced[1] ? ", reduce shm" : "", forced[2] ? ", barrier shm" : "",
               capped ? ", capped" : "");
    vc_finalize();
    return mp_fails ? 1 : 0;
}
