/*
 * scan_recursive_doubling.c -- inclusive prefix reduction in ceil(log2 p)
 * exchanges (exscan_recursive_doubling.c runs the same rounds).
 *
 * At distance m, partners r and r^m swap the reduction over their aligned
 * group of m ranks ("grp"). What comes from a lower partner covers ranks
 * below all of mine, so it is put in front: grp = recv op grp and
 * result = recv op result; from a higher partner only grp grows, at the
 * back (grp = grp op recv). Every combine keeps rank order, so scan is
 * correct for non-commutative ops and each rank's result is one fixed
 * expression x0 op x1 op ... op xr.
 *
 * Buffers: grp lives in TMP[0,n) once it differs from the input, the
 * partner's grp arrives in TMP[n,2n), the result builds up in RBUF.
 */
#include "sched.h"

/* is grp still needed after the round at distance mask? */
static int grp_needed_after(int r, int p, int mask)
{
    for (int m = mask << 1; m < p; m <<= 1)
        if ((r ^ m) < p)
            return 1;
    return 0;
}

int coll_scan_build(const coll_args_t *a, coll_sched_t *s, int exclusive)
{
    int p = a->size, r = a->rank;
    size_t n = a->count * a->esize;
    int grp, res;
    size_t grp_off, res_off;
    int have_res = !exclusive;   /* exscan's result starts empty */

    coll_input(a, &grp, &grp_off);
    res = grp;
    res_off = grp_off;
    if (!n)
        return sched_done(s);
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        int keep = grp_needed_after(r, p, mask);
        sched_need_tmp(s, 2 * n);
        sched_recv(s, COLL_TMP, n, n, dst);
        sched_send(s, grp, grp_off, n, dst);
        if (dst > r) {
            if (keep)
                sched_reduce(s, COLL_TMP, 0, grp, grp_off, COLL_TMP, n, n);
        } else if (have_res && res == grp && res_off == grp_off) {
            /* first lower partner of a scan: both are "recv op input" */
            sched_reduce(s, COLL_RBUF, 0, COLL_TMP, n, res, res_off, n);
            if (keep)
                sched_copy(s, COLL_TMP, 0, COLL_RBUF, 0, n);
        } else {
            /* grp first: in place it may still be the input in RBUF */
            if (keep)
                sched_reduce(s, COLL_TMP, 0, COLL_TMP, n, grp, grp_off, n);
            if (have_res)
                sched_reduce(s, COLL_RBUF, 0, COLL_TMP, n, res, res_off, n);
            else
                sched_copy(s, COLL_RBUF, 0, COLL_TMP, n, n);
        }
        if (dst < r) {
            have_res = 1;
            res = COLL_RBUF;
            res_off = 0;
        }
        grp = COLL_TMP;
        grp_off = 0;
        sched_round(s);
    }
    /* rank 0 of a scan: its result is its input */
    if (!exclusive)
        sched_copy(s, COLL_RBUF, 0, res, res_off, n);
    return sched_done(s);
}

int coll_scan_recursive_doubling(const coll_args_t *a, coll_sched_t *s)
{
    return coll_scan_build(a, s, 0);
}
