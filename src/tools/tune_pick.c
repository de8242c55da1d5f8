/*
 * tune_pick.c -- vcoll_tune's choice at one size (tune_pick.h).
 *
 * Noise must neither overturn a row nor make rows flap. Without the keep
 * factor (np 4 on 2 cores), reduce at 512 B-4 KiB went to binomial and
 * hier, within 1-3 % of linear in the tuner, and ran 1.10-1.43 times
 * slower than the built-in linear under OSU. "Clearly faster" also means
 * in every round: at 1 MiB one call is 100 us and a round's 200 calls
 * vary by 15 % between runs here, so a median ahead by 9 % once put
 * allreduce on hier, 1.22 times slower under OSU than the table's
 * segment (session 28).
 */
#include "tune_pick.h"

int tune_pick(const tune_cand_t *c, int n, int tab, int prev, double keep)
{
    int best = -1;
    for (int a = 0; a < n; a++)
        if (c[a].runs && (best < 0 || c[a].med < c[best].med))
            best = a;
    if (best >= 0 && tab >= 0 && tab < n && c[tab].runs &&
        (c[tab].med <= keep * c[best].med || c[best].hi >= c[tab].lo))
        return tab;
    if (best >= 0 && prev >= 0 && prev < n && c[prev].runs &&
        c[prev].med <= 1.03 * c[best].med)
        return prev;
    return best >= 0 ? best : prev;
}
