/*
 * mp_set_alg.c -- vc_coll_set_alg and vc_coll_alg_name under a launcher:
 * every algorithm of allreduce, bcast and reduce_scatter_block forced in
 * turn on world and on a split communicator gives the reference result;
 * names that differ between members are refused on every member (and
 * change nothing); unknown names are refused; "auto" and NULL go back to
 * the table.
 */
#include "mp_util.h"

static void check_allreduce(vc_comm_t c, int size, const char *alg, size_t n)
{
    int64_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    int r;
    vc_comm_rank(c, &r);
    for (size_t i = 0; i < n; i++)
        in[i] = (int64_t)(r + 1) * (int64_t)(i + 3);
    OK(vc_allreduce(in, out, n, VC_INT64, VC_SUM, c));
    int64_t ranks = (int64_t)size * (size + 1) / 2;
    for (size_t i = 0; i < n; i++)
        if (out[i] != ranks * (int64_t)(i + 3)) {
            FAIL("allreduce %s n=%zu: element %zu is %lld, want %lld", alg, n, i,
                 (long long)out[i], (long long)(ranks * (int64_t)(i + 3)));
            break;
        }
    free(in);
    free(out);
}

static void check_bcast(vc_comm_t c, const char *alg, size_t n)
{
    char *b = malloc(n + 1);
    int r;
    vc_comm_rank(c, &r);
    for (size_t i = 0; i < n; i++)
        b[i] = r == 0 ? (char)(i * 7 + 1) : 0;
    OK(vc_bcast(b, n, VC_BYTE, 0, c));
    for (size_t i = 0; i < n; i++)
        if (b[i] != (char)(i * 7 + 1)) {
            FAIL("bcast %s n=%zu: byte %zu wrong", alg, n, i);
            break;
        }
    free(b);
}

static void every_alg(vc_comm_t c)
{
    int size;
    vc_comm_size(c, &size);
    const char *colls[] = {"allreduce", "bcast"};
    for (int k = 0; k < 2; k++) {
        const char *name;
        for (int i = 0; vc_coll_alg_name(colls[k], i, &name) == VC_SUCCESS; i++) {
            OK(vc_coll_set_alg(c, colls[k], name));
            size_t sizes[] = {1, 17, 4096, 70000};
            for (int s = 0; s < 4; s++) {
                if (k == 0)
                    check_allreduce(c, size, name, sizes[s]);
                else
                    check_bcast(c, name, sizes[s] * 8);
            }
        }
        OK(vc_coll_set_alg(c, colls[k], NULL));
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    const char *name;
    EXPECT_RC(vc_coll_alg_name("allreduce", 0, &name), VC_SUCCESS);
    EXPECT_RC(vc_coll_alg_name("nope", 0, &name), VC_ERR_ARG);
    every_alg(VC_COMM_WORLD);
    vc_comm_t half;
    OK(vc_comm_split(VC_COMM_WORLD, mp_rank % 2, mp_rank, &half));
    every_alg(half);
    /* members that disagree: refused everywhere, nothing changed */
    if (mp_size > 1) {
        EXPECT_RC(vc_coll_set_alg(VC_COMM_WORLD, "allreduce",
                                  mp_rank ? "recursive_doubling" : "ring"), VC_ERR_ARG);
        EXPECT_RC(vc_coll_set_alg(VC_COMM_WORLD, mp_rank ? "bcast" : "allreduce", "auto"),
                  VC_ERR_ARG);
    }
    EXPECT_RC(vc_coll_set_alg(VC_COMM_WORLD, "allreduce", "quick"), VC_ERR_ARG);
    EXPECT_RC(vc_coll_set_alg(VC_COMM_WORLD, "allreduc", "ring"), VC_ERR_ARG);
    EXPECT_RC(vc_coll_set_alg(VC_COMM_WORLD, NULL, "ring"), VC_ERR_ARG);
    EXPECT_RC(vc_coll_set_alg(NULL, "allreduce", "ring"), VC_ERR_COMM);
    /* fewer elements than ranks: the forced Rabenseifner gives way, right result */
    OK(vc_coll_set_alg(VC_COMM_WORLD, "allreduce", "rabenseifner"));
    OK(vc_coll_which(VC_COMM_WORLD, "allreduce", 4096, VC_INT64, &name));
    if (strcmp(name, "rabenseifner"))
        FAIL("vc_coll_which says %s for a forced rabenseifner at 4096 elements", name);
    OK(vc_coll_which(VC_COMM_WORLD, "allreduce", 1, VC_INT64, &name));
    if (mp_size > 1 && !strcmp(name, "rabenseifner"))
        FAIL("vc_coll_which says rabenseifner for 1 element on %d ranks", mp_size);
    EXPECT_RC(vc_coll_which(VC_COMM_WORLD, "allreduce", 1, (vc_dtype_t)999, &name),
              VC_ERR_DTYPE);
    check_allreduce(VC_COMM_WORLD, mp_size, "rabenseifner, 1 element", 1);
    OK(vc_coll_set_alg(VC_COMM_WORLD, "allreduce", "auto"));
    check_allreduce(VC_COMM_WORLD, mp_size, "auto", 1000);
    OK(vc_comm_free(&half));
    int fails = mp_fails, all = 0;
    vc_allreduce(&fails, &all, 1, VC_INT32, VC_SUM, VC_COMM_WORLD);
    if (mp_rank == 0)
        printf("%s: mp_set_alg np=%d\n", all ? "FAIL" : "PASS", mp_size);
    vc_finalize();
    return all ? 1 : 0;
}
