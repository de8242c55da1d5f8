/*
 * test_p2p_split.c -- split copies (p2p/proto.h): a large message copied
 * by both ends, each part going to whoever takes its claim word first.
 *
 * This rank (0 of 4, p2p_world.h) sits behind a fake transport whose get()
 * copies from a "remote" buffer in this process, whose claim words are
 * decided by the test, whose put() records what it was asked, and which
 * captures every packet sent. Each case checks the bytes that land, the
 * status, and which packets go back (HELP, FIN, CTS, HELPED) in which order:
 *   receiver wins the claim: it gets both halves, FIN, claim closed
 *   sender wins: nothing completes until HELPED, then FIN
 *   sender's put fails: HELPED(error), the receiver gets the half itself
 *   get refused (CMA off): the half is settled first, then streamed (CTS)
 *   truncated receive: split on what fits, status VC_ERR_TRUNCATE
 *   as the sender: HELP within the message is put, out of range dropped,
 *   a claim the receiver took back is left alone
 */
#include <CUnit/Basic.h>
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
#define MSG (64 * 1024)
#define SPLIT_MIN 4096

static unsigned char remote[MSG], rbuf[MSG + 64], sbuf[MSG];

/* the fake transport's state: what the test sets and what it records */
static int refuse_get, claim_mine, claim_sender, put_status, nput, nclose, nget;
static uint64_t put_raddr;
static size_t put_len;
static const void *put_src;
static uint8_t sent[16];          /* packet types sent, in order */
static unsigned char last_pkt[64];
static int nsent;

static int f_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    (void)n, (void)peer, (void)iovcnt;
    if (nsent < (int)sizeof sent)
        sent[nsent++] = *(const uint8_t *)iov[0].iov_base;
    memcpy(last_pkt, iov[0].iov_base, iov[0].iov_len < sizeof last_pkt ? iov[0].iov_len
                                                                       : sizeof last_pkt);
    return VC_SUCCESS;
}
static int f_progress(net_t *n) { (void)n; return 0; }
static int f_expose(net_t *n, const void *buf, size_t len, net_key_t *key, void **h)
{
    (void)n, (void)buf, (void)len;
    memset(key, 0, sizeof *key);
    *h = NULL;
    return VC_SUCCESS;
}
static int f_release(net_t *n, void *h) { (void)n, (void)h; return VC_SUCCESS; }
static int f_get(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
                 const net_key_t *key, void *cookie)
{
    (void)n, (void)peer, (void)key;
    nget++;
    if (refuse_get)
        return VC_ERR_UNSUPPORTED;
    memcpy(dst, (const void *)(uintptr_t)raddr, len);
    p2p_on_get_done(p2p_world, cookie, VC_SUCCESS);
    return VC_SUCCESS;
}
static int f_claim_open(net_t *n, int peer, uint64_t *token)
{
    (void)n, (void)peer;
    *token = 42;
    return VC_SUCCESS;
}
static int f_claim_take(net_t *n, int peer, uint64_t token, int owner)
{
    (void)n, (void)peer;
    CU_ASSERT_EQUAL(token, 42);
    return owner ? claim_mine : claim_sender;
}
static void f_claim_close(net_t *n, int peer, uint64_t token)
{
    (void)n, (void)peer;
    CU_ASSERT_EQUAL(token, 42);
    nclose++;
}
static int f_put(net_t *n, int peer, uint64_t token, const void *src, size_t len,
                 uint64_t raddr)
{
    (void)n, (void)peer, (void)token;
    nput++;
    put_src = src;
    put_len = len;
    put_raddr = raddr;
    return put_status;
}
static const net_ops_t f_ops = {.send = f_send, .progress = f_progress,
                                .mem_expose = f_expose, .mem_release = f_release,
                                .get = f_get, .claim_open = f_claim_open,
                                .claim_take = f_claim_take, .claim_close = f_claim_close,
                                .put = f_put};
static net_t f_net = {.ops = &f_ops, .name = "test", .max_packet = 4096,
                      .split_min = SPLIT_MIN};

static void reset(void)
{
    refuse_get = claim_mine = claim_sender = put_status = nput = nclose = nsent = nget = 0;
    for (size_t i = 0; i < MSG; i++)
        remote[i] = (unsigned char)(i * 7 + 3);
    memset(rbuf, 0xee, sizeof rbuf);
}

/* a receive of cap bytes from rank 1 (p2p_irecv flags rflags), then its
   RTS for MSG bytes (header flags hflags) */
static struct vc_request *recv_rts_f(size_t cap, int rflags, int hflags)
{
    struct vc_request *r;
    CU_ASSERT_FATAL(p2p_irecv(rbuf, cap, 1, 9, VC_COMM_WORLD, 0, rflags, &r) == VC_SUCCESS);
    p2p_rts_t rts = {.h = {.type = P2P_RTS, .flags = (uint8_t)hflags, .ctx = 0, .src = 1,
                           .tag = 9, .len = MSG},
                     .sreq = 0x77, .addr = (uint64_t)(uintptr_t)remote};
    p2p_on_packet(p2p_world, 1, &rts, sizeof rts);
    return r;
}
static struct vc_request *recv_rts(size_t cap) { return recv_rts_f(cap, 0, 0); }

static void helped(struct vc_request *r, int status)
{
    p2p_helped_t h = {.type = P2P_HELPED, .status = status, .rreq = req_handle(r)};
    p2p_on_packet(p2p_world, 1, &h, sizeof h);
}

static void check_bytes(size_t n, const char *what)
{
    if (memcmp(rbuf, remote, n)) {
        fprintf(stderr, "  %s: received bytes differ\n", what);
        CU_FAIL(what);
    }
    CU_ASSERT_EQUAL(rbuf[n], 0xee);    /* nothing past what was asked */
}

static void test_receiver_wins(void)
{
    reset();
    claim_mine = 1;
    struct vc_request *r = recv_rts(MSG);
    CU_ASSERT(r->done);
    CU_ASSERT_EQUAL(r->status.error, VC_SUCCESS);
    CU_ASSERT_EQUAL(r->status.bytes, MSG);
    check_bytes(MSG, "receiver wins");
    CU_ASSERT_EQUAL(nsent, 2);
    CU_ASSERT_EQUAL(sent[0], P2P_HELP);
    CU_ASSERT_EQUAL(sent[1], P2P_FIN);
    CU_ASSERT_EQUAL(nclose, 1);
    req_free(r);
}

static void test_sender_wins(void)
{
    reset();
    struct vc_request *r = recv_rts(MSG);
    CU_ASSERT_FATAL(nsent == 1 && sent[0] == P2P_HELP);
    p2p_help_t hp;
    memcpy(&hp, last_pkt, sizeof hp);
    /* the sender's part: the tail after a page boundary, into my buffer */
    CU_ASSERT(hp.off > 0 && hp.off < MSG && hp.off % 4096 == 0);
    CU_ASSERT_EQUAL(hp.len, MSG - hp.off);
    CU_ASSERT_EQUAL(hp.addr, (uint64_t)(uintptr_t)rbuf + hp.off);
    CU_ASSERT_EQUAL(hp.sreq, 0x77);
    CU_ASSERT(!r->done);                  /* my part alone is in */
    CU_ASSERT(!memcmp(rbuf, remote, hp.off));
    CU_ASSERT_EQUAL(rbuf[hp.off], 0xee);
    memcpy(rbuf + hp.off, remote + hp.off, hp.len);   /* what the sender's put does */
    helped(r, VC_SUCCESS);
    CU_ASSERT(r->done);
    CU_ASSERT_EQUAL(r->status.error, VC_SUCCESS);
    check_bytes(MSG, "sender wins");
    CU_ASSERT(nsent == 2 && sent[1] == P2P_FIN);
    CU_ASSERT_EQUAL(nclose, 1);
    helped(r, VC_SUCCESS);                /* a second HELPED: stale, dropped */
    CU_ASSERT_EQUAL(nsent, 2);
    req_free(r);
}

static void test_put_fails(void)
{
    reset();
    struct vc_request *r = recv_rts(MSG);
    CU_ASSERT(!r->done);
    helped(r, VC_ERR_TRANSPORT);          /* nothing was written: get it myself */
    CU_ASSERT(r->done);
    CU_ASSERT_EQUAL(r->status.error, VC_SUCCESS);
    check_bytes(MSG, "put failed");
    CU_ASSERT(nsent == 2 && sent[1] == P2P_FIN);
    req_free(r);
}

static void test_get_refused(void)
{
    reset();
    refuse_get = 1;
    claim_mine = 1;
    struct vc_request *r = recv_rts(MSG);
    /* settled (mine) before anything else: then the whole message streamed */
    CU_ASSERT(!r->done);
    CU_ASSERT(nsent == 2 && sent[0] == P2P_HELP && sent[1] == P2P_CTS);
    p2p_cts_t cts;
    memcpy(&cts, last_pkt, sizeof cts);
    CU_ASSERT_EQUAL(cts.len, MSG);
    CU_ASSERT_EQUAL(cts.sreq, 0x77);
    CU_ASSERT_EQUAL(nclose, 1);
    p2p_cancel(p2p_world, r);
    req_free(r);

    /* refused, and the sender holds the claim: wait for its HELPED first */
    reset();
    refuse_get = 1;
    r = recv_rts(MSG);
    CU_ASSERT(!r->done && nsent == 1);
    helped(r, VC_SUCCESS);
    CU_ASSERT(!r->done);
    CU_ASSERT(nsent == 2 && sent[1] == P2P_CTS);
    p2p_cancel(p2p_world, r);
    req_free(r);
}

static void test_truncated(void)
{
    reset();
    claim_mine = 1;
    size_t cap = 40 * 1024;
    struct vc_request *r = recv_rts(cap);
    CU_ASSERT(r->done);
    CU_ASSERT_EQUAL(r->status.error, VC_ERR_TRUNCATE);
    CU_ASSERT_EQUAL(r->status.bytes, cap);
    check_bytes(cap, "truncated");
    CU_ASSERT(nsent == 2 && sent[0] == P2P_HELP && sent[1] == P2P_FIN);
    req_free(r);
}

static void test_sender_side(void)
{
    reset();
    struct vc_request *s;
    CU_ASSERT_FATAL(p2p_isend(sbuf, MSG, 1, 5, VC_COMM_WORLD, 0, &s) == VC_SUCCESS);
    CU_ASSERT(nsent == 1 && sent[0] == P2P_RTS);
    p2p_help_t hp = {.type = P2P_HELP, .sreq = req_handle(s), .rreq = 0x99, .token = 42,
                     .off = 8192, .len = MSG - 8192, .addr = 0x5000};
    /* the receiver took it back: no put, no answer */
    p2p_on_packet(p2p_world, 1, &hp, sizeof hp);
    CU_ASSERT_EQUAL(nput, 0);
    CU_ASSERT_EQUAL(nsent, 1);
    /* mine: put exactly that part of my buffer, then HELPED */
    claim_sender = 1;
    p2p_on_packet(p2p_world, 1, &hp, sizeof hp);
    CU_ASSERT_EQUAL(nput, 1);
    CU_ASSERT(put_src == sbuf + 8192 && put_len == MSG - 8192 && put_raddr == 0x5000);
    CU_ASSERT(nsent == 2 && sent[1] == P2P_HELPED);
    p2p_helped_t hd;
    memcpy(&hd, last_pkt, sizeof hd);
    CU_ASSERT(hd.rreq == 0x99 && hd.status == VC_SUCCESS);
    CU_ASSERT(!s->done);                  /* until FIN */
    /* past the message, from another rank, or for no request: dropped */
    hp.len = MSG - 8192 + 1;
    p2p_on_packet(p2p_world, 1, &hp, sizeof hp);
    hp.len = 100;
    p2p_on_packet(p2p_world, 2, &hp, sizeof hp);
    hp.sreq ^= 1ull << 40;
    p2p_on_packet(p2p_world, 1, &hp, sizeof hp);
    CU_ASSERT_EQUAL(nput, 1);
    CU_ASSERT_EQUAL(nsent, 2);
    p2p_fin_t fin = {.type = P2P_FIN, .sreq = req_handle(s)};
    p2p_on_packet(p2p_world, 1, &fin, sizeof fin);
    CU_ASSERT(s->done);
    req_free(s);
}

/* Below split_min, only a sender with nothing else in flight (P2P_F_LONE)
   is asked to help, and never for a receive this rank folds at once;
   never a sender with receives posted (P2P_F_BUSY) */
static void test_lone(void)
{
    f_net.split_min = 2 * MSG;
    f_net.split_lone_min = SPLIT_MIN;
    struct {
        int rflags, hflags, split;
    } c[] = {{0, 0, 0}, {0, P2P_F_LONE, 1}, {P2P_RECV_HOT, P2P_F_LONE, 0}, {P2P_RECV_HOT, 0, 0}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        reset();
        claim_mine = 1;
        struct vc_request *r = recv_rts_f(MSG, c[i].rflags, c[i].hflags);
        CU_ASSERT(r->done);
        check_bytes(MSG, "lone");
        if (c[i].split) {
            CU_ASSERT(nsent == 2 && sent[0] == P2P_HELP && sent[1] == P2P_FIN);
        } else {
            CU_ASSERT(nsent == 1 && sent[0] == P2P_FIN);
        }
        req_free(r);
    }
    f_net.split_min = SPLIT_MIN;
    f_net.split_lone_min = 0;
    /* a sender with receives posted is never asked, whatever the size */
    reset();
    claim_mine = 1;
    struct vc_request *r = recv_rts_f(MSG, 0, P2P_F_BUSY);
    CU_ASSERT(r->done);
    check_bytes(MSG, "busy");
    CU_ASSERT(nsent == 1 && sent[0] == P2P_FIN);
    req_free(r);
}

/* Below the transport's pull_min the receiver never pulls (no get, no
   split): it asks for the whole message as a stream at once (CTS); from
   pull_min on it pulls as before */
static void test_pull_min(void)
{
    reset();
    claim_mine = 1;
    f_net.pull_min = MSG + 1;
    struct vc_request *r = recv_rts(MSG);
    CU_ASSERT(!r->done);
    CU_ASSERT_EQUAL(nget, 0);
    CU_ASSERT(nsent == 1 && sent[0] == P2P_CTS);
    p2p_cts_t cts;
    memcpy(&cts, last_pkt, sizeof cts);
    CU_ASSERT_EQUAL(cts.len, MSG);
    CU_ASSERT_EQUAL(cts.sreq, 0x77);
    p2p_cancel(p2p_world, r);
    req_free(r);

    reset();
    claim_mine = 1;
    f_net.pull_min = MSG;
    r = recv_rts(MSG);
    CU_ASSERT(r->done);
    CU_ASSERT(nget > 0);
    check_bytes(MSG, "pulled at pull_min");
    req_free(r);
    f_net.pull_min = 0;
}

/* the shm transport's pull_min from the timed call and copy: where the
   call costs six hot copies of the bytes, the old 4 KiB edge at least,
   256 KiB at most, 4 KiB when either timing failed */
static void test_shm_pull_min(void)
{
    CU_ASSERT_EQUAL(net_shm_pull_min(1.5, 1.0), 16384);
    CU_ASSERT_EQUAL(net_shm_pull_min(3.0, 0.5), 65536);
    CU_ASSERT_EQUAL(net_shm_pull_min(0.2, 2.0), 4097);    /* bare metal */
    CU_ASSERT_EQUAL(net_shm_pull_min(100, 0.5), 256 * 1024);
    CU_ASSERT_EQUAL(net_shm_pull_min(-1, 0.5), 4097);
    CU_ASSERT_EQUAL(net_shm_pull_min(2.5, -1), 4097);
    CU_ASSERT_EQUAL(net_shm_pull_min(2.5, 0), 4097);
}

/* As the sender: an RTS says LONE when no other rendezvous send of mine
   is alive (not yet freed) and no receive is posted, BUSY when one is */
static void test_lone_flag(void)
{
    reset();
    struct vc_request *a, *b, *c;
    p2p_rts_t rts;
    CU_ASSERT_FATAL(p2p_isend(sbuf, MSG, 1, 5, VC_COMM_WORLD, 0, &a) == VC_SUCCESS);
    memcpy(&rts, last_pkt, sizeof rts);
    CU_ASSERT(rts.h.type == P2P_RTS && rts.h.flags == P2P_F_LONE);
    CU_ASSERT_FATAL(p2p_isend(sbuf, MSG, 2, 5, VC_COMM_WORLD, 0, &b) == VC_SUCCESS);
    memcpy(&rts, last_pkt, sizeof rts);
    CU_ASSERT(rts.h.type == P2P_RTS && rts.h.flags == 0);
    p2p_fin_t fin = {.type = P2P_FIN, .sreq = req_handle(a)};
    p2p_on_packet(p2p_world, 1, &fin, sizeof fin);
    CU_ASSERT(a->done);
    req_free(a);
    CU_ASSERT_FATAL(p2p_isend(sbuf, MSG, 1, 5, VC_COMM_WORLD, 0, &c) == VC_SUCCESS);
    memcpy(&rts, last_pkt, sizeof rts);
    CU_ASSERT(rts.h.flags == 0);            /* b is still out */
    p2p_cancel(p2p_world, b);
    req_free(b);
    p2p_cancel(p2p_world, c);
    req_free(c);
    CU_ASSERT_FATAL(p2p_isend(sbuf, MSG, 1, 5, VC_COMM_WORLD, 0, &a) == VC_SUCCESS);
    memcpy(&rts, last_pkt, sizeof rts);
    CU_ASSERT(rts.h.flags == P2P_F_LONE);
    p2p_cancel(p2p_world, a);
    req_free(a);
    /* a receive of mine waits for data: BUSY */
    struct vc_request *rr;
    CU_ASSERT_FATAL(p2p_irecv(rbuf, MSG, 3, 1, VC_COMM_WORLD, 0, 0, &rr) == VC_SUCCESS);
    CU_ASSERT_FATAL(p2p_isend(sbuf, MSG, 1, 5, VC_COMM_WORLD, 0, &a) == VC_SUCCESS);
    memcpy(&rts, last_pkt, sizeof rts);
    CU_ASSERT(rts.h.flags == P2P_F_BUSY);
    p2p_cancel(p2p_world, a);
    req_free(a);
    p2p_cancel(p2p_world, rr);
    req_free(rr);
}

int main(void)
{
    if (p2p_world_setup(NRANKS, &f_net))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite su = CU_add_suite("p2p split copies", NULL, NULL);
    CU_add_test(su, "the receiver takes the sender's part back", test_receiver_wins);
    CU_add_test(su, "the sender puts its part, HELPED completes", test_sender_wins);
    CU_add_test(su, "the sender's put fails, the receiver gets it", test_put_fails);
    CU_add_test(su, "get refused: settled, then streamed", test_get_refused);
    CU_add_test(su, "truncated receive", test_truncated);
    CU_add_test(su, "as the sender: HELP checked, put, HELPED", test_sender_side);
    CU_add_test(su, "below split_min: only a lone sender, never a hot receive", test_lone);
    CU_add_test(su, "as the sender: LONE while no other rendezvous send lives", test_lone_flag);
    CU_add_test(su, "below pull_min: streamed, never pulled", test_pull_min);
    CU_add_test(su, "shm: pull_min from the timed call", test_shm_pull_min);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned nf = CU_get_number_of_failures();
    CU_cleanup_registry();
    return nf ? 1 : 0;
}
