/*
 * fuzz_p2p.c -- libFuzzer harness for the p2p wire parser (p2p_on_packet):
 * EAGER, RTS, FIN, CTS and DATA packets from any of 4 world ranks, arriving
 * while this rank (0) has receives posted and rendezvous sends in flight,
 * over a fake transport that accepts everything (and can refuse get(), to
 * reach the streamed protocol).
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

static int refuse_get;
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
static const net_ops_t f_ops = {.send = f_send, .progress = f_progress,
                                .mem_expose = f_expose, .mem_release = f_release,
                                .get = f_get};
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
                      i & 1, &reqs[nreq]) == VC_SUCCESS)
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
    refuse_get = take(&in) & 1;

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
        /* aim FIN/CTS (sreq at 8) and DATA (rreq at 8) at a live request */
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
