/*
 * fuzz_p2p.c -- libFuzzer harness for the p2p wire parser (p2p_on_packet):
 * EAGER, RTS, FIN, CTS, DATA, HELP and HELPED packets from any of 4 world
 * ranks, arriving while this rank (0) has receives posted and rendezvous
 * sends in flight, over a fake transport that accepts everything (and can
 * refuse get(), to reach the streamed protocol, and split large messages,
 * its claim words going to the receiver, the sender or neither as the
 * input says). Its put() never writes: the address is the input's.
 *
 * Input: [nrecv][recv specs: src tag size]... [nsend][send specs: dest size]...
 *        [flags] then packets [src][len lo][len hi][bytes...]
 * A packet whose second byte has its top bit set gets the handle field of
 * request (byte & 7) written in, so the deep paths (a FIN, CTS or DATA that
 * names a live request) are reached; every other field stays the fuzzer's.
 * Every request is cancelled and freed after each input, and the p2p state
 * rebuilt, so inputs do not leak into each other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/ctx.h"
#include "core/comm.h"
#include "p2p/p2p.h"
#include "p2p/p2p_state.h"
#include "p2p/proto.h"
#include "../unit/p2p_world.h"

#define NRANKS 4
#define MAXREQ 12
#define BUFSZ (64 * 1024)

static int refuse_get, claim_mine, claim_sender, put_fails;
static unsigned char rbufs[MAXREQ][BUFSZ], sbuf[BUFSZ];

static int f_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    (void)n; (void)peer; (void)iov; (void)iovcnt;
    return VC_SUCCESS;
}
static int f_progress(net_t *n) { (void)n; return 0; }
static int f_expose(net_t *n, const void *buf, size_t len, net_key_t *key, void **h)
{
    (void)n; (void)buf; (void)len;
    memset(key, 0, sizeof *key);
    *h = sbuf;
    return VC_SUCCESS;
}
static int f_release(net_t *n, void *h) { (void)n; (void)h; return VC_SUCCESS; }
static int f_get(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
                 const net_key_t *key, void *cookie)
{
    (void)n; (void)peer; (void)raddr; (void)key;
    if (refuse_get)
        return VC_ERR_UNSUPPORTED;
    memset(dst, 0xab, len);          /* the pulled bytes */
    p2p_on_get_done(p2p_world, cookie, VC_SUCCESS);   /* the upcall arg, as a transport passes it */
    return VC_SUCCESS;
}
static int f_claim_open(net_t *n, int peer, uint64_t *token)
{
    (void)n; (void)peer;
    *token = 5;
    return VC_SUCCESS;
}
static int f_claim_take(net_t *n, int peer, uint64_t token, int owner)
{
    (void)n; (void)peer; (void)token;
    return owner ? claim_mine : claim_sender;
}
static void f_claim_close(net_t *n, int peer, uint64_t token) { (void)n; (void)peer; (void)token; }
static int f_put(net_t *n, int peer, uint64_t token, const void *src, size_t len,
                 uint64_t raddr)
{
    (void)n; (void)peer; (void)token; (void)raddr;
    volatile unsigned char sink = len ? ((const unsigned char *)src)[len - 1] : 0;
    (void)sink;     /* the part must lie in the send buffer (ASan checks) */
    return put_fails ? VC_ERR_TRANSPORT : VC_SUCCESS;
}
static const net_ops_t f_ops = {.send = f_send, .progress = f_progress,
                                .mem_expose = f_expose, .mem_release = f_release,
                                .get = f_get, .claim_open = f_claim_open,
                                .claim_take = f_claim_take, .claim_close = f_claim_close,
                                .put = f_put};
static net_t f_net = {.ops = &f_ops, .name = "fuzz", .max_packet = 4096};

static int setup(void)
{
    return p2p_world_setup(NRANKS, &f_net);
}

typedef struct { const uint8_t *p; size_t n; } in_t;
static int take(in_t *in)
{
    if (!in->n)
        return -1;
    in->n--;
    return *in->p++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (setup())
            abort();
        ready = 1;
    }
    in_t in = {data, size};
    struct vc_request *reqs[MAXREQ];
    int nreq = 0, b;

    int nrecv = (b = take(&in)) < 0 ? 0 : b % 8;
    for (int i = 0; i < nrecv && nreq < MAXREQ; i++) {
        int src = take(&in), tag = take(&in), sz = take(&in);
        if (sz < 0)
            break;
        src = src % (NRANKS + 1) - 1;              /* -1 = VC_ANY_SOURCE */
        tag = tag % 5 - 1;                         /* -1 = VC_ANY_TAG */
        if (p2p_irecv(rbufs[nreq], (size_t)sz * 256, src, tag, VC_COMM_WORLD,
                      i & 1, i >> 1 & 1, &reqs[nreq]) == VC_SUCCESS)
            nreq++;
    }
    int nsend = (b = take(&in)) < 0 ? 0 : b % 4;
    for (int i = 0; i < nsend && nreq < MAXREQ; i++) {
        int dest = take(&in), sz = take(&in);
        if (sz < 0)
            break;
        dest = 1 + dest % (NRANKS - 1);
        if (p2p_isend(sbuf, 1025 + (size_t)sz * 200, dest, 7, VC_COMM_WORLD, 0,
                      &reqs[nreq]) == VC_SUCCESS)
            nreq++;
    }
    /* flags: 1 refuse get, 2 split from 1 KiB, 4 the receiver wins the
       claim, 8 the sender does, 16 put fails */
    int flags = take(&in);
    flags = flags < 0 ? 0 : flags;
    refuse_get = flags & 1;
    f_net.split_min = flags & 2 ? 1024 : 0;
    claim_mine = !!(flags & 4);
    claim_sender = !!(flags & 8);
    put_fails = !!(flags & 16);

    unsigned char pkt[4096 + 64];
    while (in.n >= 3) {
        int src = take(&in) % NRANKS;
        size_t len = (size_t)take(&in);
        len |= (size_t)take(&in) << 8;
        if (len > in.n)
            len = in.n;
        if (len > sizeof pkt)
            len = sizeof pkt;
        memcpy(pkt, in.p, len);
        in.p += len;
        in.n -= len;
        /* aim FIN/CTS/HELP (sreq at 8) and DATA/HELPED (rreq at 8) at a
           live request */
        if (len >= 16 && (pkt[1] & 0x80) && nreq) {
            uint64_t h = req_handle(reqs[(pkt[1] & 7) % nreq]);
            memcpy(pkt + 8, &h, sizeof h);
        }
        p2p_on_packet(p2p_world, src, pkt, len);
    }

    for (int i = 0; i < nreq; i++) {
        if (!reqs[i]->done)
            p2p_cancel(p2p_world, reqs[i]);
        req_free(reqs[i]);
    }
    if (p2p_world_reset())
        abort();
    return 0;
}
