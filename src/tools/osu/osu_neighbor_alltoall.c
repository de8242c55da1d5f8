/*
 * osu_neighbor_alltoall.c -- neighbor alltoall latency on a 2-D periodic
 * Cartesian grid, the halo exchange of a 5-point stencil. The size is one
 * neighbour block: every rank sends a different block to each of its 4
 * neighbours (-1 and +1 in each dimension) and receives 4.
 *
 * The grid is np factored as evenly as possible, larger side first
 * (np 4 -> 2x2, 8 -> 4x2, 6 -> 3x2, a prime p -> px1), which is what
 * MPI_Dims_create gives in 2-D; computing it here keeps every library on
 * the same grid. A side of 1 or 2 makes a rank its own or a double
 * neighbour: still 4 blocks each way, as MPI counts them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"

#define NDIMS 2
#define NBRS (2 * NDIMS)    /* Cartesian: -1 and +1 per dimension */

struct bufs { char *s, *r; bk_comm_t cart; };

/* dims[1] = the largest divisor of np not above its square root */
static void grid_dims(int np, int dims[NDIMS])
{
    int d = 1;
    for (int k = 1; k * k <= np; k++)
        if (np % k == 0)
            d = k;
    dims[0] = np / d;
    dims[1] = d;
}

static int one_neighbor_alltoall(void *arg, size_t size)
{
    struct bufs *p = arg;
    return bk_neighbor_alltoall(p->s, p->r, size, BK_CHAR, p->cart);
}

int main(int argc, char **argv)
{
    static char title[96];
    bench_t b = { .name = "osu_neighbor_alltoall", .title = "Neighbor All-to-All Latency Test",
                  .kind = BENCH_COLL, .min_size = 8, .max_size = 1u << 20,
                  .size_floor = 0 };
    bench_start(&b, &argc, &argv);

    int dims[NDIMS], periods[NDIMS] = {1, 1};
    grid_dims(b.nranks, dims);
    /* the header names the grid: numbers on 4x2 and 8x1 are not alike */
    snprintf(title, sizeof title, "%s, %dx%d periodic grid", b.title, dims[0], dims[1]);
    b.title = title;

    struct bufs p = { bench_alloc(b.max_size * NBRS), bench_alloc(b.max_size * NBRS), 0 };
    bench_check(&b, bk_cart_create(NDIMS, dims, periods, &p.cart), "cart_create");
    bench_coll_loop(&b, "neighbor_alltoall", one_neighbor_alltoall, &p);
    bench_check(&b, bk_comm_free(&p.cart), "comm_free");
    free(p.s);
    free(p.r);
    return bench_finish(&b);
}
