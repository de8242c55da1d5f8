/*
 * selftest.c - single-process verbs check for the SoftRoCE guest.
 *
 * Opens the first verbs device (or $VCOLL_SELFTEST_DEV), creates two RC QPs
 * on one PD/CQ, connects them to each other through a RoCE GID (IPv4-mapped
 * preferred), then does RDMA WRITE, SEND/RECV and RDMA READ and checks every
 * byte, and finally times a burst of small RDMA WRITEs.  Exit 0 = PASS.
 *
 * Build: gcc -O2 -o selftest test/verbs/selftest.c -libverbs
 */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_SIZE   (256 * 1024)
#define SMALL_MSG  8
#define LAT_ITERS  1000
#define POLL_LIMIT_S 20.0

struct st_ctx {
    struct ibv_context *dev;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp[2];
    struct ibv_mr *mr[2];
    unsigned char *buf[2];
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    enum ibv_mtu mtu;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CHECK(cond, ...) do { if (!(cond)) { \
    fprintf(stderr, "selftest: FAIL: " __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

/* A RoCE v2 IPv4-mapped GID (::ffff:a.b.c.d) routes on every rxe setup we
 * use; fall back to the first non-zero entry (link-local) otherwise. */
static int pick_gid(struct st_ctx *c)
{
    struct ibv_port_attr pa;
    int i, first = -1;

    CHECK(ibv_query_port(c->dev, c->port, &pa) == 0, "ibv_query_port");
    CHECK(pa.state == IBV_PORT_ACTIVE, "port %u not active (state %d)", c->port, pa.state);
    c->mtu = pa.active_mtu;
    for (i = 0; i < pa.gid_tbl_len; i++) {
        union ibv_gid g;
        static const unsigned char v4pfx[12] = { 0,0,0,0, 0,0,0,0, 0,0,0xff,0xff };
        if (ibv_query_gid(c->dev, c->port, i, &g))
            break;
        if (!g.global.subnet_prefix && !g.global.interface_id)
            continue;
        if (first < 0)
            first = i;
        if (!memcmp(g.raw, v4pfx, sizeof(v4pfx))) {
            c->gid = g;
            return i;
        }
    }
    CHECK(first >= 0, "GID table is empty (no netdev address for the rxe device?)");
    CHECK(ibv_query_gid(c->dev, c->port, first, &c->gid) == 0, "ibv_query_gid");
    return first;
}

static void qp_connect(struct st_ctx *c, struct ibv_qp *qp, uint32_t remote_qpn)
{
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = c->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                        IBV_QP_ACCESS_FLAGS) == 0, "QP -> INIT");

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = c->mtu;
    a.dest_qp_num = remote_qpn;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;             /* RoCE: a GRH is mandatory */
    a.ah_attr.grh.dgid = c->gid;         /* both QPs live on this port */
    a.ah_attr.grh.sgid_index = c->gid_index;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = c->port;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                        IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
          "QP -> RTR (gid index %d)", c->gid_index);

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 4;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                        IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0, "QP -> RTS");
}

/* Waits for `n` completions; every one must be successful. */
static void wait_cq(struct st_ctx *c, int n, const char *what)
{
    struct ibv_wc wc[8];
    double t0 = now_s();

    while (n > 0) {
        int got = ibv_poll_cq(c->cq, n < 8 ? n : 8, wc);
        CHECK(got >= 0, "%s: ibv_poll_cq failed", what);
        for (int i = 0; i < got; i++)
            CHECK(wc[i].status == IBV_WC_SUCCESS, "%s: completion status %s (wr_id %lu)",
                  what, ibv_wc_status_str(wc[i].status), (unsigned long)wc[i].wr_id);
        n -= got;
        CHECK(now_s() - t0 < POLL_LIMIT_S, "%s: no completion within %.0f s", what, POLL_LIMIT_S);
    }
}

static void post_rdma(struct st_ctx *c, int from, enum ibv_wr_opcode op, size_t off, size_t len,
                      int signaled)
{
    int to = 1 - from;
    struct ibv_sge sge = {
        .addr = (uintptr_t)(c->buf[from] + off), .length = (uint32_t)len, .lkey = c->mr[from]->lkey,
    };
    struct ibv_send_wr wr, *bad;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = op;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    if (op != IBV_WR_SEND) {
        wr.wr.rdma.remote_addr = (uintptr_t)(c->buf[to] + off);
        wr.wr.rdma.rkey = c->mr[to]->rkey;
    }
    CHECK(ibv_post_send(c->qp[from], &wr, &bad) == 0, "ibv_post_send opcode %d", op);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

static void verify(const unsigned char *p, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
        CHECK(p[i] == want, "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, p[i], want);
    }
}

int main(void)
{
    struct st_ctx c;
    struct ibv_device **list;
    const char *want = getenv("VCOLL_SELFTEST_DEV");
    int ndev, i;

    memset(&c, 0, sizeof(c));
    c.port = 1;
    list = ibv_get_device_list(&ndev);
    CHECK(list && ndev > 0, "no verbs device found");
    for (i = 0; i < ndev; i++)
        if (!want || !strcmp(want, ibv_get_device_name(list[i])))
            break;
    CHECK(i < ndev, "device %s not found", want);
    c.dev = ibv_open_device(list[i]);
    CHECK(c.dev, "ibv_open_device %s", ibv_get_device_name(list[i]));
    printf("selftest: device %s\n", ibv_get_device_name(list[i]));

    c.gid_index = pick_gid(&c);
    CHECK((c.pd = ibv_alloc_pd(c.dev)) != NULL, "ibv_alloc_pd");
    CHECK((c.cq = ibv_create_cq(c.dev, 256, NULL, NULL, 0)) != NULL, "ibv_create_cq");
    for (i = 0; i < 2; i++) {
        struct ibv_qp_init_attr qa;
        CHECK((c.buf[i] = aligned_alloc(4096, BUF_SIZE)) != NULL, "out of memory");
        memset(c.buf[i], 0, BUF_SIZE);
        c.mr[i] = ibv_reg_mr(c.pd, c.buf[i], BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
                             IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
        CHECK(c.mr[i], "ibv_reg_mr");
        memset(&qa, 0, sizeof(qa));
        qa.send_cq = qa.recv_cq = c.cq;
        qa.qp_type = IBV_QPT_RC;
        qa.cap.max_send_wr = 128;
        qa.cap.max_recv_wr = 16;
        qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
        CHECK((c.qp[i] = ibv_create_qp(c.pd, &qa)) != NULL, "ibv_create_qp");
    }
    qp_connect(&c, c.qp[0], c.qp[1]->qp_num);
    qp_connect(&c, c.qp[1], c.qp[0]->qp_num);
    printf("selftest: gid index %d, mtu %d, qpn %u <-> %u\n", c.gid_index,
           128 << c.mtu, c.qp[0]->qp_num, c.qp[1]->qp_num);

    /* 1. RDMA WRITE qp0 -> qp1: whole buffer, several MTUs */
    fill(c.buf[0], BUF_SIZE, 1);
    post_rdma(&c, 0, IBV_WR_RDMA_WRITE, 0, BUF_SIZE, 1);
    wait_cq(&c, 1, "RDMA WRITE");
    verify(c.buf[1], BUF_SIZE, 1, "RDMA WRITE");
    printf("selftest: RDMA WRITE %d bytes ok\n", BUF_SIZE);

    /* 2. SEND qp1 -> RECV qp0 (into a cleared region at offset 4096) */
    {
        size_t len = 3 * 4096 + 123;
        struct ibv_sge sge = { .addr = (uintptr_t)(c.buf[0] + 4096), .length = (uint32_t)len,
                               .lkey = c.mr[0]->lkey };
        struct ibv_recv_wr rw = { .wr_id = 99, .sg_list = &sge, .num_sge = 1 }, *bad;
        memset(c.buf[0] + 4096, 0, len);
        CHECK(ibv_post_recv(c.qp[0], &rw, &bad) == 0, "ibv_post_recv");
        fill(c.buf[1] + 4096, len, 2);
        post_rdma(&c, 1, IBV_WR_SEND, 4096, len, 1);
        wait_cq(&c, 2, "SEND/RECV");
        verify(c.buf[0] + 4096, len, 2, "SEND/RECV");
        printf("selftest: SEND/RECV %zu bytes ok\n", len);
    }

    /* 3. RDMA READ: qp0 pulls qp1's buffer (new pattern) into its own */
    fill(c.buf[1], BUF_SIZE, 3);
    memset(c.buf[0], 0, BUF_SIZE);
    post_rdma(&c, 0, IBV_WR_RDMA_READ, 0, BUF_SIZE, 1);
    wait_cq(&c, 1, "RDMA READ");
    verify(c.buf[0], BUF_SIZE, 3, "RDMA READ");
    printf("selftest: RDMA READ %d bytes ok\n", BUF_SIZE);

    /* 4. timing: small signaled writes one at a time (round trip incl. ack) */
    {
        double t0 = now_s();
        for (i = 0; i < LAT_ITERS; i++) {
            c.buf[0][0] = (unsigned char)i;
            post_rdma(&c, 0, IBV_WR_RDMA_WRITE, 0, SMALL_MSG, 1);
            wait_cq(&c, 1, "small RDMA WRITE");
        }
        double dt = now_s() - t0;
        CHECK(c.buf[1][0] == (unsigned char)(LAT_ITERS - 1), "last small write not visible");
        printf("selftest: %d x %d-byte RDMA WRITE: %.1f us per write (completion)\n",
               LAT_ITERS, SMALL_MSG, dt * 1e6 / LAT_ITERS);
        t0 = now_s();
        fill(c.buf[0], BUF_SIZE, 4);
        for (i = 0; i < 16; i++) {
            post_rdma(&c, 0, IBV_WR_RDMA_WRITE, 0, BUF_SIZE, 1);
            wait_cq(&c, 1, "bulk RDMA WRITE");
        }
        dt = now_s() - t0;
        verify(c.buf[1], BUF_SIZE, 4, "bulk RDMA WRITE");
        printf("selftest: 16 x %d KiB RDMA WRITE: %.1f MB/s\n", BUF_SIZE / 1024,
               16.0 * BUF_SIZE / dt / 1e6);
    }

    for (i = 0; i < 2; i++) {
        CHECK(ibv_destroy_qp(c.qp[i]) == 0, "ibv_destroy_qp");
        CHECK(ibv_dereg_mr(c.mr[i]) == 0, "ibv_dereg_mr");
        free(c.buf[i]);
    }
    ibv_destroy_cq(c.cq);
    ibv_dealloc_pd(c.pd);
    ibv_close_device(c.dev);
    ibv_free_device_list(list);
    printf("selftest: PASS\n");
    return 0;
}
