/*
 * vcoll_scale -- what vcoll costs per process, and when: vc_init time, QPs,
 * registered bytes, pinned bytes (the kernel's count, VmPin), resident
 * bytes and the endpoint data published, right after vc_init, after the
 * first collective (an allreduce) and after an all-pairs exchange.
 *
 *   mpirun -np N vcoll_scale [--per-rank] [--bytes B]
 *
 * Rank 0 prints one line per phase with the average and the maximum over
 * the ranks (--per-rank: every rank's line too). doc/scaling.md explains
 * the model these numbers are checked against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcoll.h"
#include "core/ctx.h"
#include "net/net.h"
#include "boot/boot.h"
#include "p2p/p2p.h"

enum { F_QPS, F_RCQP, F_PEERS, F_REG, F_RX, F_PIN, F_RSS, F_PUB, NF };
static const char *const fname[NF] = {"QPs", "RC QPs", "peers", "registered", "recv bufs",
                                      "pinned", "RSS", "published"};
enum { P_INIT, P_COLL, P_PAIRS, NP };
static const char *const pname[NP] = {"after vc_init", "after allreduce", "after all-pairs"};

/* kB figure of a /proc/self/status line, in bytes */
static double proc_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = 0;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = 1024.0 * strtod(line + kl + 1, NULL);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* A phase ends for every rank before any samples (a PMIx fence, not a
   message, which would connect peers): a fast rank already in the next
   phase would otherwise have addressed us, and its connection would count
   here. Before the fence, progress until the connections this rank took
   part in are up (a REQ it answered is up once the RTU is polled), and
   no progress between the fence and the sample. */
static void sample(double *row)
{
    net_usage_t u;
    double t0 = vc_wtime();
    do {
        prog_poll(&ctx_lib.prog);
        net_usage(ctx_lib.rc, ctx_lib.ud, ctx_lib.net_env.hb, &u);
    } while (u.rc_up != u.rc_qps && vc_wtime() - t0 < 5);
    boot_fence(&ctx_lib.boot, 0);
    net_usage(ctx_lib.rc, ctx_lib.ud, ctx_lib.net_env.hb, &u);
    row[F_QPS] = u.qps;
    row[F_RCQP] = u.rc_qps;
    row[F_PEERS] = u.rc_up + u.ud_peers;
    row[F_REG] = (double)u.reg_bytes;
    row[F_RX] = (double)u.rx_bytes;
    row[F_PIN] = proc_status("VmPin");
    row[F_RSS] = proc_status("VmRSS");
    row[F_PUB] = (double)boot_put_bytes(&ctx_lib.boot);
}

static void human(double v, int bytes, char *out, size_t len)
{
    if (!bytes)
        snprintf(out, len, "%.1f", v);
    else if (v >= 1048576.0)
        snprintf(out, len, "%.2fM", v / 1048576.0);
    else if (v >= 1024.0)
        snprintf(out, len, "%.1fK", v / 1024.0);
    else
        snprintf(out, len, "%.0f", v);
}

int main(int argc, char **argv)
{
    int per_rank = 0;
    int bytes = 8;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--per-rank"))
            per_rank = 1;
        else if (!strcmp(argv[i], "--bytes") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            bytes = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: vcoll_scale [--per-rank] [--bytes B]\n");
            return 2;
        }
    }
    double t0 = vc_wtime();
    int rc = vc_init(&argc, &argv);
    double t_init = vc_wtime() - t0;
    if (rc) {
        fprintf(stderr, "vcoll_scale: vc_init: %s\n", vc_strerror(rc));
        return 1;
    }
    int me, np;
    vc_comm_rank(VC_COMM_WORLD, &me);
    vc_comm_size(VC_COMM_WORLD, &np);
    double mine[NP][NF];
    sample(mine[P_INIT]);

    double v = me, s = 0;
    rc = vc_allreduce(&v, &s, 1, VC_DOUBLE, VC_SUM, VC_COMM_WORLD);
    sample(mine[P_COLL]);

    char *sb = malloc((size_t)bytes * (size_t)np), *rb = malloc((size_t)bytes * (size_t)np);
    vc_request_t *rq = malloc(sizeof *rq * 2 * (size_t)np);
    if (!sb || !rb || !rq)
        return 1;
    memset(sb, me & 0xff, (size_t)bytes * (size_t)np);
    int n = 0;
    for (int k = 1; k < np && !rc; k++) {
        int to = (me + k) % np, from = (me - k + np) % np;
        rc = vc_irecv(rb + (size_t)from * bytes, bytes, VC_BYTE, from, 1, VC_COMM_WORLD, &rq[n++]);
        if (!rc)
            rc = vc_isend(sb + (size_t)to * bytes, bytes, VC_BYTE, to, 1, VC_COMM_WORLD, &rq[n++]);
    }
    if (!rc)
        rc = vc_waitall(n, rq, NULL);
    for (int p = 0; p < np && !rc; p++)
        if (p != me && rb[(size_t)p * bytes] != (char)(p & 0xff))
            rc = VC_ERR_INTERNAL;
    sample(mine[P_PAIRS]);
    if (rc || s != (double)np * (np - 1) / 2) {
        fprintf(stderr, "vcoll_scale: rank %d: exchange failed: %s\n", me,
                rc ? vc_strerror(rc) : "wrong allreduce sum");
        return 1;
    }

    double row[1 + NP * NF], *all = me == 0 ? malloc(sizeof row * (size_t)np) : NULL;
    row[0] = t_init;
    memcpy(row + 1, mine, sizeof mine);
    rc = vc_gather(row, all, 1 + NP * NF, VC_DOUBLE, 0, VC_COMM_WORLD);
    if (me == 0 && !rc) {
        const char *net = getenv("VCOLL_NET");
        printf("vcoll_scale: %d ranks on %d node(s), VCOLL_NET=%s, transports%s%s%s\n", np,
               ctx_lib.boot.nnodes, net ? net : "auto", ctx_lib.shm ? " shm" : "",
               ctx_lib.rc ? " rc" : "", ctx_lib.ud ? " ud" : "");
        double tsum = 0, tmax = 0;
        for (int r = 0; r < np; r++) {
            double t = all[(size_t)r * (1 + NP * NF)];
            tsum += t;
            tmax = t > tmax ? t : tmax;
        }
        printf("vc_init: avg %.3f s, max %.3f s\n", tsum / np, tmax);
        printf("%-16s", "avg/max per rank");
        for (int f = 0; f < NF; f++)
            printf(" %17s", fname[f]);
        printf("\n");
        for (int ph = 0; ph < NP; ph++) {
            printf("%-16s", pname[ph]);
            for (int f = 0; f < NF; f++) {
                double sum = 0, mx = 0;
                for (int r = 0; r < np; r++) {
                    double x = all[(size_t)r * (1 + NP * NF) + 1 + (size_t)ph * NF + f];
                    sum += x;
                    mx = x > mx ? x : mx;
                }
                char a[16], m[16], cell[40];
                int isbytes = f >= F_REG;
                human(sum / np, isbytes, a, sizeof a);
                human(mx, isbytes, m, sizeof m);
                snprintf(cell, sizeof cell, "%s/%s", a, m);
                printf(" %17s", cell);
            }
            printf("\n");
        }
        for (int r = 0; per_rank && r < np; r++) {
            const double *x = all + (size_t)r * (1 + NP * NF);
            printf("rank %d: init %.3f s", r, x[0]);
            for (int ph = 0; ph < NP; ph++)
                printf(" | %s: %.0f QPs, %.0f peers, %.0f B reg, %.0f B pinned", pname[ph],
                       x[1 + ph * NF + F_QPS], x[1 + ph * NF + F_PEERS],
                       x[1 + ph * NF + F_REG], x[1 + ph * NF + F_PIN]);
            printf("\n");
        }
    }
    free(all);
    free(sb);
    free(rb);
    free(rq);
    int frc = vc_finalize();
    return rc || frc ? 1 : 0;
}
