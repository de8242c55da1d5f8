/*
 * mpi_coll.c -- a plain MPI program that checks every collective the vcoll
 * drop-in intercepts, blocking and non-blocking, in place and not, on
 * MPI_COMM_WORLD, a dup, a split (reversed order) and a created
 * sub-communicator, against values computed here with plain loops. Run
 * with and without LD_PRELOAD=libvcoll_mpi_<mpi>.so: the answers must be
 * the same. Also: a derived datatype and a user op (fall back), an error
 * raised through MPI_ERRORS_RETURN, and every MPI wait/test flavour.
 * Exit status 0 = all checks passed on this rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, fails, nb, wait_kind;
static const char *where;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            if (fails++ < 20) {                                               \
                fprintf(stderr, "rank %d: %s%s: ", wrank, where, nb ? " (nb)" : ""); \
                fprintf(stderr, __VA_ARGS__);                                 \
                fputc('\n', stderr);                                          \
            }                                                                 \
        }                                                                     \
    } while (0)

static int val(int r, int i) { return r * 1000 + i + 1; }

/* complete a non-blocking call with a different MPI call each time */
static void finish(MPI_Request *req)
{
    int flag = 0, idx, out, one[1];
    MPI_Status st;
    switch (wait_kind++ % 6) {
    case 0: MPI_Wait(req, &st); break;
    case 1: while (!flag) MPI_Test(req, &flag, MPI_STATUS_IGNORE); break;
    case 2: MPI_Waitall(1, req, MPI_STATUSES_IGNORE); break;
    case 3: MPI_Waitany(1, req, &idx, &st); CHECK(idx == 0, "waitany index %d", idx); break;
    case 4: MPI_Waitsome(1, req, &out, one, MPI_STATUSES_IGNORE);
            CHECK(out == 1, "waitsome count %d", out); break;
    default: while (!flag) MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE); break;
    }
    CHECK(*req == MPI_REQUEST_NULL, "request not freed");
}

/* run blocking call B or non-blocking call I then finish it */
#define RUN(B, I)                                                              \
    do {                                                                       \
        if (nb) {                                                              \
            MPI_Request req_;                                                  \
            I;                                                                 \
            finish(&req_);                                                     \
        } else {                                                               \
            B;                                                                 \
        }                                                                      \
    } while (0)

static int *ints(size_t n, int fill)
{
    int *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = fill;
    return v;
}

static void t_bcast_reduce(MPI_Comm c, int p, int r, int n)
{
    int root = p - 1, *a = ints(n, -1), *b = ints(n, -1);
    where = "bcast";
    for (int i = 0; i < n; i++)
        a[i] = r == root ? val(root, i) : -1;
    RUN(MPI_Bcast(a, n, MPI_INT, root, c), MPI_Ibcast(a, n, MPI_INT, root, c, &req_));
    for (int i = 0; i < n; i++)
        CHECK(a[i] == val(root, i), "[%d] = %d, want %d", i, a[i], val(root, i));

    for (int inplace = 0; inplace < 2; inplace++) {
        where = inplace ? "reduce in place" : "reduce";
        for (int i = 0; i < n; i++)
            a[i] = val(r, i), b[i] = inplace && r == 0 ? val(r, i) : -1;
        const void *s = inplace && r == 0 ? MPI_IN_PLACE : a;
        RUN(MPI_Reduce(s, b, n, MPI_INT, MPI_SUM, 0, c),
            MPI_Ireduce(s, b, n, MPI_INT, MPI_SUM, 0, c, &req_));
        for (int i = 0; r == 0 && i < n; i++) {
            int want = 0;
            for (int q = 0; q < p; q++)
                want += val(q, i);
            CHECK(b[i] == want, "[%d] = %d, want %d", i, b[i], want);
        }
    }
    free(a);
    free(b);
}

static void t_allreduce(MPI_Comm c, int p, int r, int n)
{
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    int *x = ints(n, 0), *y = ints(n, 0);
    for (int inplace = 0; inplace < 2; inplace++) {
        where = inplace ? "allreduce max double in place" : "allreduce max double";
        for (int i = 0; i < n; i++)
            a[i] = (double)((r * 7 + i) % p) + 0.5, b[i] = a[i];
        const void *s = inplace ? MPI_IN_PLACE : a;
        RUN(MPI_Allreduce(s, b, n, MPI_DOUBLE, MPI_MAX, c),
            MPI_Iallreduce(s, b, n, MPI_DOUBLE, MPI_MAX, c, &req_));
        for (int i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < p; q++)
                if ((double)((q * 7 + i) % p) + 0.5 > want)
                    want = (double)((q * 7 + i) % p) + 0.5;
            CHECK(b[i] == want, "[%d] = %g, want %g", i, b[i], want);
        }
        where = inplace ? "allreduce bxor int in place" : "allreduce bxor int";
        for (int i = 0; i < n; i++)
            x[i] = val(r, i) * 2654435761u, y[i] = x[i];
        s = inplace ? MPI_IN_PLACE : x;
        RUN(MPI_Allreduce(s, y, n, MPI_INT, MPI_BXOR, c),
            MPI_Iallreduce(s, y, n, MPI_INT, MPI_BXOR, c, &req_));
        for (int i = 0; i < n; i++) {
            int want = 0;
            for (int q = 0; q < p; q++)
                want ^= (int)(val(q, i) * 2654435761u);
            CHECK(y[i] == want, "[%d] = %d, want %d", i, y[i], want);
        }
    }
    /* MINLOC on (double, int) pairs: vcoll's pair types where it has them */
    struct { double v; int i; } in[3], out[3];
    where = "allreduce minloc double_int";
    for (int i = 0; i < 3; i++)
        in[i].v = (double)((r + i) % 3), in[i].i = r;
    RUN(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MINLOC, c),
        MPI_Iallreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MINLOC, c, &req_));
    for (int i = 0; i < 3; i++) {
        double wv = 1e9;
        int wi = -1;
        for (int q = 0; q < p; q++)
            if ((double)((q + i) % 3) < wv)
                wv = (double)((q + i) % 3), wi = q;
        CHECK(out[i].v == wv && out[i].i == wi, "[%d] = (%g,%d), want (%g,%d)", i, out[i].v,
              out[i].i, wv, wi);
    }
    free(a);
    free(b);
    free(x);
    free(y);
}

static void t_gathers(MPI_Comm c, int p, int r, int n)
{
    int *s = ints(n, 0), *all = ints((size_t)p * n, -1);
    for (int inplace = 0; inplace < 2; inplace++) {
        where = inplace ? "allgather in place" : "allgather";
        for (int i = 0; i < n; i++)
            s[i] = val(r, i);
        for (int i = 0; i < p * n; i++)
            all[i] = inplace && i / n == r ? val(r, i % n) : -1;
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(MPI_Allgather(sb, n, MPI_INT, all, n, MPI_INT, c),
            MPI_Iallgather(sb, n, MPI_INT, all, n, MPI_INT, c, &req_));
        for (int i = 0; i < p * n; i++)
            CHECK(all[i] == val(i / n, i % n), "[%d] = %d, want %d", i, all[i], val(i / n, i % n));

        where = inplace ? "gather in place" : "gather";
        int root = p / 2;
        for (int i = 0; i < p * n; i++)
            all[i] = inplace && r == root && i / n == r ? val(r, i % n) : -1;
        sb = inplace && r == root ? MPI_IN_PLACE : s;
        RUN(MPI_Gather(sb, n, MPI_INT, all, n, MPI_INT, root, c),
            MPI_Igather(sb, n, MPI_INT, all, n, MPI_INT, root, c, &req_));
        for (int i = 0; r == root && i < p * n; i++)
            CHECK(all[i] == val(i / n, i % n), "[%d] = %d, want %d", i, all[i], val(i / n, i % n));

        where = inplace ? "scatter in place" : "scatter";
        for (int i = 0; i < p * n; i++)
            all[i] = r == root ? val(i / n, i % n) : -1;
        for (int i = 0; i < n; i++)
            s[i] = -1;
        void *rb = inplace && r == root ? MPI_IN_PLACE : (void *)s;
        RUN(MPI_Scatter(all, n, MPI_INT, rb, n, MPI_INT, root, c),
            MPI_Iscatter(all, n, MPI_INT, rb, n, MPI_INT, root, c, &req_));
        for (int i = 0; !(inplace && r == root) && i < n; i++)
            CHECK(s[i] == val(r, i), "[%d] = %d, want %d", i, s[i], val(r, i));
    }
    free(s);
    free(all);
}

/* rank q contributes q % 3 + 1 blocks of n, placed with a gap of one */
static void t_vgathers(MPI_Comm c, int p, int r, int n)
{
    int *cnt = ints(p, 0), *dsp = ints(p, 0), tot = 0;
    for (int q = 0; q < p; q++) {
        cnt[q] = (q % 3 + 1) * n;
        dsp[q] = tot;
        tot += cnt[q] + 1;
    }
    int *s = ints(cnt[r], 0), *all = ints(tot, -7), root = p - 1;
    for (int i = 0; i < cnt[r]; i++)
        s[i] = val(r, i);
#define CHECK_V(cond_rank)                                                     \
    for (int q = 0; (cond_rank) && q < p; q++)                                 \
        for (int i = 0; i <= cnt[q] && dsp[q] + i < tot; i++) {                \
            int want = i < cnt[q] ? val(q, i) : -7;                            \
            CHECK(all[dsp[q] + i] == want, "rank %d [%d] = %d, want %d", q, i, \
                  all[dsp[q] + i], want);                                      \
        }
    where = "gatherv";
    RUN(MPI_Gatherv(s, cnt[r], MPI_INT, all, cnt, dsp, MPI_INT, root, c),
        MPI_Igatherv(s, cnt[r], MPI_INT, all, cnt, dsp, MPI_INT, root, c, &req_));
    CHECK_V(r == root);
    where = "allgatherv";
    for (int i = 0; i < tot; i++)
        all[i] = -7;
    RUN(MPI_Allgatherv(s, cnt[r], MPI_INT, all, cnt, dsp, MPI_INT, c),
        MPI_Iallgatherv(s, cnt[r], MPI_INT, all, cnt, dsp, MPI_INT, c, &req_));
    CHECK_V(1);
    where = "allgatherv in place";
    for (int i = 0; i < tot; i++)
        all[i] = -7;
    for (int i = 0; i < cnt[r]; i++)
        all[dsp[r] + i] = val(r, i);
    RUN(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INT, all, cnt, dsp, MPI_INT, c),
        MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_INT, all, cnt, dsp, MPI_INT, c, &req_));
    CHECK_V(1);
    where = "scatterv";
    for (int i = 0; i < cnt[r]; i++)
        s[i] = -1;
    RUN(MPI_Scatterv(all, cnt, dsp, MPI_INT, s, cnt[r], MPI_INT, root, c),
        MPI_Iscatterv(all, cnt, dsp, MPI_INT, s, cnt[r], MPI_INT, root, c, &req_));
    for (int i = 0; i < cnt[r]; i++)
        CHECK(s[i] == val(r, i), "[%d] = %d, want %d", i, s[i], val(r, i));
#undef CHECK_V
    free(cnt);
    free(dsp);
    free(s);
    free(all);
}

static void t_alltoall(MPI_Comm c, int p, int r, int n)
{
    int *s = ints((size_t)p * n, 0), *d = ints((size_t)p * n, -1);
    for (int inplace = 0; inplace < 2; inplace++) {
        where = inplace ? "alltoall in place" : "alltoall";
        for (int i = 0; i < p * n; i++)
            s[i] = val(r, i), d[i] = inplace ? s[i] : -1;
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(MPI_Alltoall(sb, n, MPI_INT, d, n, MPI_INT, c),
            MPI_Ialltoall(sb, n, MPI_INT, d, n, MPI_INT, c, &req_));
        for (int q = 0; q < p; q++)
            for (int i = 0; i < n; i++)
                CHECK(d[q * n + i] == val(q, r * n + i), "from %d [%d] = %d, want %d", q, i,
                      d[q * n + i], val(q, r * n + i));
    }
    /* rank a sends (a + b) % 3 * n elements to rank b */
    int *sc = ints(p, 0), *sd = ints(p, 0), *rc = ints(p, 0), *rd = ints(p, 0), st = 0, rt = 0;
    for (int q = 0; q < p; q++) {
        sc[q] = (r + q) % 3 * n, sd[q] = st, st += sc[q];
        rc[q] = (q + r) % 3 * n, rd[q] = rt, rt += rc[q];
    }
    int *vs = ints(st, 0), *vr = ints(rt, -1);
    for (int q = 0; q < p; q++)
        for (int i = 0; i < sc[q]; i++)
            vs[sd[q] + i] = val(r, q * 100 + i);
    where = "alltoallv";
    RUN(MPI_Alltoallv(vs, sc, sd, MPI_INT, vr, rc, rd, MPI_INT, c),
        MPI_Ialltoallv(vs, sc, sd, MPI_INT, vr, rc, rd, MPI_INT, c, &req_));
    for (int q = 0; q < p; q++)
        for (int i = 0; i < rc[q]; i++)
            CHECK(vr[rd[q] + i] == val(q, r * 100 + i), "from %d [%d] = %d, want %d", q, i,
                  vr[rd[q] + i], val(q, r * 100 + i));
    free(s), free(d), free(sc), free(sd), free(rc), free(rd), free(vs), free(vr);
}

static void t_scans(MPI_Comm c, int p, int r, int n)
{
    int *s = ints((size_t)p * n, 0), *d = ints((size_t)p * n, -1), *cnt = ints(p, 0);
    where = "reduce_scatter_block";
    for (int i = 0; i < p * n; i++)
        s[i] = val(r, i);
    RUN(MPI_Reduce_scatter_block(s, d, n, MPI_INT, MPI_SUM, c),
        MPI_Ireduce_scatter_block(s, d, n, MPI_INT, MPI_SUM, c, &req_));
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want += val(q, r * n + i);
        CHECK(d[i] == want, "[%d] = %d, want %d", i, d[i], want);
    }
    where = "reduce_scatter";
    int off = 0, tot = 0;
    for (int q = 0; q < p; q++) {
        cnt[q] = q % 2 ? n : 1;
        if (q < r)
            off += cnt[q];
        tot += cnt[q];
    }
    RUN(MPI_Reduce_scatter(s, d, cnt, MPI_INT, MPI_SUM, c),
        MPI_Ireduce_scatter(s, d, cnt, MPI_INT, MPI_SUM, c, &req_));
    for (int i = 0; i < cnt[r]; i++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want += val(q, off + i);
        CHECK(d[i] == want, "[%d] = %d, want %d", i, d[i], want);
    }
    (void)tot;
    for (int ex = 0; ex < 2; ex++) {
        where = ex ? "exscan" : "scan";
        for (int i = 0; i < n; i++)
            s[i] = val(r, i), d[i] = -5;
        if (ex)
            RUN(MPI_Exscan(s, d, n, MPI_INT, MPI_SUM, c),
                MPI_Iexscan(s, d, n, MPI_INT, MPI_SUM, c, &req_));
        else
            RUN(MPI_Scan(s, d, n, MPI_INT, MPI_SUM, c),
                MPI_Iscan(s, d, n, MPI_INT, MPI_SUM, c, &req_));
        for (int i = 0; i < n && !(ex && r == 0); i++) {
            int want = 0;
            for (int q = 0; q < r + !ex; q++)
                want += val(q, i);
            CHECK(d[i] == want, "[%d] = %d, want %d", i, d[i], want);
        }
    }
    free(s), free(d), free(cnt);
}

static void add_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* what the drop-in must leave to MPI, and errors it must report as MPI's */
static void t_fallbacks(MPI_Comm c, int p, int r)
{
    MPI_Datatype vec;
    int a[8], root = 0;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    where = "bcast of a strided type";
    for (int i = 0; i < 8; i++)
        a[i] = r == root ? val(root, i) : -1;
    RUN(MPI_Bcast(a, 1, vec, root, c), MPI_Ibcast(a, 1, vec, root, c, &req_));
    for (int i = 0; i < 8; i++)
        CHECK(a[i] == (i % 2 == 0 || r == root ? val(root, i) : -1), "[%d] = %d", i, a[i]);
    MPI_Type_free(&vec);

    MPI_Op op;
    int x = r + 1, y = 0;
    MPI_Op_create(add_fn, 1, &op);
    where = "allreduce with a user op";
    RUN(MPI_Allreduce(&x, &y, 1, MPI_INT, op, c),
        MPI_Iallreduce(&x, &y, 1, MPI_INT, op, c, &req_));
    CHECK(y == p * (p + 1) / 2, "%d, want %d", y, p * (p + 1) / 2);
    MPI_Op_free(&op);

    if (!nb) {
        where = "bcast with a root out of range, MPI_ERRORS_RETURN";
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        int err = MPI_Bcast(a, 1, MPI_INT, p, c), cls = MPI_SUCCESS;
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_ROOT, "error class %d, want MPI_ERR_ROOT (%d)", cls, MPI_ERR_ROOT);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
    }
}

static void suite(MPI_Comm c, const char *name)
{
    int p, r;
    MPI_Comm_size(c, &p);
    MPI_Comm_rank(c, &r);
    for (nb = 0; nb < 2; nb++) {
        where = "barrier";
        RUN(MPI_Barrier(c), MPI_Ibarrier(c, &req_));
        int counts[] = {1, 7, 1500};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            t_bcast_reduce(c, p, r, counts[k]);
            t_allreduce(c, p, r, counts[k]);
            t_gathers(c, p, r, counts[k]);
            t_vgathers(c, p, r, counts[k]);
            t_alltoall(c, p, r, counts[k]);
            t_scans(c, p, r, counts[k]);
        }
        t_fallbacks(c, p, r);
    }
    /* two non-blocking collectives in flight at once, completed together */
    int a = r, b = r == 0 ? 42 : -1, sum = 0;
    MPI_Request two[2];
    MPI_Iallreduce(&a, &sum, 1, MPI_INT, MPI_SUM, c, &two[0]);
    MPI_Ibcast(&b, 1, MPI_INT, 0, c, &two[1]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    where = "two in flight";
    CHECK(sum == p * (p - 1) / 2 && b == 42, "sum %d, bcast %d", sum, b);
    (void)name;
}

int main(int argc, char **argv)
{
    int provided, p;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    suite(MPI_COMM_WORLD, "world");
    MPI_Comm dup, split, made;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    suite(dup, "dup");
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &split);
    suite(split, "split");
    /* the first half, made with MPI_Comm_create: the rest get MPI_COMM_NULL
       and run nothing while the half uses it */
    MPI_Group wg, half;
    int range[1][3] = {{0, (p - 1) / 2, 1}};
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_range_incl(wg, 1, range, &half);
    MPI_Comm_create(MPI_COMM_WORLD, half, &made);
    if (made != MPI_COMM_NULL) {
        suite(made, "create");
        MPI_Comm_free(&made);
    }
    MPI_Group_free(&half);
    MPI_Group_free(&wg);
    /* freed while a dup of it lives on: the dup must still work */
    MPI_Comm dup2;
    MPI_Comm_dup(split, &dup2);
    MPI_Comm_free(&split);
    suite(dup2, "dup of a freed split");
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("mpi_coll: %d ranks, %s\n", p, all ? "FAILED" : "all checks passed");
    MPI_Finalize();
    return fails ? 1 : 0;
}
