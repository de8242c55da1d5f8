/*
 * mp_fallback.c -- RC falls back to UD per peer when no QP can be made for
 * it (issue #10 part 3). VCOLL_RC_MAX_QP lowers the QP budget so the real
 * fallback path runs with a handful of ranks.
 *
 * VCOLL_NET=auto (on emulated nodes, so RC serves the other nodes' ranks):
 *  - every pair exchanges an eager and a rendezvous-sized message at once,
 *    twice (while connecting, and again once every pair is settled); the
 *    bytes are checked against a pattern computed here;
 *  - no rank holds more RC QPs than its budget, every RC-served peer ends
 *    connected over RC or moved to UD, at least (peers - budget) of them on
 *    UD, and none when the budget covers them all;
 *  - both ends of every pair agree on RC or UD (all ranks' views gathered);
 *  - VCOLL_LOG=info says, for each peer that went to UD, that it did and
 *    why (this rank's stderr is captured during the exchanges and read).
 * VCOLL_NET=rc (3 ranks, VCOLL_RC_MAX_QP=1): forcing RC keeps the error. In
 * a ring each rank needs 2 connections and may make 1, so each rank's
 * sendrecv must fail with VC_ERR_PEER_FAILED, quickly, not hang, and the
 * log names the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../mp/mp_util.h"
#include "core/ctx.h"
#include "net/net.h"
#include "boot/boot.h"
#include "net/verbs/rc.h"
#include "p2p/p2p.h"

enum { K_NONE, K_RC, K_UD };

static int saved_err = -1;
static FILE *logf_;

/* LOG lines go to fd 2 with write(): send them to a file while we look */
static void capture_start(void)
{
    fflush(stderr);
    logf_ = tmpfile();
    saved_err = dup(STDERR_FILENO);
    if (!logf_ || saved_err < 0 || dup2(fileno(logf_), STDERR_FILENO) < 0) {
        fprintf(stderr, "FAIL: cannot capture stderr\n");
        exit(1);
    }
}

/* back to the real stderr, with everything captured copied to it; the
   captured text is returned (caller frees) */
static char *capture_stop(void)
{
    fflush(stderr);
    dup2(saved_err, STDERR_FILENO);
    close(saved_err);
    long n = ftell(logf_);
    char *text = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!text)
        exit(1);
    rewind(logf_);
    size_t got = n > 0 ? fread(text, 1, (size_t)n, logf_) : 0;
    text[got] = 0;
    fclose(logf_);
    fputs(text, stderr);
    return text;
}

static int kind_of(int p)
{
    const rc_net_t *r = (const rc_net_t *)ctx_lib.rc;
    if (!r || p == mp_rank || ctx_lib.prog.net_of[p] != ctx_lib.rc)
        return K_NONE;
    return r->peer[p].state == RC_S_UD ? K_UD : r->peer[p].state == RC_S_UP ? K_RC : -1;
}

/* every pair at once, len bytes each way, checked */
static void all_pairs(size_t len, int tag)
{
    uint8_t **sb = calloc((size_t)mp_size, sizeof *sb), **rb = calloc((size_t)mp_size, sizeof *rb);
    vc_request_t *rq = malloc(sizeof *rq * 2 * (size_t)mp_size);
    if (!sb || !rb || !rq)
        exit(1);
    int n = 0;
    for (int p = 0; p < mp_size; p++) {
        if (p == mp_rank)
            continue;
        if (!(sb[p] = malloc(len)) || !(rb[p] = calloc(1, len)))
            exit(1);
        mp_fill(sb[p], mp_rank, p, len);
        OK(vc_irecv(rb[p], (int)len, VC_BYTE, p, tag, VC_COMM_WORLD, &rq[n++]));
        OK(vc_isend(sb[p], (int)len, VC_BYTE, p, tag, VC_COMM_WORLD, &rq[n++]));
    }
    OK(vc_waitall(n, rq, NULL));
    for (int p = 0; p < mp_size; p++) {
        if (p == mp_rank)
            continue;
        size_t bad = mp_verify(rb[p], p, mp_rank, len);
        if (bad)
            FAIL("%zu B from rank %d (%s): byte %zu wrong", len, p,
                 kind_of(p) == K_UD ? "UD fallback" : "RC", bad - 1);
        free(sb[p]);
        free(rb[p]);
    }
    free(sb);
    free(rb);
    free(rq);
}

static int forced(void)
{
    if (mp_size != 3 || ctx_lib.cfg.rc_max_qp != 1) {
        fprintf(stderr, "FAIL: mp_fallback with VCOLL_NET=rc wants 3 ranks and "
                "VCOLL_RC_MAX_QP=1\n");
        return 1;
    }
    int right = (mp_rank + 1) % mp_size, left = (mp_rank + 2) % mp_size, x = mp_rank, y = -1;
    capture_start();
    double t0 = vc_wtime();
    int rc = vc_sendrecv(&x, 1, VC_INT32, right, 4, &y, 1, VC_INT32, left, 4, VC_COMM_WORLD,
                         VC_STATUS_IGNORE);
    double dt = vc_wtime() - t0;
    char *log = capture_stop();
    if (rc != VC_ERR_PEER_FAILED)
        FAIL("ring needing 2 RC QPs with a budget of 1 returned %s (want "
             "VC_ERR_PEER_FAILED)", vc_strerror(rc));
    if (dt > 10)
        FAIL("the refusal took %.1f s", dt);
    /* this rank's own refusal, or the peer's relayed in its NAK */
    if (!strstr(log, "no RC QP (VCOLL_NET=rc, no fallback to UD): QP budget of 1 spent") &&
        !strstr(log, "cannot accept an RC connection: its RC QP budget is spent"))
        FAIL("no log line says why the connection failed");
    free(log);
    vc_finalize();
    if (mp_fails)
        return 1;
    printf("PASS: rank %d: forced rc past VCOLL_RC_MAX_QP failed after %.2f s: %s\n",
           mp_rank, dt, vc_strerror(rc));
    return 0;
}

int main(int argc, char **argv)
{
    setenv("VCOLL_LOG", "info", 1);
    mp_init(&argc, &argv);
    if (ctx_lib.cfg.net == CFG_NET_RC)
        return forced();
    int budget = ctx_lib.cfg.rc_max_qp;
    if (!ctx_lib.rc || budget <= 0) {
        fprintf(stderr, "FAIL: mp_fallback wants RC peers (VCOLL_NET=auto on several "
                "nodes) and VCOLL_RC_MAX_QP > 0\n");
        return 1;
    }
    size_t big = ctx_lib.cfg.eager_limit * 4 + 3;   /* rendezvous: READ on RC, streamed on UD */
    capture_start();
    all_pairs(100, 1);
    all_pairs(big, 2);
    /* settle: every rank is done connecting before anyone looks */
    if (boot_fence(&ctx_lib.boot, 0))
        FAIL("fence");
    int served = 0, ud = 0, pending = 0;
    for (int p = 0; p < mp_size; p++)
        served += kind_of(p) != K_NONE;
    double t0 = vc_wtime();
    do {
        prog_poll(&ctx_lib.prog);
        pending = 0;
        for (int p = 0; p < mp_size; p++)
            pending += kind_of(p) == -1;
    } while (pending && vc_wtime() - t0 < 5);
    all_pairs(big, 3);
    char *log = capture_stop();

    net_usage_t u;
    net_usage(ctx_lib.rc, ctx_lib.ud, ctx_lib.net_env.hb, &u);
    int *mine = calloc((size_t)mp_size, sizeof(int)), *all = malloc(sizeof(int) * (size_t)mp_size * (size_t)mp_size);
    if (!mine || !all)
        return 1;
    for (int p = 0; p < mp_size; p++) {
        mine[p] = kind_of(p);
        if (mine[p] == -1)
            FAIL("rank %d is RC-served but neither connected nor moved to UD", p);
        if (mine[p] != K_UD)
            continue;
        ud++;
        char want[96];
        snprintf(want, sizeof want, "rank %d -> rank %d: over UD instead of RC: ", mp_rank, p);
        const char *line = strstr(log, want);
        const char *eol = line ? strchr(line, '\n') : NULL;
        if (!line)
            FAIL("no log line says rank %d went to UD", p);
        else if (!strstr(line, "VCOLL_RC_MAX_QP") || (eol && strstr(line, "VCOLL_RC_MAX_QP") > eol))
            FAIL("the log line for rank %d does not say why (the QP budget)", p);
    }
    free(log);
    printf("mp_fallback: rank %d: %d RC-served peers, %d on RC, %d on UD, budget %d, "
           "RC QPs %d\n", mp_rank, served, served - ud, ud, budget, u.rc_qps);
    if (u.rc_qps > budget)
        FAIL("%d RC QPs, more than VCOLL_RC_MAX_QP=%d", u.rc_qps, budget);
    if (ud < served - budget)
        FAIL("%d peers on UD, want at least %d (peers past the budget)", ud, served - budget);
    if (served <= budget && ud)
        FAIL("%d peers on UD although the budget (%d) covers all %d", ud, budget, served);
    if (u.rc_to_ud != ud)
        FAIL("usage counts %d peers moved to UD, the peer table %d", u.rc_to_ud, ud);
    OK(vc_allgather(mine, all, (size_t)mp_size, VC_INT32, VC_COMM_WORLD));
    for (int i = 0; i < mp_size; i++)
        for (int j = 0; j < mp_size; j++) {
            int a = all[i * mp_size + j], b = all[j * mp_size + i];
            if (i < j && (a == K_UD) != (b == K_UD))
                FAIL("rank %d has rank %d on %s, rank %d has rank %d on %s", i, j,
                     a == K_UD ? "UD" : "RC", j, i, b == K_UD ? "UD" : "RC");
        }
    int64_t v = mp_rank + 1, sum = 0;
    OK(vc_allreduce(&v, &sum, 1, VC_INT64, VC_SUM, VC_COMM_WORLD));
    if (sum != (int64_t)mp_size * (mp_size + 1) / 2)
        FAIL("allreduce: %lld", (long long)sum);
    free(mine);
    free(all);
    return mp_finish("mp_fallback");
}
