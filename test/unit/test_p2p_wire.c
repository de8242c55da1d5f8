/*
 * test_p2p_wire.c -- a packet in memory its sender can still write.
 *
 * A same-node peer's packet arrives in a shared-memory cell the peer can
 * write at any time. p2p_on_packet must copy the header once and use only
 * the copy: if it checks one read of the length and then acts on another,
 * a peer that changes the length in between makes it copy past the cell
 * and report a length it never checked.
 *
 * Here a thread keeps flipping an EAGER header's length between the true
 * one and a forged larger one while the packet is delivered again and
 * again. Every delivery must either be dropped (the forged length was the
 * one checked) or complete with the true length; never the forged one.
 * Setup as in test/fuzz/fuzz_p2p.c: this rank (0) of 4 over a transport
 * that accepts everything.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ctx.h"
#include "core/comm.h"
#include "core/request.h"
#include "p2p/p2p.h"
#include "p2p/p2p_state.h"
#include "p2p/proto.h"
#include "p2p_world.h"

#define NRANKS 4
#define TRUE_LEN 100
#define FORGED_LEN 60000

static unsigned char captured[sizeof(p2p_hdr_t)];
static int ncaptured;

static int f_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    (void)n, (void)peer;
    if (iovcnt > 0 && iov[0].iov_len >= sizeof captured) {
        memcpy(captured, iov[0].iov_base, sizeof captured);
        ncaptured++;
    }
    return VC_SUCCESS;
}
static int f_progress(net_t *n) { (void)n; return 0; }
static const net_ops_t f_ops = {.send = f_send, .progress = f_progress};
static net_t f_net = {.ops = &f_ops, .name = "test", .max_packet = 4096};

static int setup(void)
{
    return p2p_world_setup(NRANKS, &f_net);
}

/* the "shared cell": far larger than the packet, so a forged length reads
   memory the process owns (wrong data, not a crash, in a plain build) */
static unsigned char cell[FORGED_LEN + 4096] __attribute__((aligned(64)));
static volatile int stop;

static void *flipper(void *arg)
{
    (void)arg;
    uint64_t *len = (uint64_t *)(cell + offsetof(p2p_hdr_t, len));
    while (!stop) {
        __atomic_store_n(len, FORGED_LEN, __ATOMIC_RELAXED);
        __atomic_store_n(len, TRUE_LEN, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_len_changes_under_us(void)
{
    /* a real EAGER header of this build, as rank 1 of the world would send */
    char payload[TRUE_LEN];
    memset(payload, 7, sizeof payload);
    struct vc_request *sr = NULL;
    int rc = p2p_isend(payload, sizeof payload, 1, 7, VC_COMM_WORLD, 0, &sr);
    CU_ASSERT_FATAL(rc == VC_SUCCESS && ncaptured == 1);
    if (sr)
        req_free(sr);
    p2p_hdr_t h;
    memcpy(&h, captured, sizeof h);
    CU_ASSERT_FATAL(h.type == P2P_EAGER && h.len == TRUE_LEN);
    h.src = 1;
    memcpy(cell, &h, sizeof h);
    memset(cell + sizeof h, 0x5a, sizeof cell - sizeof h);

    static char rbuf[FORGED_LEN + 1024];
    pthread_t t;
    pthread_create(&t, NULL, flipper, NULL);
    const char *e = getenv("P2P_WIRE_ITERS");
    int iters = e ? atoi(e) : 1000000, ok = 0, dropped = 0, forged = 0;
    for (int i = 0; i < iters; i++) {
        struct vc_request *r;
        if (p2p_irecv(rbuf, sizeof rbuf, 1, 7, VC_COMM_WORLD, 0, 0, &r) != VC_SUCCESS) {
            CU_FAIL("p2p_irecv");
            break;
        }
        p2p_on_packet(p2p_world, 1, cell, sizeof h + TRUE_LEN);
        if (!r->done) {
            p2p_cancel(p2p_world, r);
            dropped++;
        } else if (r->status.bytes == TRUE_LEN && !r->status.error) {
            ok++;
        } else {
            forged++;
        }
        req_free(r);
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("\n    %d deliveries: %d complete, %d dropped, %d with the forged length ",
           iters, ok, dropped, forged);
    CU_ASSERT_EQUAL(forged, 0);
    CU_ASSERT_EQUAL(ok + dropped, iters);
}

int main(void)
{
    if (setup())
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("p2p wire", NULL, NULL);
    CU_add_test(s, "a header changed by its sender while delivered", test_len_changes_under_us);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
