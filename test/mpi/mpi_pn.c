/*
 * mpi_pn.c -- persistent and neighbourhood collectives, a plain MPI program
 * (MPI-4; Open MPI 4.1 spells the persistent calls MPIX_*_init) that must
 * give the same answers with the drop-in preloaded as without it.
 *
 * Persistent: an allreduce started five times with its input changed in
 * between, completed by MPI_Wait, by polling MPI_Test, by polling
 * MPI_Request_get_status then MPI_Wait; a broadcast whose root sends a
 * strided type the others receive contiguously (the drop-in packs again at
 * every start); two requests started in opposite orders on even and odd
 * ranks and completed in one MPI_Waitall with point-to-point requests mixed
 * in; MPI_Startall with MPI_Waitall, MPI_Request_get_status polling,
 * MPI_Waitany over inactive requests; MPI_Request_free of an inactive
 * request; a persistent call that falls back to the MPI (a communicator the
 * drop-in did not see made). Neighbourhood: a 2-D periodic grid
 * (MPI_Dims_create) and its dup, a 1-D non-periodic grid (MPI_PROC_NULL
 * edges), a distributed graph with every edge listed twice, a symmetric
 * MPI_Graph_create ring; allgather(v), alltoall(v), blocking, non-blocking
 * and persistent. Every result is checked against values
 * computed here. Prints "pn: all checks passed" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if defined(MPICH) && MPI_VERSION >= 4
#define PINIT(n) MPI_##n##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PINIT(n) MPIX_##n##_init
#endif

static int rank, size, errs;
/* MPI-4 fixed the pairing when a dimension's two neighbours are one rank
   (2 ranks, periodic) or oneself (1 rank, periodic); Open MPI 4.1's
   non-blocking form pairs them the old way. PN_STRICT=1 (the drop-in's
   runs) checks MPI-4's rule there too; otherwise only unambiguous blocks. */
static int strict;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "rank %d: ", rank);                                 \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, " (line %d)\n", __LINE__);                          \
            errs++;                                                             \
        }                                                                       \
    } while (0)

static int val(int src, int blk, int it, int i)
{
    return src * 100003 + blk * 1009 + it * 31 + i;
}

#ifdef PINIT
static void persistent(void)
{
    MPI_Request r[4];
    int in[8], out[8];
    /* allreduce, five starts, new input each time */
    PINIT(Allreduce)(in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < 8; i++)
            in[i] = val(rank, 0, it, i);
        MPI_Start(&r[0]);
        int done = 0;
        if (it % 3 == 0) {              /* completed by a wait */
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        } else if (it % 3 == 1) {       /* by polling tests */
            while (!done)
                MPI_Test(&r[0], &done, MPI_STATUS_IGNORE);
        } else {                        /* polled without completing, then waited */
            while (!done)
                MPI_Request_get_status(r[0], &done, MPI_STATUS_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
        CHECK(r[0] != MPI_REQUEST_NULL, "a completed persistent request was freed");
        for (int i = 0; i < 8; i++) {
            long long want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, 0, it, i);
            CHECK(out[i] == (int)want, "allreduce start %d [%d] = %d, expected %lld", it, i,
                  out[i], want);
        }
    }
    /* waiting on an inactive request returns at once */
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);

    /* one that falls back: on a communicator made behind the drop-in (as a
       tool's PMPI_Comm_dup makes one) the MPI's own persistent request is
       made, started, waited and freed through the drop-in's entries */
    MPI_Comm behind;
    MPI_Request pr;
    PMPI_Comm_dup(MPI_COMM_WORLD, &behind);
    int rc = PINIT(Allreduce)(in, out, 8, MPI_INT, MPI_MAX, behind, MPI_INFO_NULL, &pr);
    CHECK(rc == MPI_SUCCESS, "persistent allreduce on a communicator made by PMPI_Comm_dup: "
          "error %d", rc);
    for (int it = 0; rc == MPI_SUCCESS && it < 2; it++) {
        for (int i = 0; i < 8; i++)
            in[i] = val(rank, 2, it, i);
        MPI_Start(&pr);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        for (int i = 0; i < 8; i++)
            CHECK(out[i] == val(size - 1, 2, it, i), "fallen-back allreduce start %d [%d] = %d",
                  it, i, out[i]);
    }
    if (rc == MPI_SUCCESS)
        MPI_Request_free(&pr);
    PMPI_Comm_free(&behind);

    /* bcast: the root's strided layout, everyone else's contiguous one */
    MPI_Datatype strided;
    int wide[8], narrow[4];
    MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    if (rank == 0)
        PINIT(Bcast)(wide, 1, strided, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    else
        PINIT(Bcast)(narrow, 4, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    if (strict)     /* legal, but Open MPI 4.1's MPIX_Bcast_init then crashes */
        MPI_Type_free(&strided);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 8; i++)
            wide[i] = rank == 0 ? val(0, 1, it, i) : -1;
        memset(narrow, 0xff, sizeof narrow);
        MPI_Start(&r[1]);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        for (int i = 0; rank && i < 4; i++)
            CHECK(narrow[i] == val(0, 1, it, 2 * i), "bcast start %d [%d] = %d", it, i,
                  narrow[i]);
    }

    /* two requests started in opposite orders, completed with p2p ones */
    int a[2], b[2], sa = rank + 1, sb = 2 * rank, tok = rank, got = -1;
    PINIT(Allreduce)(&sa, &a[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    PINIT(Allreduce)(&sb, &b[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    for (int it = 0; it < 3; it++) {
        MPI_Request mix[4];
        if (rank % 2) {
            MPI_Start(&r[3]);
            MPI_Start(&r[2]);
        } else {
            MPI_Start(&r[2]);
            MPI_Start(&r[3]);
        }
        MPI_Irecv(&got, 1, MPI_INT, (rank - 1 + size) % size, 7, MPI_COMM_WORLD, &mix[0]);
        MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &mix[1]);
        mix[2] = r[2];
        mix[3] = r[3];
        MPI_Waitall(4, mix, MPI_STATUSES_IGNORE);
        CHECK(mix[2] == r[2] && mix[3] == r[3], "Waitall changed a persistent handle");
        CHECK(a[0] == size * (size + 1) / 2, "opposite-order sum %d", a[0]);
        CHECK(b[0] == 2 * (size - 1), "opposite-order max %d", b[0]);
        CHECK(got == (rank - 1 + size) % size, "p2p in the mixed array: %d", got);
    }
    /* Startall + Waitall (MPICH 4.0.2's own Testall fails on persistent
       collectives); then get_status polling; then Waitany */
    int flag = 0;
    MPI_Startall(2, &r[2]);
    MPI_Waitall(2, &r[2], MPI_STATUSES_IGNORE);
    CHECK(a[0] == size * (size + 1) / 2 && b[0] == 2 * (size - 1), "Startall results");
    sa = 1;
    MPI_Start(&r[2]);
    for (flag = 0; !flag;)
        MPI_Request_get_status(r[2], &flag, MPI_STATUS_IGNORE);
    MPI_Wait(&r[2], MPI_STATUS_IGNORE);
    CHECK(a[0] == size, "get_status then wait: %d", a[0]);
    /* MPI_Waitany skips inactive requests (MPICH 4.0.2's own does not for
       persistent collectives: checked under PN_STRICT only) */
    int idx = -2;
    MPI_Start(&r[3]);
    MPI_Waitany(2, &r[2], &idx, MPI_STATUS_IGNORE);     /* r[2] is inactive */
    CHECK(idx == 1 || !strict, "Waitany over an inactive and an active request: index %d",
          idx);
    if (idx != 1)
        MPI_Wait(&r[3], MPI_STATUS_IGNORE);
    MPI_Waitany(2, &r[2], &idx, MPI_STATUS_IGNORE);     /* both inactive */
    CHECK(idx == MPI_UNDEFINED || !strict, "Waitany over inactive requests: index %d", idx);
    for (int i = 0; i < 4; i++) {
        MPI_Request_free(&r[i]);
        CHECK(r[i] == MPI_REQUEST_NULL, "MPI_Request_free left a handle");
    }
    if (!strict)
        MPI_Type_free(&strided);
}
#endif

/* alltoall over comm with in/out neighbours src/dst; exp(j) = the sender
   and block that must land in block j (-1: none, left untouched) */
typedef void (*pair_fn)(int j, int *from, int *blk);

static void check_a2a(const char *what, MPI_Comm comm, int in, int out, pair_fn pair, int n)
{
    int *s = malloc(sizeof(int) * (size_t)(out * n + 1));
    int *r = malloc(sizeof(int) * (size_t)(in * n + 1));
    for (int form = 0; form < 3; form++) {
        for (int it = 0; it < (form == 2 ? 3 : 1); it++) {
            static MPI_Request pr;
            for (int i = 0; i < out; i++)
                for (int e = 0; e < n; e++)
                    s[i * n + e] = val(rank, i, it + form, e);
            for (int k = 0; k < in * n; k++)
                r[k] = -7;
            if (form == 0) {
                MPI_Neighbor_alltoall(s, n, MPI_INT, r, n, MPI_INT, comm);
            } else if (form == 1) {
                MPI_Request q;
                MPI_Ineighbor_alltoall(s, n, MPI_INT, r, n, MPI_INT, comm, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else {
#ifdef PINIT
                if (it == 0)
                    PINIT(Neighbor_alltoall)(s, n, MPI_INT, r, n, MPI_INT, comm, MPI_INFO_NULL,
                                             &pr);
                MPI_Start(&pr);
                MPI_Wait(&pr, MPI_STATUS_IGNORE);
                if (it == 2)
                    MPI_Request_free(&pr);
#else
                MPI_Neighbor_alltoall(s, n, MPI_INT, r, n, MPI_INT, comm);
#endif
            }
            for (int j = 0; j < in; j++) {
                int from, blk;
                pair(j, &from, &blk);
                for (int e = 0; e < n && blk != -2; e++) {
                    int want = from < 0 ? -7 : val(from, blk, it + form, e);
                    CHECK(r[j * n + e] == want, "%s form %d: block %d [%d] = %d, expected %d",
                          what, form, j, e, r[j * n + e], want);
                }
            }
        }
    }
    free(s);
    free(r);
}

static MPI_Comm cur;

/* a grid: block 2d from the -1 neighbour's block 2d+1 and so on (MPI-4) */
static void pair_grid(int j, int *from, int *blk)
{
    int src, dst;
    MPI_Cart_shift(cur, j / 2, 1, &src, &dst);
    *from = j % 2 ? dst : src;
    if (*from == MPI_PROC_NULL)
        *from = -1;
    *blk = j ^ 1;
    if (!strict && src == dst)
        *blk = -2;      /* not checked */
}

/* the dist graph: every rank sends to rank+1 twice and rank+2 once; its
   sources list rank-1 twice and rank-2 once (k-th with k-th) */
static void pair_dist(int j, int *from, int *blk)
{
    *from = j < 2 ? (rank - 1 + size) % size : (rank - 2 + 2 * size) % size;
    *blk = j < 2 ? j : 2;
    if (!strict && (*from == rank || j < 2))
        *blk = -2;      /* MPICH 4.0 pairs repeated edges its own way */
}

static void neighbours(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Comm grid, dup, line, dist, ring;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    cur = grid;
    check_a2a("2-D periodic grid", grid, 4, 4, pair_grid, 3);
    MPI_Comm_dup(grid, &dup);
    cur = dup;
    check_a2a("dup of the grid", dup, 4, 4, pair_grid, 1000);
    int n1 = size, p0 = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, &p0, 0, &line);
    cur = line;
    check_a2a("1-D non-periodic grid", line, 2, 2, pair_grid, 2);

    int srcs[3] = {(rank - 1 + size) % size, (rank - 1 + size) % size,
                   (rank - 2 + 2 * size) % size};
    int dsts[3] = {(rank + 1) % size, (rank + 1) % size, (rank + 2) % size};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, srcs, MPI_UNWEIGHTED, 3, dsts,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);
    check_a2a("distributed multigraph", dist, 3, 3, pair_dist, 5);

    /* alltoallv and allgather(v) on the multigraph */
    int sc[3] = {1, 2, 3}, sd[3] = {0, 1, 3}, rc[3] = {1, 2, 3}, rd[3] = {4, 0, 7};
    int s[6], r[11], g[3], gv[7], gc[3] = {2, 2, 2}, gd[3] = {4, 0, 2};
    for (int i = 0; i < 6; i++)
        s[i] = val(rank, 9, 0, i);
    for (int i = 0; i < 11; i++)
        r[i] = -7;
    MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, dist);
    for (int j = 0; j < 3; j++) {
        int from, blk;
        pair_dist(j, &from, &blk);
        for (int e = 0; blk >= 0 && e < rc[j]; e++)
            CHECK(r[rd[j] + e] == val(from, 9, 0, sd[blk] + e), "alltoallv block %d [%d]", j,
                  e);
    }
    int mine[2] = {val(rank, 5, 0, 0), val(rank, 5, 0, 1)};
    MPI_Neighbor_allgather(mine, 1, MPI_INT, g, 1, MPI_INT, dist);
    MPI_Neighbor_allgatherv(mine, 2, MPI_INT, gv, gc, gd, MPI_INT, dist);
    for (int j = 0; j < 3; j++) {
        int from, blk;
        pair_dist(j, &from, &blk);
        CHECK(g[j] == val(from, 5, 0, 0), "allgather block %d", j);
        CHECK(gv[gd[j]] == val(from, 5, 0, 0) && gv[gd[j] + 1] == val(from, 5, 0, 1),
              "allgatherv block %d", j);
    }

    /* MPI_Graph_create: a symmetric ring (each rank's neighbours: both sides) */
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * size);
    for (int q = 0; q < size; q++) {
        index[q] = 2 * (q + 1);
        edges[2 * q] = (q - 1 + size) % size;
        edges[2 * q + 1] = (q + 1) % size;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
    int nb[2];
    MPI_Graph_neighbors(ring, rank, 2, nb);
    MPI_Neighbor_allgather(mine, 1, MPI_INT, g, 1, MPI_INT, ring);
    for (int j = 0; j < 2; j++)
        CHECK(g[j] == val(nb[j], 5, 0, 0), "graph allgather block %d: %d", j, g[j]);
    free(index);
    free(edges);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&dist);
    MPI_Comm_free(&line);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&grid);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    strict = getenv("PN_STRICT") && atoi(getenv("PN_STRICT"));
#ifdef PINIT
    persistent();
#else
    if (rank == 0)
        printf("pn: this MPI has no persistent collectives: skipped\n");
#endif
    neighbours();
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "pn: %d failures\n" : "pn: all checks passed\n", all);
    MPI_Finalize();
    return all != 0;
}
