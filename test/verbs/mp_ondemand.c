/*
 * mp_ondemand.c -- RC connections are made on demand (issue #10 part 4):
 *  - after vc_init no RC QP exists, and the endpoint data this rank
 *    published does not depend on the job size;
 *  - making a group of every rank, listed last rank first, connects each
 *    member to its parent and children in a binomial tree on the list,
 *    exactly those (the first listed rank used to talk to every member);
 *  - after a ring exchange (send right, receive left) exactly the ring
 *    neighbours that RC serves are connected, one QP each: the left one
 *    was connected by its own first send, so this side only answered;
 *  - a barrier and an allreduce add at most 2 * ceil(log2 p) peers;
 *  - an all-pairs exchange where every rank addresses every other at once
 *    (every pair starts from both sides simultaneously) ends with one QP
 *    per RC-served peer, not two, and every byte checked.
 * Expected counts come from the ranks' own arithmetic and c->net_of (which
 * transport serves which peer), never from the transport's bookkeeping.
 * With VCOLL_NET=rc every peer is RC's; in auto mode only other nodes'.
 * Log-depth barrier and allreduce are forced: on an oversubscribed node
 * (the guest) the automatic choice is linear, whose root talks to all.
 *
 * First contact with a peer that cannot answer (2 ranks, VCOLL_NET=rc):
 *   mp_ondemand stopped  rank 1 stops itself (SIGSTOP) right after vc_init;
 *                        rank 0's first send to it must fail with
 *                        VC_ERR_PEER_FAILED within VCOLL_PEER_TIMEOUT + 5 s,
 *                        then rank 0 kills it and prints PASS.
 *   mp_ondemand busy     rank 1 computes (sleeps) 3 x VCOLL_PEER_TIMEOUT
 *                        before its first vcoll call: busy is not dead, so
 *                        rank 0's send must succeed once rank 1 answers.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../mp/mp_util.h"
#include "core/ctx.h"
#include "net/net.h"
#include "boot/boot.h"
#include "net/verbs/rc.h"
#include "p2p/p2p.h"

static int rc_served(int peer)
{
    return ctx_lib.rc && peer != mp_rank && ctx_lib.prog.net_of[peer] == ctx_lib.rc;
}

/* the peers the phases so far must have connected, by the ranks' own
   arithmetic */
static unsigned char *expect;

static int expected(void)
{
    int n = 0;
    for (int p = 0; p < mp_size; p++)
        n += expect[p] && rc_served(p);
    return n;
}

static int ceil_log2(int p)
{
    int k = 0;
    while ((1 << k) < p)
        k++;
    return k;
}

/* A phase ends for everyone before anyone looks. First progress until the
 * connections this rank took part in are up (the RTUs of the ones it only
 * answered polled), then a PMIx fence (not a message, which would connect
 * peers), then the sample with no progress in between: a fast rank already
 * in the next phase may have sent us a request, but nothing reads it before
 * we have counted. (Progressing after the fence counted such a request as
 * a third ring connection now and then in the guest.) */
static void settle(net_usage_t *u)
{
    double t0 = vc_wtime();
    do {
        prog_poll(&ctx_lib.prog);
        net_usage(ctx_lib.rc, ctx_lib.ud, ctx_lib.net_env.hb, u);
    } while (u->rc_up != u->rc_qps && vc_wtime() - t0 < 5);
    if (boot_fence(&ctx_lib.boot, 0))
        FAIL("fence");
    net_usage(ctx_lib.rc, ctx_lib.ud, ctx_lib.net_env.hb, u);
}

static void report(const char *phase, const net_usage_t *u)
{
    printf("mp_ondemand: rank %d %-10s rc QPs %d, connected %d, QPs in all %d, "
           "registered %zu B\n", mp_rank, phase, u->rc_qps, u->rc_up, u->qps, u->reg_bytes);
}

/* the pid rank 1 published in its RC endpoint blob */
static pid_t peer_pid(int peer)
{
    rc_blob_t b;
    size_t len = sizeof b;
    return boot_get(&ctx_lib.boot, peer, RC_BLOB_KEY, &b, &len) == VC_SUCCESS && len == sizeof b
           ? (pid_t)b.pid : 0;
}

static int first_contact(const char *mode)
{
    double timeout = ctx_lib.cfg.peer_timeout;
    if (mp_size != 2 || !ctx_lib.rc || timeout <= 0) {
        fprintf(stderr, "FAIL: mp_ondemand %s wants 2 ranks, VCOLL_NET=rc and "
                "VCOLL_PEER_TIMEOUT > 0\n", mode);
        return 1;
    }
    int busy = !strcmp(mode, "busy"), x = 42, y = 0;
    if (mp_rank == 1) {
        if (busy) {
            usleep((useconds_t)(3 * timeout * 1e6));
            OK(vc_recv(&y, 1, VC_INT32, 0, 3, VC_COMM_WORLD, VC_STATUS_IGNORE));
            if (y != 42)
                FAIL("busy: got %d, want 42", y);
            OK(vc_finalize());
            return mp_fails != 0;
        }
        raise(SIGSTOP);
        return 0;
    }
    double t0 = vc_wtime();
    int rc = vc_send(&x, 1, VC_INT32, 1, 3, VC_COMM_WORLD);
    double dt = vc_wtime() - t0;
    if (busy) {
        if (rc != VC_SUCCESS)
            FAIL("send to a peer busy for %.1f s failed after %.1f s: %s", 3 * timeout, dt,
                 vc_strerror(rc));
        else if (dt < 2 * timeout)
            FAIL("send completed after %.1f s, before the busy peer could answer", dt);
        OK(vc_finalize());
        printf("%s: busy peer answered after %.1f s; its first send waited, not failed\n",
               mp_fails ? "FAIL" : "PASS", dt);
        return mp_fails != 0;
    }
    pid_t pid = peer_pid(1);
    int bad = rc != VC_ERR_PEER_FAILED || dt > timeout + 5;
    if (bad)
        printf("FAIL: send to a stopped peer returned %s after %.1f s (want "
               "VC_ERR_PEER_FAILED within %.1f s)\n", vc_strerror(rc), dt, timeout + 5);
    else
        printf("PASS: first contact with stopped rank 1 failed after %.1f s: %s\n", dt,
               vc_strerror(rc));
    fflush(stdout);
    if (pid > 0)
        kill(pid, SIGKILL);
    _exit(bad);
}

int main(int argc, char **argv)
{
    /* log-depth schedules even where the automatic choice is linear */
    setenv("VCOLL_BARRIER_ALG", "dissemination", 0);
    setenv("VCOLL_ALLREDUCE_ALG", "recursive_doubling", 0);
    mp_init(&argc, &argv);
    if (argc > 1)
        return first_contact(argv[1]);
    net_usage_t u;
    net_usage(ctx_lib.rc, ctx_lib.ud, ctx_lib.net_env.hb, &u);
    report("init", &u);
    if (u.rc_qps != 0)
        FAIL("%d RC QPs exist right after vc_init (want 0)", u.rc_qps);
    /* host name, node agreement, rc/ud/hb/shm blobs: a few hundred bytes,
       whatever the job size (the old rc blob was 8 B per rank) */
    if (boot_put_bytes(&ctx_lib.boot) > 1024)
        FAIL("published %zu B of endpoint data at %d ranks", boot_put_bytes(&ctx_lib.boot), mp_size);

    expect = calloc((size_t)mp_size, 1);
    int *list = malloc(sizeof(int) * (size_t)mp_size);
    if (!expect || !list)
        return 1;

    /* a group made by its members agrees on its context id over a binomial
       tree on its list: index i's parent is i less its lowest set bit, its
       children i + 1, i + 2, ... below that bit (the root, index 0: all
       powers of two) */
    for (int i = 0; i < mp_size; i++)
        list[i] = mp_size - 1 - i;
    vc_comm_t g;
    OK(vc_comm_create_group(VC_COMM_WORLD, mp_size, list, 11, &g));
    int idx = mp_size - 1 - mp_rank, low = 1;
    for (; low < mp_size && !(idx & low); low <<= 1)
        if (idx + low < mp_size)
            expect[list[idx + low]] = 1;
    if (idx)
        expect[list[idx - low]] = 1;
    int grank = -1;
    OK(vc_comm_rank(g, &grank));
    if (grank != idx)
        FAIL("group: rank %d, want %d (its place in the list)", grank, idx);
    OK(vc_comm_free(&g));
    settle(&u);
    report("group", &u);
    if (u.rc_qps != expected() || u.rc_up != expected())
        FAIL("after making a group: %d RC QPs, %d connected; want exactly %d (its tree "
             "neighbours that RC serves)", u.rc_qps, u.rc_up, expected());

    /* ring */
    int right = (mp_rank + 1) % mp_size, left = (mp_rank - 1 + mp_size) % mp_size;
    int out = mp_rank * 7 + 1, in = -1;
    OK(vc_sendrecv(&out, 1, VC_INT32, right, 5, &in, 1, VC_INT32, left, 5, VC_COMM_WORLD,
                   VC_STATUS_IGNORE));
    if (in != left * 7 + 1)
        FAIL("ring: got %d from rank %d, want %d", in, left, left * 7 + 1);
    expect[right] = expect[left] = 1;
    int want = expected();
    settle(&u);
    report("ring", &u);
    if (u.rc_qps != want || u.rc_up != want)
        FAIL("after the ring: %d RC QPs, %d connected; want exactly %d (the RC-served "
             "neighbours and the group's tree)", u.rc_qps, u.rc_up, want);

    /* collectives: O(log p) more */
    OK(vc_barrier(VC_COMM_WORLD));
    int64_t v = mp_rank + 1, sum = 0;
    OK(vc_allreduce(&v, &sum, 1, VC_INT64, VC_SUM, VC_COMM_WORLD));
    if (sum != (int64_t)mp_size * (mp_size + 1) / 2)
        FAIL("allreduce: %lld, want %lld", (long long)sum, (long long)mp_size * (mp_size + 1) / 2);
    settle(&u);
    report("coll", &u);
    int bound = want + 2 * ceil_log2(mp_size);
    if (u.rc_qps > bound || u.rc_up != u.rc_qps)
        FAIL("after a barrier and an allreduce: %d RC QPs (%d connected); want at most "
             "%d = ring and tree + 2 log2 p", u.rc_qps, u.rc_up, bound);

    /* all pairs at once: both sides of every pair start connecting together */
    int *sbuf = malloc(sizeof(int) * (size_t)mp_size), *rbuf = malloc(sizeof(int) * (size_t)mp_size);
    vc_request_t *rq = malloc(sizeof *rq * 2 * (size_t)mp_size);
    if (!sbuf || !rbuf || !rq)
        return 1;
    int n = 0;
    for (int p = 0; p < mp_size; p++) {
        sbuf[p] = mp_rank * 1000 + p;
        rbuf[p] = -1;
        if (p == mp_rank)
            continue;
        OK(vc_irecv(&rbuf[p], 1, VC_INT32, p, 9, VC_COMM_WORLD, &rq[n++]));
        OK(vc_isend(&sbuf[p], 1, VC_INT32, p, 9, VC_COMM_WORLD, &rq[n++]));
    }
    OK(vc_waitall(n, rq, NULL));
    int served = 0;
    for (int p = 0; p < mp_size; p++) {
        if (p != mp_rank && rbuf[p] != p * 1000 + mp_rank)
            FAIL("all-pairs: got %d from rank %d, want %d", rbuf[p], p, p * 1000 + mp_rank);
        served += rc_served(p);
    }
    settle(&u);
    report("all-pairs", &u);
    if (u.rc_qps != served || u.rc_up != served)
        FAIL("after all pairs: %d RC QPs, %d connected; want exactly %d, one per "
             "RC-served peer", u.rc_qps, u.rc_up, served);
    free(sbuf);
    free(rbuf);
    free(rq);
    free(list);
    free(expect);
    int fails = mp_fails, total = 0;
    OK(vc_allreduce(&fails, &total, 1, VC_INT32, VC_SUM, VC_COMM_WORLD));
    if (mp_rank == 0)
        printf("%s: mp_ondemand on %d ranks (%s)\n", total ? "FAIL" : "PASS", mp_size,
               ctx_lib.rc ? "rc on demand" : "no rc peers");
    OK(vc_finalize());
    return total ? 1 : 0;
}
