/*
 * test_core.c -- unit tests that need no launcher: config parsing, launcher
 * detection, the shm ring, argument validation and matching semantics
 * (through a singleton job, whose self transport runs the real p2p code).
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vcoll.h"
#include "core/config.h"
#include "core/copy.h"
#include "core/ctx.h"
#include "core/list.h"
#include "net/net.h"
#include "boot/boot.h"
#include "net/shm/shm_ring.h"
#include "dtype/dtype.h"

/* ---- a fake environment for cfg_parse / boot_foreign_launcher ---- */
static const char *fake_env[32][2];
static int nfake;
static void env_set(const char *k, const char *v) { fake_env[nfake][0] = k; fake_env[nfake++][1] = v; }
static void env_clear(void) { nfake = 0; }
static const char *fake_getenv(const char *k)
{
    for (int i = 0; i < nfake; i++)
        if (!strcmp(fake_env[i][0], k))
            return fake_env[i][1];
    return NULL;
}

static void test_config_defaults(void)
{
    vc_config_t c;
    char err[256];
    env_clear();
    CU_ASSERT_EQUAL(cfg_parse(&c, fake_getenv, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL(c.net, CFG_NET_AUTO);
    CU_ASSERT_EQUAL(c.eager_limit, 8192);
    CU_ASSERT_EQUAL(c.log_level, CFG_LOG_WARN);
    CU_ASSERT_EQUAL(c.gid_index, -1);
    CU_ASSERT_STRING_EQUAL(c.hca, "");
}

static void test_config_values(void)
{
    vc_config_t c;
    char err[256];
    env_clear();
    env_set("VCOLL_NET", "UD");
    env_set("VCOLL_EAGER_LIMIT", "64k");
    env_set("VCOLL_LOG", "debug");
    env_set("VCOLL_HCA", "mlx5_0:1,mlx5_1:1");
    env_set("VCOLL_PEER_CHECK", "0.5");
    CU_ASSERT_EQUAL(cfg_parse(&c, fake_getenv, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL(c.net, CFG_NET_UD);
    CU_ASSERT_EQUAL(c.eager_limit, 65536);
    CU_ASSERT_EQUAL(c.log_level, CFG_LOG_DEBUG);
    CU_ASSERT_STRING_EQUAL(c.hca, "mlx5_0:1,mlx5_1:1");
    CU_ASSERT_DOUBLE_EQUAL(c.peer_check, 0.5, 1e-12);
}

static void bad_value(const char *var, const char *val)
{
    vc_config_t c;
    char err[256] = "";
    env_clear();
    env_set(var, val);
    CU_ASSERT_EQUAL(cfg_parse(&c, fake_getenv, err, sizeof err), VC_ERR_ARG);
    /* the message must name the variable so the user knows what to fix */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, var));
}

static void test_config_errors(void)
{
    bad_value("VCOLL_NET", "infiniband");
    bad_value("VCOLL_EAGER_LIMIT", "-1");
    bad_value("VCOLL_EAGER_LIMIT", "2g");
    bad_value("VCOLL_EAGER_LIMIT", "12x");
    bad_value("VCOLL_LOG", "verbose");
    bad_value("VCOLL_SHM_CELLS", "1");
    bad_value("VCOLL_IB_RETRY", "8");
    bad_value("VCOLL_PEER_CHECK", "soon");
    bad_value("VCOLL_SPIN", "");
    bad_value("VCOLL_UD_WINDOW", "64");       /* bytes now: less than one fragment */
    bad_value("VCOLL_UD_RTO", "-0.1");
    bad_value("VCOLL_UD_TIMEOUT", "never");
    bad_value("VCOLL_UD_LOSS", "1.5");
}

static void test_config_describe(void)
{
    const char *n, *d, *h;
    int i = 0, seen_net = 0;
    while (cfg_describe(i, &n, &d, &h)) {
        CU_ASSERT(strncmp(n, "VCOLL_", 6) == 0);
        CU_ASSERT(h && *h);
        seen_net |= !strcmp(n, "VCOLL_NET");
        i++;
    }
    CU_ASSERT(i >= 10);
    CU_ASSERT(seen_net);
    /* allowed values, as vcoll_info prints them */
    char vals[256];
    for (int k = 0; cfg_describe(k, &n, &d, &h); k++) {
        CU_ASSERT(cfg_values(k, vals, sizeof vals));
        if (!strcmp(n, "VCOLL_NET"))
            CU_ASSERT_STRING_EQUAL(vals, "auto|shm|rc|ud");
        if (!strcmp(n, "VCOLL_ALLREDUCE_ALG"))   /* the registry's names: coll */
            CU_ASSERT_STRING_EQUAL(vals, "");
        if (!strcmp(n, "VCOLL_HCA"))
            CU_ASSERT_STRING_EQUAL(vals, "");
    }
    CU_ASSERT_EQUAL(cfg_values(i, vals, sizeof vals), 0);
}

static void test_launcher_detect(void)
{
    const char *who;
    env_clear();
    CU_ASSERT_EQUAL(boot_foreign_launcher(fake_getenv, &who), 1);
    CU_ASSERT_PTR_NULL(who);
    env_set("PMI_SIZE", "4");   /* hydra or srun --mpi=pmi2 */
    CU_ASSERT_EQUAL(boot_foreign_launcher(fake_getenv, &who), 4);
    CU_ASSERT_PTR_NOT_NULL(who);
    env_clear();
    env_set("SLURM_STEP_NUM_TASKS", "8");
    CU_ASSERT_EQUAL(boot_foreign_launcher(fake_getenv, &who), 8);
    CU_ASSERT_PTR_NOT_NULL(strstr(who, "srun"));
    env_clear();
    env_set("SLURM_STEP_NUM_TASKS", "1");  /* a 1-task srun is a fine singleton */
    CU_ASSERT_EQUAL(boot_foreign_launcher(fake_getenv, &who), 1);
    /* a plain program inside salloc/sbatch -n 4: the allocation's size is
       not a step's, the program is a singleton */
    env_clear();
    env_set("SLURM_NTASKS", "4");
    env_set("SLURM_NPROCS", "4");
    env_set("SLURM_JOB_NUM_NODES", "1");
    CU_ASSERT_EQUAL(boot_foreign_launcher(fake_getenv, &who), 1);
    CU_ASSERT_PTR_NULL(who);
}

/* ---- shm ring on private memory ---- */
/* RC or UD for remote peers is decided from the worst rank's count, so
 * that ranks on big and small nodes agree. */
static void test_max_remote(void)
{
    int two_by_two[] = {0, 0, 1, 1};
    int uneven[] = {0, 1, 1, 1, 1, 2, 2};    /* node 0 has 1 rank: 6 remote peers */
    int one_node[] = {0, 0, 0};
    boot_info_t b = {.size = 4, .nnodes = 2, .node_of = two_by_two};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 2);
    b = (boot_info_t){.size = 7, .nnodes = 3, .node_of = uneven};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 6);
    b = (boot_info_t){.size = 3, .nnodes = 1, .node_of = one_node};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 0);
    b = (boot_info_t){.size = 1, .nnodes = 1, .node_of = one_node};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 0);
    CU_ASSERT_EQUAL(boot_max_remote_peers(NULL), 0);
}

/* core/list.h: the order each end keeps, unlinking while walking, and a
   whole list moved to another head (rcache's reap) */
typedef struct { int v; list_node_t link; } item_t;

static int list_values(const list_t *l, int *out)
{
    int n = 0;
    LIST_FOR_EACH(x, l)
        out[n++] = LIST_ENTRY(x, item_t, link)->v;
    return n;
}

static void test_list(void)
{
    item_t it[5];
    list_t l, m;
    int v[5];
    list_init(&l);
    CU_ASSERT_TRUE(list_empty(&l));
    CU_ASSERT_PTR_NULL(list_first(&l));
    CU_ASSERT_PTR_NULL(list_last(&l));
    for (int i = 0; i < 5; i++) {
        it[i].v = i;
        if (i < 3)
            list_push_back(&l, &it[i].link);
        else
            list_push_front(&l, &it[i].link);
    }
    CU_ASSERT_EQUAL(list_values(&l, v), 5);
    CU_ASSERT(v[0] == 4 && v[1] == 3 && v[2] == 0 && v[3] == 1 && v[4] == 2);
    CU_ASSERT_PTR_EQUAL(list_first(&l), &it[4].link);
    CU_ASSERT_PTR_EQUAL(list_last(&l), &it[2].link);
    LIST_FOR_EACH_SAFE(x, nx, &l)
        if (LIST_ENTRY(x, item_t, link)->v % 2)
            list_unlink(x);
    CU_ASSERT_PTR_NULL(it[1].link.next);
    CU_ASSERT_EQUAL(list_values(&l, v), 3);
    CU_ASSERT(v[0] == 4 && v[1] == 0 && v[2] == 2);
    list_take(&m, &l);
    CU_ASSERT_TRUE(list_empty(&l));
    CU_ASSERT_EQUAL(list_values(&m, v), 3);
    CU_ASSERT(v[0] == 4 && v[1] == 0 && v[2] == 2);
    list_unlink(&it[2].link);
    CU_ASSERT_PTR_EQUAL(list_last(&m), &it[0].link);
    list_take(&l, &m);
    CU_ASSERT_EQUAL(list_values(&l, v), 2);
    LIST_FOR_EACH_SAFE(x, nx, &l)
        list_unlink(x);
    CU_ASSERT_TRUE(list_empty(&l));
}

/* sender and receiver ends of one ring in plain memory */
static void *ring_mem(uint32_t nlines)
{
    void *m = aligned_alloc(SHM_CACHELINE, shm_ring_bytes(nlines));
    memset(m, 0, shm_ring_bytes(nlines));
    return m;
}

static void test_ring(void)
{
    enum { N = 8 };     /* 8 lines: a 70-byte packet takes 2 */
    uint8_t *mem = ring_mem(N);
    shm_ring_t tx = shm_ring_at(mem, N, 200), rx = shm_ring_at(mem, N, 200);
    char a[16] = "header", b[64];
    memset(b, 'x', sizeof b);
    struct iovec iov[2] = {{a, 6}, {b, 64}};
    for (int i = 0; i < N / 2; i++) {
        a[0] = (char)('0' + i);
        CU_ASSERT_EQUAL(shm_ring_push(&tx, iov, 2), 0);
    }
    CU_ASSERT_EQUAL(shm_ring_push(&tx, iov, 2), -1);   /* full */
    for (int i = 0; i < N / 2; i++) {
        shm_pkt_t *c = shm_ring_peek(&rx);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(c->len, 70);
        CU_ASSERT_EQUAL(c->data[0], '0' + i);          /* FIFO */
        CU_ASSERT_EQUAL(c->data[69], 'x');
        shm_ring_pop(&rx, c->len);
    }
    CU_ASSERT_PTR_NULL(shm_ring_peek(&rx));
    /* a packet larger than max_len is refused, never overflows */
    char big[256];
    struct iovec bigv = {big, 201};
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &bigv, 1), -1);
    free(mem);

    /* packets of every size to max_len, three pieces split on either side
       of the first line (written last), through many wraps, with the
       receiver behind by 0..3 packets: each lands whole and in order */
    enum { M = 16, MAXL = 3 * SHM_CACHELINE };   /* up to 4 lines a packet */
    mem = ring_mem(M);
    tx = shm_ring_at(mem, M, MAXL);
    rx = shm_ring_at(mem, M, MAXL);
    uint8_t src[2 * MAXL], want[4][MAXL];
    size_t wlen[4];
    for (int i = 0; i < 2 * MAXL; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    int bad = 0, queued = 0, head = 0, pushed = 0, wraps = 0;
    for (int it = 0; it < 4000; it++) {
        size_t len = (size_t)(it * 37) % (MAXL + 1), x = len * (size_t)(it % 5) / 4, y = (len - x) / 2;
        size_t z = len - x - y;
        struct iovec v3[3] = {{src + it % 50, x}, {src + 40, y}, {src + 3, z}};
        if (queued == 4 || (queued && it % 3 == 0)) {   /* the receiver catches up */
            int n = queued > 1 && it % 2 ? 2 : 1;
            for (int j = 0; j < n; j++) {
                uint32_t before = rx.idx;
                shm_pkt_t *c = shm_ring_peek(&rx);
                wraps += rx.idx == 0 && before != 0 && c == shm_ring_line(&rx, 0);
                int w = head % 4;
                if (!c || c->len != wlen[w] || memcmp(c->data, want[w], wlen[w]))
                    bad++;
                if (c)
                    shm_ring_pop(&rx, c->len);
                head++;
                queued--;
            }
            /* nothing queued: the receiver's line is empty, not a stale
               header or payload of an earlier lap */
            if (queued == 0 && shm_ring_peek(&rx))
                bad++;
        }
        if (shm_ring_push(&tx, v3, 3)) {
            if (queued == 0)
                bad++;        /* an empty ring takes any packet to max_len */
            continue;
        }
        int w = (head + queued) % 4;
        memcpy(want[w], src + it % 50, x);
        memcpy(want[w] + x, src + 40, y);
        memcpy(want[w] + x + y, src + 3, z);
        wlen[w] = len;
        queued++;
        pushed++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(pushed > 2000);
    CU_ASSERT(wraps > 100);
    free(mem);

    /* the line after the receiver's last packet is empty, never a header
       of an earlier lap nor its payload: one packet at a time, sizes that
       move the packets' starts around the ring, payloads made of words
       that read as a full packet's or a wrap's flag wherever a line of
       them starts */
    uint32_t lookalike[2][MAXL / 4];
    for (int i = 0; i < MAXL / 4; i++) {
        lookalike[0][i] = SHM_PKT_FULL;
        lookalike[1][i] = SHM_PKT_WRAP;
    }
    mem = ring_mem(M);
    tx = shm_ring_at(mem, M, MAXL);
    rx = shm_ring_at(mem, M, MAXL);
    int stale = 0, lost = 0;
    for (int it = 0; it < 1000; it++) {
        struct iovec v = {lookalike[it / 7 % 2], (size_t)(it * 37) % (MAXL + 1)};
        shm_pkt_t *c;
        if (shm_ring_push(&tx, &v, 1) || !(c = shm_ring_peek(&rx))) {
            lost++;
            continue;
        }
        shm_ring_pop(&rx, c->len);
        stale += shm_ring_peek(&rx) != NULL;
    }
    CU_ASSERT_EQUAL(lost, 0);
    CU_ASSERT_EQUAL(stale, 0);
    free(mem);

    /* a wrap written while the packet after it does not fit yet: the
       receiver follows the wrap to line 0 and must find it empty, not the
       header of the first lap's first packet */
    mem = ring_mem(M);
    tx = shm_ring_at(mem, M, MAXL);
    rx = shm_ring_at(mem, M, MAXL);
    struct iovec four = {src, MAXL}, one = {src, 8};   /* 4 lines, 1 line */
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &one, 1), 0);             /* line 0 */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shm_ring_push(&tx, &four, 1), 0);        /* lines 1-12 */
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &one, 1), 0);             /* line 13 */
    shm_ring_pop(&rx, shm_ring_peek(&rx)->len);                  /* line 0 free */
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &four, 1), -1);  /* wrap at 14, no room at 0 */
    for (int i = 0; i < 4; i++) {
        shm_pkt_t *c = shm_ring_peek(&rx);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        shm_ring_pop(&rx, c->len);
    }
    CU_ASSERT_PTR_NULL(shm_ring_peek(&rx));
    CU_ASSERT_EQUAL(rx.idx, 0);
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &four, 1), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(shm_ring_peek(&rx));

    /* what the receiver never follows: a length past max_len is consumed
       as one line; one running past the ring's end stops at the end */
    shm_ring_pop(&rx, MAXL);      /* the packet just checked */
    uint32_t at = rx.idx;
    shm_ring_pop(&rx, 0xffffffffu);
    CU_ASSERT_EQUAL(rx.idx, (at + 1) % M);
    rx.idx = M - 1;
    shm_ring_pop(&rx, MAXL);
    CU_ASSERT_EQUAL(rx.idx, 0);
    /* nor a packet that would end past the ring: on the last line only
       what fits that line is taken */
    rx.idx = M - 1;
    CU_ASSERT_TRUE(shm_ring_len_ok(&rx, SHM_LINE_DATA));
    CU_ASSERT_FALSE(shm_ring_len_ok(&rx, SHM_LINE_DATA + 1));
    rx.idx = 0;
    CU_ASSERT_TRUE(shm_ring_len_ok(&rx, MAXL));
    CU_ASSERT_FALSE(shm_ring_len_ok(&rx, MAXL + 1));
    free(mem);

    /* a consumed count the receiver could not have published (ahead of
       what was written, or going back) gives the sender no room: the
       packets still queued are not overwritten */
    mem = ring_mem(4);
    tx = shm_ring_at(mem, 4, 8);
    rx = shm_ring_at(mem, 4, 8);
    char q[8] = "q";
    struct iovec qv = {q, 8};
    for (int i = 0; i < 4; i++) {
        q[0] = (char)('a' + i);
        CU_ASSERT_EQUAL(shm_ring_push(&tx, &qv, 1), 0);
    }
    *tx.consumed = 5;             /* one more than written */
    q[0] = 'Z';
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &qv, 1), -1);
    *tx.consumed = 0;
    shm_ring_pop(&rx, shm_ring_peek(&rx)->len);      /* 'a': consumed 1 */
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &qv, 1), 0);  /* 'Z' at line 0 */
    *tx.consumed = 0;             /* back below the last reading */
    CU_ASSERT_EQUAL(shm_ring_push(&tx, &qv, 1), -1);
    CU_ASSERT_EQUAL(tx.seen, 1);
    for (int i = 1; i < 5; i++) {
        shm_pkt_t *c = shm_ring_peek(&rx);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(c->data[0], i < 4 ? 'a' + i : 'Z');
        shm_ring_pop(&rx, c->len);
    }
    CU_ASSERT_PTR_NULL(shm_ring_peek(&rx));
    free(mem);
}

/* core_copy: which pairs take the backward loop, and every byte right
   (and none outside) for sizes that are and are not multiples of its
   64-byte step, at every offset of the window and around it */
static void test_copy(void)
{
    /* the window: dst 1-63 bytes above src modulo 4 KiB, also across a
       wrap (src near the top of a page, dst in the next) */
    static unsigned char page[3 * 4096];
    for (size_t d = 0; d < 4096 + 128; d++) {
        size_t m = d % 4096;
        CU_ASSERT_EQUAL(core_copy_aliases(page + 4000 + d, page + 4000), m >= 1 && m <= 63);
    }
    CU_ASSERT_FALSE(core_copy_aliases(page, page + 16));     /* dst below src */
    static const size_t sizes[] = {1, 63, 2048, 2049, 2050, 2111, 2112, 2113, 4096,
                                   4096 + 63, 65536 + 5, 131072};
    const size_t G = 64, maxn = 131072;
    unsigned char *src = malloc(maxn + 8192), *dst = malloc(maxn + 8192 + 2 * G);
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
    for (size_t i = 0; i < maxn + 8192; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 8) * 7 + 1);
    int bad = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (size_t so = 0; so < 4096; so += so < 80 ? 1 : 997) {
            for (size_t dl = 0; dl < 72; dl += dl < 64 ? 1 : 7) {
                size_t n = sizes[k];
                const unsigned char *s = src + so;
                /* dst - src = dl modulo 4 KiB */
                unsigned char *base = dst + G;
                size_t at = ((uintptr_t)s + dl - (uintptr_t)base) & 4095;
                unsigned char *d = base + at;
                memset(d - G, 0xEE, n + 2 * G);
                core_copy(d, s, n);
                if (memcmp(d, s, n))
                    bad++;
                for (size_t g = 0; g < G; g++)
                    if (d[-1 - (ptrdiff_t)g] != 0xEE || d[n + g] != 0xEE) {
                        bad++;
                        break;
                    }
            }
            if (sizes[k] > 8192 && so > 80)
                break;      /* the large sizes: the window's offsets suffice */
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(src);
    free(dst);
}

static void test_dtype(void)
{
    size_t s, b;
    CU_ASSERT_EQUAL(vc_dtype_size(VC_DOUBLE, &s), VC_SUCCESS);
    CU_ASSERT_EQUAL(s, 8);
    CU_ASSERT_EQUAL(vc_dtype_size((vc_dtype_t)99, &s), VC_ERR_DTYPE);
    CU_ASSERT_EQUAL(vc_dtype_size(VC_INT32, NULL), VC_ERR_ARG);
    CU_ASSERT_EQUAL(dtype_bytes(VC_INT64, SIZE_MAX / 4, &b), VC_ERR_COUNT);
    CU_ASSERT_EQUAL(dtype_op_check(VC_FLOAT, VC_BXOR), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_op_check(VC_INT32, VC_BXOR), VC_SUCCESS);
    CU_ASSERT_EQUAL(dtype_op_check(VC_INT32, (vc_op_t)42), VC_ERR_OP);
    /* pair types: MPI's layout and sizes */
    struct { float v; int32_t i; } fi;
    struct { double v; int32_t i; } di;
    struct { int64_t v; int32_t i; } li;
    CU_ASSERT_EQUAL(vc_dtype_size(VC_FLOAT_INT, &s), VC_SUCCESS);
    CU_ASSERT_EQUAL(s, sizeof fi);
    CU_ASSERT_EQUAL(vc_dtype_size(VC_DOUBLE_INT, &s), VC_SUCCESS);
    CU_ASSERT_EQUAL(s, sizeof di);
    CU_ASSERT_EQUAL(vc_dtype_size(VC_INT32_INT, &s), VC_SUCCESS);
    CU_ASSERT_EQUAL(s, 8);
    CU_ASSERT_EQUAL(vc_dtype_size(VC_INT64_INT, &s), VC_SUCCESS);
    CU_ASSERT_EQUAL(s, sizeof li);
    CU_ASSERT_EQUAL(vc_dtype_size((vc_dtype_t)(VC_INT64_INT + 1), &s), VC_ERR_DTYPE);
    CU_ASSERT_EQUAL(dtype_op_check(VC_DOUBLE_INT, VC_MINLOC), VC_SUCCESS);
    CU_ASSERT_EQUAL(dtype_op_check(VC_DOUBLE_INT, VC_SUM), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_op_check(VC_DOUBLE, VC_MAXLOC), VC_ERR_OP);
    /* VC_BYTE is raw bits: bit ops only, as in MPI */
    CU_ASSERT_EQUAL(dtype_op_check(VC_BYTE, VC_BOR), VC_SUCCESS);
    CU_ASSERT_EQUAL(dtype_op_check(VC_BYTE, VC_SUM), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_op_check(VC_BYTE, VC_MAX), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_op_check(VC_BYTE, VC_LAND), VC_ERR_OP);
    CU_ASSERT_EQUAL(dtype_op_check(VC_UINT8, VC_SUM), VC_SUCCESS);
}

static void test_strerror(void)
{
    for (int e = VC_SUCCESS; e <= VC_ERR_INTERNAL; e++) {
        const char *m = vc_strerror(e);
        CU_ASSERT(m && strlen(m) > 5);
        CU_ASSERT(strcmp(m, "unknown error code") != 0);
    }
    CU_ASSERT_STRING_EQUAL(vc_strerror(12345), "unknown error code");
}

/* ---- before init: everything says NOT_INITIALIZED ---- */
static void test_not_initialized(void)
{
    int x = 0, flag = 7;
    vc_request_t r = VC_REQUEST_NULL;
    CU_ASSERT_EQUAL(vc_initialized(&flag), VC_SUCCESS);
    CU_ASSERT_EQUAL(flag, 0);
    CU_ASSERT_EQUAL(vc_comm_rank(VC_COMM_WORLD, &x), VC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 0, 0, VC_COMM_WORLD), VC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(vc_irecv(&x, 1, VC_INT32, 0, 0, VC_COMM_WORLD, &r), VC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(vc_wait(&r, NULL), VC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(vc_barrier(VC_COMM_WORLD), VC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(vc_finalize(), VC_ERR_NOT_INITIALIZED);
    CU_ASSERT(vc_wtime() > 0);
}

/* ---- singleton job: validation and matching through the real p2p ---- */
static void test_singleton_validation(void)
{
    int x = 1, buf[4];
    vc_request_t r;
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 1, 0, VC_COMM_WORLD), VC_ERR_RANK);
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, -1, 0, VC_COMM_WORLD), VC_ERR_RANK);
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 0, -5, VC_COMM_WORLD), VC_ERR_TAG);
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 0, VC_TAG_UB + 1, VC_COMM_WORLD), VC_ERR_TAG);
    CU_ASSERT_EQUAL(vc_send(NULL, 1, VC_INT32, 0, 0, VC_COMM_WORLD), VC_ERR_BUFFER);
    CU_ASSERT_EQUAL(vc_send(&x, 1, (vc_dtype_t)77, 0, 0, VC_COMM_WORLD), VC_ERR_DTYPE);
    CU_ASSERT_EQUAL(vc_send(&x, SIZE_MAX / 2, VC_INT32, 0, 0, VC_COMM_WORLD), VC_ERR_COUNT);
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 0, 0, VC_COMM_NULL), VC_ERR_COMM);
    CU_ASSERT_EQUAL(vc_isend(&x, 1, VC_INT32, 0, 0, VC_COMM_WORLD, NULL), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_irecv(buf, 4, VC_INT32, 3, 0, VC_COMM_WORLD, &r), VC_ERR_RANK);
    CU_ASSERT_EQUAL(vc_irecv(buf, 4, VC_INT32, VC_ANY_SOURCE, -7, VC_COMM_WORLD, &r), VC_ERR_TAG);
    CU_ASSERT_EQUAL(vc_recv(NULL, 0, VC_INT32, 0, 0, VC_COMM_NULL, NULL), VC_ERR_COMM);
    /* zero count with NULL buffer is legal */
    CU_ASSERT_EQUAL(vc_send(NULL, 0, VC_INT32, 0, 3, VC_COMM_WORLD), VC_SUCCESS);
    vc_status_t st;
    CU_ASSERT_EQUAL(vc_recv(NULL, 0, VC_INT32, 0, 3, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(st.bytes, 0);
    /* requests */
    vc_request_t nul = VC_REQUEST_NULL;
    CU_ASSERT_EQUAL(vc_wait(&nul, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_wait(NULL, &st), VC_ERR_ARG);
    int flag;
    CU_ASSERT_EQUAL(vc_test(&nul, NULL, NULL), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_test(&nul, &flag, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(flag, 1);
    CU_ASSERT_EQUAL(vc_waitall(-1, NULL, NULL), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_waitall(2, NULL, NULL), VC_ERR_ARG);
    /* a completed request cannot be waited on twice */
    CU_ASSERT_EQUAL(vc_isend(&x, 1, VC_INT32, 0, 9, VC_COMM_WORLD, &r), VC_SUCCESS);
    vc_request_t stale = r;
    CU_ASSERT_EQUAL(vc_wait(&r, NULL), VC_SUCCESS);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_EQUAL(vc_wait(&stale, NULL), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_recv(buf, 1, VC_INT32, 0, 9, VC_COMM_WORLD, NULL), VC_SUCCESS);
    int rank = -1, size = -1;
    CU_ASSERT_EQUAL(vc_comm_rank(VC_COMM_WORLD, NULL), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_comm_rank(VC_COMM_WORLD, &rank), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_comm_size(VC_COMM_WORLD, &size), VC_SUCCESS);
    CU_ASSERT_EQUAL(rank, 0);
    CU_ASSERT_EQUAL(size, 1);
}

static void test_singleton_matching(void)
{
    /* unexpected messages, matched later by tag in any order, with wildcards */
    int v[5] = {10, 11, 12, 13, 14}, got;
    vc_status_t st;
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(vc_send(&v[i], 1, VC_INT32, 0, 100 + i, VC_COMM_WORLD), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_recv(&got, 1, VC_INT32, 0, 103, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(got, 13);
    CU_ASSERT_EQUAL(st.tag, 103);
    CU_ASSERT_EQUAL(vc_recv(&got, 1, VC_INT32, VC_ANY_SOURCE, VC_ANY_TAG, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(got, 10);               /* oldest first */
    CU_ASSERT_EQUAL(st.tag, 100);
    CU_ASSERT_EQUAL(st.source, 0);
    CU_ASSERT_EQUAL(st.bytes, sizeof(int));
    static const int rest[3] = {11, 12, 14};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(vc_recv(&got, 1, VC_INT32, 0, VC_ANY_TAG, VC_COMM_WORLD, &st), VC_SUCCESS);
        CU_ASSERT_EQUAL(got, rest[i]);
    }
    /* same tag: non-overtaking, eager and rendezvous mixed */
    size_t big = 1 << 20;
    char *a = malloc(big), *b = malloc(big);
    memset(a, 'A', big);
    vc_request_t rq[3];
    char small = 's', small_in = 0;
    CU_ASSERT_EQUAL(vc_isend(a, big, VC_BYTE, 0, 7, VC_COMM_WORLD, &rq[0]), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_isend(&small, 1, VC_BYTE, 0, 7, VC_COMM_WORLD, &rq[1]), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_recv(b, big, VC_BYTE, 0, 7, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(st.bytes, big);
    CU_ASSERT_EQUAL(memcmp(a, b, big), 0);
    CU_ASSERT_EQUAL(vc_irecv(&small_in, 1, VC_BYTE, 0, 7, VC_COMM_WORLD, &rq[2]), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_waitall(3, rq, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(small_in, 's');
    /* truncation: eager and rendezvous; nothing written past the buffer */
    memset(b, 0x5a, big);
    CU_ASSERT_EQUAL(vc_send(a, 100, VC_BYTE, 0, 8, VC_COMM_WORLD), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_recv(b, 10, VC_BYTE, 0, 8, VC_COMM_WORLD, &st), VC_ERR_TRUNCATE);
    CU_ASSERT_EQUAL(st.error, VC_ERR_TRUNCATE);
    CU_ASSERT_EQUAL(st.bytes, 10);
    CU_ASSERT_EQUAL(b[9], 'A');
    CU_ASSERT_EQUAL((unsigned char)b[10], 0x5a);
    CU_ASSERT_EQUAL(vc_isend(a, big, VC_BYTE, 0, 8, VC_COMM_WORLD, &rq[0]), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_recv(b, 1000, VC_BYTE, 0, 8, VC_COMM_WORLD, &st), VC_ERR_TRUNCATE);
    CU_ASSERT_EQUAL(st.bytes, 1000);
    CU_ASSERT_EQUAL((unsigned char)b[1000], 0x5a);
    CU_ASSERT_EQUAL(vc_wait(&rq[0], NULL), VC_SUCCESS);
    /* the library keeps working after a truncation */
    CU_ASSERT_EQUAL(vc_sendrecv(a, 5, VC_BYTE, 0, 1, b, 5, VC_BYTE, 0, 1, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(st.bytes, 5);
    free(a);
    free(b);
}

/* ---- persistent collectives: the local state errors (a singleton's
 * start completes at once, but the request stays active until waited) ---- */
static void test_singleton_persistent(void)
{
    int32_t x[3] = {1, 2, 3}, y[3] = {0};
    vc_request_t q = VC_REQUEST_NULL, nb, left, nul = VC_REQUEST_NULL;
    vc_status_t st = {5, 5, 5, 5};
    int flag = 0, index = 0;
    CU_ASSERT_EQUAL(vc_allreduce_init(x, y, 3, VC_INT32, VC_SUM, VC_COMM_WORLD, NULL),
                    VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_allreduce_init(x, y, 3, VC_INT32, (vc_op_t)99, VC_COMM_WORLD, &q),
                    VC_ERR_OP);
    CU_ASSERT_EQUAL(vc_bcast_init(y, 3, VC_INT32, 1, VC_COMM_WORLD, &q), VC_ERR_RANK);
    CU_ASSERT_EQUAL_FATAL(vc_allreduce_init(x, y, 3, VC_INT32, VC_SUM, VC_COMM_WORLD, &q),
                          VC_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    vc_request_t handle = q;
    /* inactive: a wait or test returns at once, empty status, handle kept */
    CU_ASSERT_EQUAL(vc_wait(&q, &st), VC_SUCCESS);
    CU_ASSERT_PTR_EQUAL(q, handle);
    CU_ASSERT_EQUAL(st.source, VC_ANY_SOURCE);
    CU_ASSERT_EQUAL(st.tag, VC_ANY_TAG);
    CU_ASSERT_EQUAL(st.bytes, 0);
    CU_ASSERT_EQUAL(vc_test(&q, &flag, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(flag, 1);
    CU_ASSERT_EQUAL(vc_waitany(1, &q, &index, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(index, VC_UNDEFINED);
    flag = 0;
    CU_ASSERT_EQUAL(vc_testany(1, &q, &index, &flag, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(flag, 1);
    CU_ASSERT_EQUAL(index, VC_UNDEFINED);
    /* active: start, startall and free are refused; a wait completes it */
    CU_ASSERT_EQUAL(vc_start(&q), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_start(&q), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_startall(1, &q), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_request_free(&q), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_wait(&q, &st), VC_SUCCESS);
    CU_ASSERT_PTR_EQUAL(q, handle);
    CU_ASSERT_EQUAL(y[0] + y[1] + y[2], 6);
    /* started again with new contents */
    x[0] = 10;
    CU_ASSERT_EQUAL(vc_startall(1, &q), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_waitall(1, &q, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(y[0], 10);
    CU_ASSERT_PTR_EQUAL(q, handle);
    /* non-persistent and NULL requests are not startable or freeable */
    CU_ASSERT_EQUAL(vc_ibarrier(VC_COMM_WORLD, &nb), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_start(&nb), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_request_free(&nb), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_wait(&nb, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_request_free(&nul), VC_ERR_REQUEST);
    CU_ASSERT_EQUAL(vc_request_free(NULL), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_startall(1, &nul), VC_ERR_REQUEST);
    /* freed: NULL, and the stale handle is refused */
    CU_ASSERT_EQUAL(vc_request_free(&q), VC_SUCCESS);
    CU_ASSERT_PTR_NULL(q);
    CU_ASSERT_EQUAL(vc_start(&handle), VC_ERR_REQUEST);
    /* one left for vc_finalize to release */
    CU_ASSERT_EQUAL(vc_barrier_init(VC_COMM_WORLD, &left), VC_SUCCESS);
}

/* ---- a transport whose progress fails (fault injection on the singleton:
 * the real p2p and progress code, with one transport's progress() replaced
 * by one that reports what a failed ibv_poll_cq reports) ---- */
static int broken_polls;
static int broken_progress(net_t *n)
{
    broken_polls++;
    return -VC_ERR_TRANSPORT;
}

/* stderr goes to a temporary file between begin and end; end returns how
 * many lines of it contain what */
static FILE *cap;
static int saved_err = -1;
static void capture_begin(void)
{
    fflush(stderr);
    cap = tmpfile();
    saved_err = dup(STDERR_FILENO);
    if (cap)
        dup2(fileno(cap), STDERR_FILENO);
}
static int capture_end(const char *what)
{
    fflush(stderr);
    dup2(saved_err, STDERR_FILENO);
    close(saved_err);
    int n = 0;
    char line[1024];
    if (!cap)
        return -1;
    rewind(cap);
    while (fgets(line, sizeof line, cap))
        n += strstr(line, what) != NULL;
    fclose(cap);
    return n;
}

static void test_transport_error(void)
{
    struct vc_ctx *c = &ctx_lib;
    prog_t *p = &c->prog;
    int x = 5, y = 0;
    vc_status_t st;
    net_ops_t bad = *c->self->ops;
    bad.progress = broken_progress;

    /* a transport that no wait depends on fails (registered beside the
       others): it is polled once, reported once, and traffic to self goes on */
    net_t other = {.ops = &bad, .name = "broken"};
    int nnets = p->nnets;
    CU_ASSERT_EQUAL_FATAL(prog_add_net(p, &other), VC_SUCCESS);
    broken_polls = 0;
    capture_begin();
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 0, 21, VC_COMM_WORLD), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_recv(&y, 1, VC_INT32, VC_ANY_SOURCE, 21, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_send(&x, 1, VC_INT32, 0, 22, VC_COMM_WORLD), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_recv(&y, 1, VC_INT32, 0, 22, VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(capture_end("broken transport failed"), 1);
    CU_ASSERT_EQUAL(y, 5);
    CU_ASSERT_EQUAL(broken_polls, 1);
    p->nnets = nnets;
    memset(p->net_err, 0, sizeof p->net_err);
    p->failed = 0;

    /* the transport a receive depends on fails: the wait ends with its
       error instead of waiting forever (the alarm ends the test if not) */
    const net_ops_t *self_ops = c->self->ops;
    c->self->ops = &bad;
    broken_polls = 0;
    alarm(30);
    capture_begin();
    vc_request_t r;
    CU_ASSERT_EQUAL(vc_irecv(&y, 1, VC_INT32, 0, 23, VC_COMM_WORLD, &r), VC_SUCCESS);
    CU_ASSERT_EQUAL(vc_wait(&r, &st), VC_ERR_TRANSPORT);
    CU_ASSERT_EQUAL(st.error, VC_ERR_TRANSPORT);
    CU_ASSERT_EQUAL(vc_recv(&y, 1, VC_INT32, VC_ANY_SOURCE, 24, VC_COMM_WORLD, &st),
                    VC_ERR_TRANSPORT);
    CU_ASSERT_EQUAL(capture_end("self transport failed"), 1);
    alarm(0);
    CU_ASSERT_EQUAL(broken_polls, 1);
    c->self->ops = self_ops;
    memset(p->net_err, 0, sizeof p->net_err);
    p->failed = 0;
    /* and the library works again once the transport does */
    CU_ASSERT_EQUAL(vc_sendrecv(&x, 1, VC_INT32, 0, 25, &y, 1, VC_INT32, 0, 25,
                                VC_COMM_WORLD, &st), VC_SUCCESS);
    CU_ASSERT_EQUAL(y, 5);
}

static int init_singleton(void)
{
    /* make sure no launcher variables leak in from the harness */
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_SERVER_URI41");
    unsetenv("PMIX_SERVER_URI4");
    unsetenv("PMIX_SERVER_URI3");
    unsetenv("PMIX_SERVER_URI2");
    unsetenv("PMIX_SERVER_URI21");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("SLURM_STEP_NUM_TASKS");
    unsetenv("SLURM_NTASKS");
    return vc_init(NULL, NULL) == VC_SUCCESS ? 0 : -1;
}

static int fini_singleton(void)
{
    return vc_finalize() == VC_SUCCESS ? 0 : -1;
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("core", NULL, NULL);
    CU_add_test(s, "config defaults", test_config_defaults);
    CU_add_test(s, "config values", test_config_values);
    CU_add_test(s, "config errors name the variable", test_config_errors);
    CU_add_test(s, "config table", test_config_describe);
    CU_add_test(s, "foreign launcher detection", test_launcher_detect);
    CU_add_test(s, "remote peers of the worst rank", test_max_remote);
    CU_add_test(s, "intrusive list", test_list);
    CU_add_test(s, "shm ring", test_ring);
    CU_add_test(s, "bulk copy: the aliasing window and every byte", test_copy);
    CU_add_test(s, "dtype sizes and op checks", test_dtype);
    CU_add_test(s, "strerror", test_strerror);
    CU_add_test(s, "calls before vc_init", test_not_initialized);
    CU_pSuite j = CU_add_suite("singleton", init_singleton, fini_singleton);
    CU_add_test(j, "argument validation", test_singleton_validation);
    CU_add_test(j, "matching, ordering, truncation", test_singleton_matching);
    CU_add_test(j, "persistent collectives: state errors", test_singleton_persistent);
    CU_add_test(j, "a transport's progress error fails the waits on it", test_transport_error);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
