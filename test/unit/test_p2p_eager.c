/*
 * test_p2p_eager.c -- which packets p2p makes of a message, by size: an
 * ordinary eager message and a stream's DATA stay within the transport's
 * eager packet; a fan-in eager send (p2p_send_fast, P2P_SEND_EAGER) may
 * fill its larger fan-in packet, where the transport offers one (shm with
 * more ranks than cores), and nothing past it.
 *
 * This rank (0) of 4 over a fake transport that records every packet
 * (p2p_world.h); the eager limit there is 1024 bytes.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/comm.h"
#include "core/request.h"
#include "p2p/p2p.h"
#include "p2p/p2p_state.h"
#include "p2p/proto.h"
#include "p2p_world.h"

#define LIMIT 1024              /* p2p_world_setup's eager limit */
#define EAGER_PKT 2048          /* the fake transport's eager packet */
#define FANIN_PKT 8192          /* ... and its fan-in packet */
#define MAX_PKT 8192

static struct {
    uint8_t type;
    size_t len;                 /* the whole packet */
    uint64_t sreq;              /* RTS */
} sent[64];
static int nsent;

static int f_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    (void)peer;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > n->max_packet)
        return VC_ERR_ARG;      /* what a real transport refuses */
    if (nsent < 64) {
        const uint8_t *h = iov[0].iov_base;
        sent[nsent].type = h[0];
        sent[nsent].len = len;
        if (h[0] == P2P_RTS && iov[0].iov_len >= sizeof(p2p_rts_t))
            memcpy(&sent[nsent].sreq, h + offsetof(p2p_rts_t, sreq), 8);
    }
    nsent++;
    return VC_SUCCESS;
}
static int f_progress(net_t *n) { (void)n; return 0; }
static const net_ops_t f_ops = {.send = f_send, .progress = f_progress};
static net_t f_net = {.ops = &f_ops, .name = "test", .max_packet = MAX_PKT,
                      .eager_packet = EAGER_PKT};

static char buf[64 << 10];

/* one p2p_send_fast of `bytes` to rank 1: its result (what went out is in sent[]) */
static int send_fast(size_t bytes, int flags)
{
    nsent = 0;
    return p2p_send_fast(buf, bytes, 1, 5, VC_COMM_WORLD, 0, flags);
}

static void test_ordinary_eager(void)
{
    f_net.fanin_packet = FANIN_PKT;
    CU_ASSERT_EQUAL(send_fast(LIMIT, 0), VC_SUCCESS);
    CU_ASSERT(nsent == 1 && sent[0].type == P2P_EAGER && sent[0].len == sizeof(p2p_hdr_t) + LIMIT);
    /* past the eager limit: not eager, whatever the fan-in packet */
    CU_ASSERT_EQUAL(send_fast(LIMIT + 1, 0), NET_AGAIN);
    CU_ASSERT_EQUAL(nsent, 0);
    struct vc_request *r = NULL;
    nsent = 0;
    CU_ASSERT_EQUAL_FATAL(p2p_isend(buf, LIMIT + 1, 1, 5, VC_COMM_WORLD, 0, &r), VC_SUCCESS);
    CU_ASSERT(nsent == 1 && sent[0].type == P2P_RTS);
    p2p_cancel(p2p_world, r);
    req_free(r);
}

static void test_fanin_eager(void)
{
    size_t room = FANIN_PKT - sizeof(p2p_hdr_t);
    f_net.fanin_packet = FANIN_PKT;
    CU_ASSERT_EQUAL(send_fast(room, P2P_SEND_EAGER), VC_SUCCESS);
    CU_ASSERT(nsent == 1 && sent[0].type == P2P_EAGER && sent[0].len == FANIN_PKT);
    CU_ASSERT_EQUAL(send_fast(room + 1, P2P_SEND_EAGER), NET_AGAIN);
    CU_ASSERT_EQUAL(nsent, 0);
    /* a transport without fan-in packets: the eager limit bounds it */
    f_net.fanin_packet = 0;
    CU_ASSERT_EQUAL(send_fast(LIMIT, P2P_SEND_EAGER), VC_SUCCESS);
    CU_ASSERT(nsent == 1 && sent[0].type == P2P_EAGER);
    CU_ASSERT_EQUAL(send_fast(LIMIT + 1, P2P_SEND_EAGER), NET_AGAIN);
    /* a fan-in packet smaller than the eager room takes nothing away */
    f_net.fanin_packet = 64;
    CU_ASSERT_EQUAL(send_fast(LIMIT, P2P_SEND_EAGER), VC_SUCCESS);
    f_net.fanin_packet = FANIN_PKT;
}

/* a rendezvous send the receiver asks to stream: DATA packets no larger
   than the eager packet, although the transport takes larger ones */
static void test_stream_chunks(void)
{
    size_t bytes = 20000;
    struct vc_request *r = NULL;
    nsent = 0;
    CU_ASSERT_EQUAL_FATAL(p2p_isend(buf, bytes, 1, 6, VC_COMM_WORLD, 0, &r), VC_SUCCESS);
    CU_ASSERT_FATAL(nsent == 1 && sent[0].type == P2P_RTS);
    p2p_cts_t cts = {.type = P2P_CTS, .sreq = sent[0].sreq, .rreq = 77, .len = bytes};
    nsent = 0;
    p2p_on_packet(p2p_world, 1, &cts, sizeof cts);
    for (int i = 0; i < 100 && !r->done; i++)
        p2p_progress(p2p_world);
    CU_ASSERT_FATAL(r->done && !r->status.error);
    size_t data = 0, most = 0;
    for (int i = 0; i < nsent && i < 64; i++) {
        CU_ASSERT_EQUAL(sent[i].type, P2P_DATA);
        data += sent[i].len - sizeof(p2p_data_t);
        most = sent[i].len > most ? sent[i].len : most;
    }
    printf("\n    %d DATA packets, the largest %zu bytes ", nsent, most);
    CU_ASSERT_EQUAL(data, bytes);
    CU_ASSERT(most <= EAGER_PKT);
    req_free(r);
}

int main(void)
{
    if (p2p_world_setup(4, &f_net))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("p2p eager sizes", NULL, NULL);
    CU_add_test(s, "ordinary eager stays within the eager limit", test_ordinary_eager);
    CU_add_test(s, "fan-in eager fills the fan-in packet, no more", test_fanin_eager);
    CU_add_test(s, "a stream's DATA stays within the eager packet", test_stream_chunks);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
