/*
 * mp_fault.c -- a link that breaks on one side only, under the slots'
 * alltoallv, scatterv and gatherv (run with VCOLL_FAULT_SHM_SEND=0>1@1 and
 * those three forced to "flags" on one node: every shared-memory send from
 * rank 0 to rank 1 fails, and rank 1 sees nothing of it). The allgather
 * that finds whether the job is on one node is forced to "flags" too, so
 * it needs no message.
 *
 * A block too big for a line goes by message; when that message cannot be
 * sent, the line says so (BY_FAIL) and its receiver fails the call instead
 * of waiting for a message that never comes. So each call must end on
 * every rank, within the alarm, with VC_ERR_TRANSPORT on the ranks the
 * failed send concerns (the sender stops sending after its first failure,
 * so the ranks after it in its order fail too) and the other blocks
 * intact. Then calls that need no message (a barrier, an alltoallv whose
 * blocks fit the lines) must work: the failures leave the slots in step.
 */
#include <signal.h>
#include "mp_util.h"

#define BIG 4096        /* past a line's share at any rank count: by message */
#define SMALL 16        /* within it */

static size_t *counts(size_t n)
{
    size_t *c = malloc((size_t)mp_size * sizeof *c);
    for (int r = 0; r < mp_size; r++)
        c[r] = n;
    return c;
}

static size_t *displs(size_t n)
{
    size_t *d = malloc((size_t)mp_size * sizeof *d);
    for (int r = 0; r < mp_size; r++)
        d[r] = (size_t)r * n;
    return d;
}

/* every rank fails (rank 0's sends stop at rank 1, the first in its
   order, and the rest are marked failed); blocks from the others arrive */
static void test_alltoallv(size_t n, int want_fail)
{
    size_t *c = counts(n), *d = displs(n);
    uint8_t *s = malloc(n * (size_t)mp_size), *r = malloc(n * (size_t)mp_size);
    for (int q = 0; q < mp_size; q++)
        mp_fill(s + (size_t)q * n, mp_rank, q, n);
    memset(r, 0xee, n * (size_t)mp_size);
    int rc = vc_alltoallv(s, c, d, r, c, d, VC_BYTE, VC_COMM_WORLD);
    if (rc != (want_fail ? VC_ERR_TRANSPORT : VC_SUCCESS))
        FAIL("alltoallv of %zu B blocks: %s, want %s", n, vc_strerror(rc),
             want_fail ? "a transport error" : "success");
    for (int q = want_fail ? 1 : 0; q < mp_size; q++) {
        size_t bad = mp_verify(r + (size_t)q * n, q, mp_rank, n);
        if (bad)
            FAIL("alltoallv of %zu B blocks: byte %zu from rank %d wrong", n, bad - 1, q);
    }
    free(s), free(r), free(c), free(d);
}

/* root 0: its send to rank 1 fails and every rank after it in the
   root's order is told so; the root's own block is still copied */
static void test_scatterv(void)
{
    size_t *c = counts(BIG), *d = displs(BIG);
    uint8_t *s = NULL, r[BIG];
    if (mp_rank == 0) {
        s = malloc(BIG * (size_t)mp_size);
        for (int q = 0; q < mp_size; q++)
            mp_fill(s + (size_t)q * BIG, 0, q, BIG);
    }
    int rc = vc_scatterv(s, c, d, r, BIG, VC_BYTE, 0, VC_COMM_WORLD);
    if (rc != VC_ERR_TRANSPORT)
        FAIL("scatterv from rank 0: %s, want a transport error", vc_strerror(rc));
    if (mp_rank == 0 && mp_verify(r, 0, 0, BIG))
        FAIL("scatterv: the root's own block is wrong");
    free(s), free(c), free(d);
}

/* root 1: only rank 0's block cannot come; the root fails, rank 0
   fails, the others succeed and their blocks arrive */
static void test_gatherv(void)
{
    size_t *c = counts(BIG), *d = displs(BIG);
    uint8_t s[BIG], *r = NULL;
    mp_fill(s, mp_rank, 1, BIG);
    if (mp_rank == 1) {
        r = malloc(BIG * (size_t)mp_size);
        memset(r, 0xee, BIG * (size_t)mp_size);
    }
    int rc = vc_gatherv(s, BIG, r, c, d, VC_BYTE, 1, VC_COMM_WORLD);
    int want = mp_rank <= 1 ? VC_ERR_TRANSPORT : VC_SUCCESS;
    if (rc != want)
        FAIL("gatherv to rank 1: %s, want %s", vc_strerror(rc), vc_strerror(want));
    for (int q = 1; mp_rank == 1 && q < mp_size; q++)
        if (mp_verify(r + (size_t)q * BIG, q, 1, BIG))
            FAIL("gatherv: the block from rank %d is wrong", q);
    free(r), free(c), free(d);
}

int main(int argc, char **argv)
{
    alarm(60);      /* a call that waits for the message that never comes */
    mp_init(&argc, &argv);
    const char *f = getenv("VCOLL_FAULT_SHM_SEND");
    if (!f || strcmp(f, "0>1@1") || mp_size < 2 || !getenv("VCOLL_ALLGATHER_ALG") ||
        strcmp(getenv("VCOLL_ALLGATHER_ALG"), "flags") ||
        !mp_forced_on_one_node("VCOLL_ALLTOALLV_ALG", "flags") ||
        !mp_forced_on_one_node("VCOLL_SCATTERV_ALG", "flags") ||
        !mp_forced_on_one_node("VCOLL_GATHERV_ALG", "flags")) {
        if (mp_rank == 0)
            fprintf(stderr, "FAIL: mp_fault needs VCOLL_FAULT_SHM_SEND=0>1@1, allgather and "
                            "the v calls forced to flags and 2+ ranks on one node\n");
        return 1;
    }
    test_alltoallv(BIG, 1);
    test_scatterv();
    test_gatherv();
    OK(vc_barrier(VC_COMM_WORLD));
    test_alltoallv(SMALL, 0);
    OK(vc_barrier(VC_COMM_WORLD));
    return mp_finish("mp_fault");
}
