/*
 * test_persist.c -- the executor restarting a kept schedule (exec.c:
 * coll_exec_init, coll_exec_restart), on the real p2p layer.
 *
 * This rank is 0 of a world of 2 behind a transport that keeps what it is
 * given; rank 1's messages are this rank's own, handed back as rank 1's
 * (p2p_on_packet). So an allreduce (SUM, recursive doubling: one exchange)
 * of x must give x + x, start after start, with x changed in between --
 * which only holds if every start posts round 0 again on the kept
 * schedule, with the tag fixed at init, and nothing of the last start
 * is left over. A start while one is active is refused; a peer that dies
 * during a start fails that start (VC_ERR_PEER_FAILED), and the request
 * can still be released.
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "coll/coll.h"
#include "coll/sched.h"
#include "core/comm.h"
#include "core/request.h"
#include "p2p/p2p.h"
#include "p2p/p2p_state.h"
#include "p2p/proto.h"
#include "p2p_world.h"

#define NRANKS 2
#define COUNT 6

/* the packets sent, whole (header and payload), in order */
static unsigned char pkts[8][4096];
static size_t pkt_len[8];
static int npkts;

static int f_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    (void)n, (void)peer;
    if (npkts < 8) {
        size_t off = 0;
        for (int i = 0; i < iovcnt && off + iov[i].iov_len <= sizeof pkts[0]; i++) {
            memcpy(pkts[npkts] + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
        pkt_len[npkts] = off;
    }
    npkts++;
    return VC_SUCCESS;
}
static int f_progress(net_t *n) { (void)n; return 0; }
static const net_ops_t f_ops = {.send = f_send, .progress = f_progress};
static net_t f_net = {.ops = &f_ops, .name = "test", .max_packet = 4096};
static coll_state_t cstate;

static int setup(void)
{
    int rc = p2p_world_setup(NRANKS, &f_net);
    vc_comm_world_obj.coll = &cstate;
    return rc;
}

/* rank 1's half of the exchange: packet k as if rank 1 had sent it */
static void echo(int k)
{
    p2p_hdr_t h;
    memcpy(&h, pkts[k], sizeof h);
    h.src = 1;
    memcpy(pkts[k], &h, sizeof h);
    p2p_on_packet(p2p_world, 1, pkts[k], pkt_len[k]);
}

/* a persistent allreduce of COUNT uint32 on rank 0 of 2, tag from init */
static struct vc_request *kept_allreduce(uint32_t *sbuf, uint32_t *rbuf, int tag)
{
    coll_args_t a;
    coll_sched_t s;
    coll_args_set(&a, COLL_ALLREDUCE, 0, NRANKS, 0, COUNT, VC_UINT32, VC_SUM, 0);
    sched_init(&s, &a);
    CU_ASSERT_EQUAL_FATAL(coll_allreduce_recursive_doubling(&a, &s), VC_SUCCESS);
    void *tmp = s.tmp_bytes ? malloc(s.tmp_bytes) : NULL;
    struct vc_request *r = NULL;
    CU_ASSERT_EQUAL_FATAL(coll_exec_init(&s, sbuf, rbuf, tmp, VC_COMM_WORLD, tag, &r),
                          VC_SUCCESS);
    return r;
}

static void test_restart(void)
{
    uint32_t sbuf[COUNT], rbuf[COUNT];
    int tag = (int)(COLL_TAG_HALF | 3u);
    npkts = 0;
    struct vc_request *r = kept_allreduce(sbuf, rbuf, tag);
    /* init communicates nothing and leaves the request inactive */
    CU_ASSERT_EQUAL(npkts, 0);
    CU_ASSERT(req_inactive(r));
    CU_ASSERT(r->done);
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < COUNT; i++) {
            sbuf[i] = (uint32_t)(1000 * it + 7 * i + 1);
            rbuf[i] = 0xdeadbeef;
        }
        int sent = npkts;
        CU_ASSERT_EQUAL(coll_exec_restart(r), VC_SUCCESS);
        /* round 0 is posted at once: one message, on the tag of init */
        CU_ASSERT_EQUAL_FATAL(npkts, sent + 1);
        p2p_hdr_t h;
        memcpy(&h, pkts[sent % 8], sizeof h);
        CU_ASSERT_EQUAL(h.tag, tag);
        CU_ASSERT_EQUAL(h.len, sizeof sbuf);
        CU_ASSERT_FALSE(r->done);
        CU_ASSERT_EQUAL(r->persist, PERSIST_ACTIVE);
        /* active: another start is refused and changes nothing */
        CU_ASSERT_EQUAL(coll_exec_restart(r), VC_ERR_REQUEST);
        CU_ASSERT_EQUAL(npkts, sent + 1);
        echo(sent % 8);
        CU_ASSERT_EQUAL(p2p_wait(p2p_world, r), VC_SUCCESS);
        for (int i = 0; i < COUNT; i++)
            CU_ASSERT_EQUAL(rbuf[i], 2 * sbuf[i]);
        CU_ASSERT_EQUAL(r->status.error, VC_SUCCESS);
        r->persist = PERSIST_INACTIVE;      /* what vc_wait does */
    }
    req_free(r);
    CU_ASSERT(list_empty(&cstate.kept));
}

/* the rank-1 half arrives before the start: it waits as unexpected, and
   the start still pairs with it (starts need not be ordered alike) */
static void test_early_peer(void)
{
    uint32_t sbuf[COUNT], rbuf[COUNT];
    int tag = (int)(COLL_TAG_HALF | 4u);
    npkts = 0;
    struct vc_request *r = kept_allreduce(sbuf, rbuf, tag);
    for (int i = 0; i < COUNT; i++)
        sbuf[i] = (uint32_t)(5 + i);
    CU_ASSERT_EQUAL(coll_exec_restart(r), VC_SUCCESS);
    echo(0);
    CU_ASSERT_EQUAL(p2p_wait(p2p_world, r), VC_SUCCESS);
    r->persist = PERSIST_INACTIVE;
    /* now "rank 1" is ahead: its half of the next start (the payload of
       packet 0 again) arrives before this rank starts */
    echo(0);
    for (int i = 0; i < COUNT; i++)
        sbuf[i] = (uint32_t)(50 + i);
    CU_ASSERT_EQUAL(coll_exec_restart(r), VC_SUCCESS);
    CU_ASSERT_EQUAL(p2p_wait(p2p_world, r), VC_SUCCESS);
    for (int i = 0; i < COUNT; i++)
        CU_ASSERT_EQUAL(rbuf[i], (uint32_t)(50 + i + 5 + i));
    r->persist = PERSIST_INACTIVE;
    req_free(r);
}

/* a peer found dead during a start fails that start; the request is then
   inactive again and can be released with its leftovers */
static void test_dead_peer(void)
{
    uint32_t sbuf[COUNT] = {0}, rbuf[COUNT];
    npkts = 0;
    struct vc_request *r = kept_allreduce(sbuf, rbuf, (int)(COLL_TAG_HALF | 5u));
    CU_ASSERT_EQUAL(coll_exec_restart(r), VC_SUCCESS);
    prog_peer_failed(p2p_world->prog, 1, "killed by the test");
    CU_ASSERT_EQUAL(p2p_wait(p2p_world, r), VC_ERR_PEER_FAILED);
    CU_ASSERT(r->done);
    r->persist = PERSIST_INACTIVE;
    req_free(r);
    CU_ASSERT(list_empty(&cstate.kept));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("persistent executor", setup, NULL);
    CU_add_test(s, "restart a kept schedule, contents changed between starts", test_restart);
    CU_add_test(s, "the peer's half before the start", test_early_peer);
    CU_add_test(s, "a dead peer fails the start", test_dead_peer);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
