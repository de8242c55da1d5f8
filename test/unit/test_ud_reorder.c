/*
 * test_ud_reorder.c -- the UD receiver's store of fragments ahead of a gap
 * (src/net/verbs/ud_reorder.c) and reassembly behind it, without an HCA.
 *
 * A model channel carries a stream of fragmented packets from a sender
 * with a window to a receiver that works like ud_progress.c: the expected
 * fragment is taken, with every held one it makes contiguous; one ahead is
 * held; one behind is a duplicate. The channel loses, duplicates and
 * reorders fragments at random; the sender resends what the receiver's
 * selective map does not show. The reference is the byte stream itself:
 * every packet must come out whole, in order, exactly once, and the map
 * must name exactly the held fragments.
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "net/verbs/ud.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void test_put_take(void)
{
    ud_ooo_t o;
    CU_ASSERT_EQUAL(ud_ooo_init(&o, 6, 100), -1);      /* not a power of two */
    CU_ASSERT_EQUAL(ud_ooo_init(&o, 8, 100), 0);
    char d[100];
    memset(d, 'x', sizeof d);
    /* expect 10: 10 itself is never held, 11..17 are, 18 is too far */
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 10, 0, 0, d, 10), -1);
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 18, 0, 0, d, 10), -1);
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 9, 0, 0, d, 10), -1);    /* behind */
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 12, 0, 0, d, 101), -1);  /* larger than a slot */
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 12, UD_F_LAST, 7, d, 3), 1);
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 12, UD_F_LAST, 7, d, 3), 0);   /* held already */
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 10, 17, 0, 0, d, 100), 1);
    CU_ASSERT_TRUE(ud_ooo_has(&o, 12));
    CU_ASSERT_FALSE(ud_ooo_has(&o, 11));
    CU_ASSERT_EQUAL(ud_ooo_sack(&o, 10), (1ull << 1) | (1ull << 6));
    uint8_t fl;
    uint32_t tot, len;
    const char *p;
    CU_ASSERT_EQUAL(ud_ooo_take(&o, 11, &fl, &tot, &p, &len), 0);
    CU_ASSERT_EQUAL(ud_ooo_take(&o, 12, &fl, &tot, &p, &len), 1);
    CU_ASSERT_EQUAL(fl, UD_F_LAST);
    CU_ASSERT_EQUAL(tot, 7);
    CU_ASSERT_EQUAL(len, 3);
    CU_ASSERT_EQUAL(ud_ooo_take(&o, 12, &fl, &tot, &p, &len), 0);   /* once */
    CU_ASSERT_EQUAL(o.held, 1);
    /* wrap-around of the 32-bit sequence space */
    ud_ooo_free(&o);
    CU_ASSERT_EQUAL(ud_ooo_init(&o, 64, 16), 0);
    CU_ASSERT_EQUAL(ud_ooo_put(&o, 0xfffffffeu, 0x00000001u, 0, 0, d, 1), 1);
    CU_ASSERT_EQUAL(ud_ooo_sack(&o, 0xfffffffeu), 1ull << 2);
    CU_ASSERT_TRUE(ud_ooo_has(&o, 1));
    /* an empty store (never initialised) holds and takes nothing */
    ud_ooo_t z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_EQUAL(ud_ooo_put(&z, 0, 1, 0, 0, d, 1), -1);
    CU_ASSERT_EQUAL(ud_ooo_take(&z, 1, &fl, &tot, &p, &len), 0);
    CU_ASSERT_EQUAL(ud_ooo_sack(&z, 0), 0);
    ud_ooo_free(&o);
}

/* VCOLL_UD_WINDOW (bytes) to fragments: whole fragments, a power of two
   rounded down, never fewer than two of the largest packets */
static void test_window(void)
{
    size_t mp = UD_MAX_PACKET;              /* 65792 B */
    CU_ASSERT_EQUAL(ud_window_frags(256 << 10, 1024, mp), 256);  /* 67 per packet */
    CU_ASSERT_EQUAL(ud_window_frags(256 << 10, 4096, mp), 64);   /* 17 per packet */
    CU_ASSERT_EQUAL(ud_window_frags(1 << 20, 4096, mp), 256);
    CU_ASSERT_EQUAL(ud_window_frags(300 << 10, 4096, mp), 64);   /* rounded down */
    /* a small window still holds two packets */
    CU_ASSERT_EQUAL(ud_window_frags(8192, 1024, mp), 256);
    CU_ASSERT_EQUAL(ud_window_frags(8192, 4096, mp), 64);
    /* small packets: the byte count alone decides, at least 8 */
    CU_ASSERT_EQUAL(ud_window_frags(8192, 4096, 4096), 8);
    CU_ASSERT_EQUAL(ud_window_frags(64 << 10, 1024, 4096), 64);
}

/* ------------------------------------------------------------ the channel */

#define FRAG 37                 /* payload bytes per fragment */
#define MAXPKT 1000
#define NPKT 300
#define WIN 64                  /* sender window, fragments */
#define STORE 32                /* receiver store, fragments */
#define INFLIGHT 4096

typedef struct frag {
    uint32_t seq, total, len;
    uint8_t flags;
    char data[FRAG];
} frag_t;

typedef struct chan_state {
    /* the stream: packet k has plen[k] bytes of a known pattern */
    uint32_t plen[NPKT];
    frag_t *f;                  /* every fragment, by sequence */
    uint32_t nfrag;
    /* the wire */
    frag_t wire[INFLIGHT];
    int nwire;
    /* receiver */
    uint32_t expect;
    ud_ooo_t o;
    ud_ras_t ras;
    uint32_t pkt_out;           /* packets delivered */
    int bad;
    /* sender */
    uint32_t una, next;
    uint64_t sacked[(NPKT * (MAXPKT / FRAG + 1)) / 64 + 1];
} chan_t;

static char pattern(uint32_t pkt, uint32_t off)
{
    return (char)(pkt * 31u + off * 7u + 3u);
}

static void build_stream(chan_t *c)
{
    uint32_t n = 0;
    for (int k = 0; k < NPKT; k++) {
        c->plen[k] = rnd(4) == 0 ? rnd(FRAG + 1) : rnd(MAXPKT + 1);
        n += c->plen[k] ? (c->plen[k] + FRAG - 1) / FRAG : 1;
    }
    c->f = calloc(n, sizeof *c->f);
    uint32_t s = 0;
    for (uint32_t k = 0; k < NPKT; k++) {
        uint32_t len = c->plen[k], nf = len ? (len + FRAG - 1) / FRAG : 1;
        for (uint32_t i = 0; i < nf; i++, s++) {
            frag_t *f = &c->f[s];
            f->seq = s;
            f->total = len;
            f->len = len - i * FRAG < FRAG ? len - i * FRAG : FRAG;
            f->flags = (uint8_t)((i == 0 ? UD_F_FIRST : 0) | (i + 1 == nf ? UD_F_LAST : 0));
            for (uint32_t b = 0; b < f->len; b++)
                f->data[b] = pattern(k, i * FRAG + b);
        }
    }
    c->nfrag = n;
}

static void wire_put(chan_t *c, const frag_t *f, int loss_pct)
{
    if ((int)rnd(100) < loss_pct || c->nwire == INFLIGHT)
        return;
    c->wire[c->nwire++] = *f;
    if (rnd(10) == 0 && c->nwire < INFLIGHT)   /* duplicated on the way */
        c->wire[c->nwire++] = *f;
}

static void deliver(chan_t *c, const frag_t *f)
{
    const char *out;
    uint32_t olen;
    const char *err = ud_reassemble(&c->ras, MAXPKT, f->flags, f->total, f->data, f->len,
                                    &out, &olen);
    if (err) {
        c->bad++;
        return;
    }
    if (!out)
        return;
    uint32_t k = c->pkt_out++;
    if (k >= NPKT || olen != c->plen[k]) {
        c->bad++;
        return;
    }
    for (uint32_t b = 0; b < olen; b++)
        if (out[b] != pattern(k, b)) {
            c->bad++;
            return;
        }
}

/* what ud_progress.c does with one datagram */
static void receive(chan_t *c, frag_t *f)
{
    if (f->seq == c->expect) {
        for (;;) {
            c->expect++;
            deliver(c, f);
            const char *d;
            static frag_t t;
            if (!ud_ooo_take(&c->o, c->expect, &t.flags, &t.total, &d, &t.len))
                break;
            memcpy(t.data, d, t.len);
            t.seq = c->expect;
            f = &t;
        }
    } else if (!ud_seq_lt(f->seq, c->expect)) {
        ud_ooo_put(&c->o, c->expect, f->seq, f->flags, f->total, f->data, f->len);
    }
}

static int is_sacked(const chan_t *c, uint32_t s)
{
    return (c->sacked[s / 64] >> (s % 64)) & 1;
}

/* the acknowledgement the receiver sends back, applied by the sender */
static void ack(chan_t *c)
{
    uint64_t m = ud_ooo_sack(&c->o, c->expect);
    /* the map names exactly the held fragments within 64 of the ack */
    for (uint32_t b = 0; b < 64; b++)
        if (((m >> b) & 1) != (uint64_t)ud_ooo_has(&c->o, c->expect + 1 + b))
            c->bad++;
    if (ud_seq_lt(c->una, c->expect))
        c->una = c->expect;
    for (; m; m &= m - 1) {
        uint32_t s = c->expect + 1 + (uint32_t)__builtin_ctzll(m);
        if (s < c->nfrag)
            c->sacked[s / 64] |= 1ull << (s % 64);
    }
}

static void run_channel(int loss_pct)
{
    static chan_t c;
    memset(&c, 0, sizeof c);
    build_stream(&c);
    CU_ASSERT_EQUAL_FATAL(ud_ooo_init(&c.o, STORE, FRAG), 0);
    c.ras.buf = malloc(MAXPKT);
    c.ras.cap = MAXPKT;
    int rounds = 0;
    while (c.una < c.nfrag && rounds++ < 100000) {
        /* new fragments into the window */
        while (c.next < c.nfrag && c.next - c.una < WIN)
            wire_put(&c, &c.f[c.next++], loss_pct);
        /* the wire reorders: deliver a random half, in random order */
        int take = c.nwire / 2 + 1;
        while (take-- > 0 && c.nwire) {
            int i = (int)rnd((uint32_t)c.nwire);
            frag_t f = c.wire[i];
            c.wire[i] = c.wire[--c.nwire];
            receive(&c, &f);
        }
        ack(&c);
        /* the wire went quiet: resend what the map does not show */
        if (c.nwire == 0)
            for (uint32_t s = c.una; s < c.next; s++)
                if (!is_sacked(&c, s))
                    wire_put(&c, &c.f[s], loss_pct);
    }
    CU_ASSERT_EQUAL(c.una, c.nfrag);
    CU_ASSERT_EQUAL(c.pkt_out, NPKT);
    CU_ASSERT_EQUAL(c.bad, 0);
    CU_ASSERT_EQUAL(c.o.held, 0);
    ud_ooo_free(&c.o);
    free(c.ras.buf);
    free(c.f);
}

static void test_channel_clean(void) { run_channel(0); }
static void test_channel_loss5(void) { run_channel(5); }
static void test_channel_loss20(void) { run_channel(20); }
static void test_channel_loss50(void) { run_channel(50); }

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite s = CU_add_suite("ud_reorder", NULL, NULL);
    CU_add_test(s, "put/take/has/sack, bounds, wrap-around", test_put_take);
    CU_add_test(s, "window: bytes to whole fragments, two packets at least", test_window);
    CU_add_test(s, "reordering channel, no loss", test_channel_clean);
    CU_add_test(s, "reordering channel, 5% loss", test_channel_loss5);
    CU_add_test(s, "reordering channel, 20% loss", test_channel_loss20);
    CU_add_test(s, "reordering channel, 50% loss", test_channel_loss50);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f ? 1 : 0;
}
