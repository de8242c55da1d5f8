/*
 * test_nodes.c -- the job-wide node map and what is decided from it, on
 * uneven layouts, without a launcher: the pure functions behind boot_init
 * (src/boot/nodes.c), the transport plan (src/net/plan.c) and the settings
 * agreement (src/boot/agree.c). Expected values are worked out by hand in
 * each test, not by the library's code.
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "core/config.h"
#include "boot/boot.h"
#include "net/net.h"

static char err[256];

/* 1+2+3 given as PMIx per-node lists in an order that is not rank order */
static void test_from_peers_uneven(void)
{
    int c3[] = {5, 3, 4}, c1[] = {0}, c2[] = {2, 1};
    const int *lists[] = {c3, c1, c2};
    int counts[] = {3, 1, 2}, node_of[6], nn = 0;
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(6, 3, lists, counts, node_of, &nn, err,
                                            sizeof err), VC_SUCCESS);
    int want[] = {0, 1, 1, 2, 2, 2};   /* numbered by lowest rank */
    CU_ASSERT_EQUAL(nn, 3);
    CU_ASSERT_EQUAL(memcmp(node_of, want, sizeof want), 0);
    boot_info_t b = {.size = 6, .nnodes = nn, .node_of = node_of};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 5);   /* the 1-rank node */
}

/* 2x2 mapped by node: ranks 0,2 and 1,3; a node list PMIx gives empty */
static void test_from_peers_round_robin(void)
{
    int a[] = {1, 3}, bb[] = {0, 2};
    const int *lists[] = {a, NULL, bb};
    int counts[] = {2, 0, 2}, node_of[4], nn = 0;
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(4, 3, lists, counts, node_of, &nn, err,
                                            sizeof err), VC_SUCCESS);
    int want[] = {0, 1, 0, 1};
    CU_ASSERT_EQUAL(nn, 2);
    CU_ASSERT_EQUAL(memcmp(node_of, want, sizeof want), 0);
    boot_info_t b = {.size = 4, .nnodes = nn, .node_of = node_of};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 2);
}

/* incomplete or contradictory PMIx data is an error naming the rank */
static void test_from_peers_bad(void)
{
    int a[] = {0, 1}, bb[] = {1, 2}, c[] = {0, 7};
    const int *dup[] = {a, bb};
    int counts[] = {2, 2}, node_of[4], nn = 0;
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(3, 2, dup, counts, node_of, &nn, err,
                                            sizeof err), VC_ERR_BOOTSTRAP);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 1"));
    const int *missing[] = {a};
    int one[] = {2};
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(3, 1, missing, one, node_of, &nn, err,
                                            sizeof err), VC_ERR_BOOTSTRAP);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 2"));
    const int *range[] = {c};
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(2, 1, range, one, node_of, &nn, err,
                                            sizeof err), VC_ERR_BOOTSTRAP);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 7"));
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(2, 1, NULL, one, node_of, &nn, err,
                                            sizeof err), VC_ERR_ARG);
}

/* host names: 3+1 with the lone node in the middle of the rank order */
/* The leaders' walk (map_by_leaders in pmix.c) against a layout known in
 * advance: every rank's record says its node's lowest rank, a leader's
 * also lists its node. */
typedef struct walk_job {
    int size;
    const int *node;        /* the true node of every rank (any labels) */
    int forge;              /* 1: rank 3's leader omits rank 3 from its list;
                               2: rank 2 names a leader beyond the job */
} walk_job_t;

static int walk_fetch(void *arg, int rank, int *leader, const int **ranks, int *nranks)
{
    static int list[4096];      /* the fetcher's: valid until the next fetch */
    const walk_job_t *j = arg;
    int l = rank;
    for (int q = 0; q < j->size; q++)
        if (j->node[q] == j->node[rank] && q < l)
            l = q;
    *leader = j->forge == 2 && rank == 2 ? j->size + 5 : l;
    *ranks = NULL;
    *nranks = 0;
    if (l != rank)
        return VC_SUCCESS;
    CU_ASSERT_FATAL(j->size <= (int)(sizeof list / sizeof list[0]));
    for (int q = 0; q < j->size; q++)
        if (j->node[q] == j->node[rank] && !(j->forge == 1 && q == 3))
            list[(*nranks)++] = q;
    *ranks = list;
    return VC_SUCCESS;
}

static void test_walk(void)
{
    /* hand-made: ranks dealt round-robin over 3 nodes, then 1+2+3 blocks */
    int rr[7] = {5, 9, 7, 5, 9, 7, 5}, want_rr[7] = {0, 1, 2, 0, 1, 2, 0};
    int blk[6] = {4, 8, 8, 2, 2, 2}, want_blk[6] = {0, 1, 1, 2, 2, 2};
    const int *layouts[2] = {rr, blk}, *wants[2] = {want_rr, want_blk};
    int sizes[2] = {7, 6}, nodes[2] = {3, 3};
    for (int t = 0; t < 2; t++) {
        walk_job_t j = {sizes[t], layouts[t], 0};
        int node_of[8], nn = 0, nf = 0;
        CU_ASSERT_EQUAL(boot_nodemap_walk(j.size, walk_fetch, &j, node_of, &nn, &nf, err,
                                          sizeof err), VC_SUCCESS);
        CU_ASSERT_EQUAL(nn, nodes[t]);
        CU_ASSERT(!memcmp(node_of, wants[t], (size_t)j.size * sizeof(int)));
        CU_ASSERT(nf <= 2 * nodes[t]);
    }
    /* random uneven layouts up to 1000 ranks: same map as the labels say,
       at most 2 lookups per node, whatever the job size */
    unsigned seed = 12345;
    for (int it = 0; it < 200; it++) {
        seed = seed * 1103515245u + 12345u;
        int size = 1 + (int)(seed >> 8) % 1000;
        seed = seed * 1103515245u + 12345u;
        int nlab = 1 + (int)(seed >> 8) % 40;
        int *lab = malloc((size_t)size * sizeof(int)), *node_of = malloc((size_t)size * sizeof(int));
        int *ref = malloc((size_t)size * sizeof(int)), *first = malloc((size_t)nlab * sizeof(int));
        for (int r = 0; r < size; r++) {
            seed = seed * 1103515245u + 12345u;
            lab[r] = (int)(seed >> 8) % nlab;
        }
        /* reference: nodes numbered by their lowest rank, by plain loops */
        int used = 0;
        for (int k = 0; k < nlab; k++)
            first[k] = -1;
        for (int r = 0; r < size; r++) {
            if (first[lab[r]] < 0)
                first[lab[r]] = used++;
            ref[r] = first[lab[r]];
        }
        walk_job_t j = {size, lab, 0};
        int nn = 0, nf = 0;
        CU_ASSERT_EQUAL(boot_nodemap_walk(size, walk_fetch, &j, node_of, &nn, &nf, err,
                                          sizeof err), VC_SUCCESS);
        CU_ASSERT_EQUAL(nn, used);
        CU_ASSERT(!memcmp(node_of, ref, (size_t)size * sizeof(int)));
        CU_ASSERT(nf <= 2 * used);
        free(lab);
        free(node_of);
        free(ref);
        free(first);
    }
    /* records that contradict each other are refused, with the rank named */
    int two[6] = {0, 0, 1, 0, 1, 1};
    for (int forge = 1; forge <= 2; forge++) {
        walk_job_t j = {6, two, forge};
        int node_of[6], nn = 0;
        err[0] = 0;
        CU_ASSERT_EQUAL(boot_nodemap_walk(6, walk_fetch, &j, node_of, &nn, NULL, err,
                                          sizeof err), VC_ERR_BOOTSTRAP);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, forge == 1 ? "rank 3" : "rank 2"));
    }
}

static void test_from_hosts(void)
{
    const char *h[] = {"n1", "n1", "zz", "n1", "n1"};
    int node_of[5], nn = 0;
    CU_ASSERT_EQUAL(boot_nodemap_from_hosts(5, h, node_of, &nn, err, sizeof err),
                    VC_SUCCESS);
    int want[] = {0, 0, 1, 0, 0};
    CU_ASSERT_EQUAL(nn, 2);
    CU_ASSERT_EQUAL(memcmp(node_of, want, sizeof want), 0);
    boot_info_t b = {.size = 5, .nnodes = nn, .node_of = node_of};
    CU_ASSERT_EQUAL(boot_max_remote_peers(&b), 4);
    const char *bad[] = {"n1", NULL};
    CU_ASSERT_EQUAL(boot_nodemap_from_hosts(2, bad, node_of, &nn, err, sizeof err),
                    VC_ERR_BOOTSTRAP);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 1"));
}

/* the two PMIx sources give the same ids and digest for the same layout:
 * ranks that built their map differently still agree */
static void test_sources_agree(void)
{
    const char *h[] = {"c", "a", "c", "b", "a", "c"};
    int b0[] = {3}, a0[] = {1, 4}, c0[] = {0, 2, 5};
    const int *lists[] = {a0, b0, c0};
    int counts[] = {2, 1, 3}, m1[6], m2[6], n1, n2;
    CU_ASSERT_EQUAL(boot_nodemap_from_hosts(6, h, m1, &n1, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL(boot_nodemap_from_peers(6, 3, lists, counts, m2, &n2, err, sizeof err),
                    VC_SUCCESS);
    CU_ASSERT_EQUAL(n1, 3);
    CU_ASSERT_EQUAL(n2, 3);
    CU_ASSERT_EQUAL(memcmp(m1, m2, sizeof m1), 0);
    CU_ASSERT_EQUAL(boot_nodemap_digest(6, m1), boot_nodemap_digest(6, m2));
    int other[] = {0, 1, 0, 2, 1, 1};   /* rank 5 moved */
    CU_ASSERT_NOT_EQUAL(boot_nodemap_digest(6, m1), boot_nodemap_digest(6, other));
}

static void test_sizes_and_describe(void)
{
    int node_of[] = {0, 1, 1, 2, 2, 2}, count[3];
    CU_ASSERT_EQUAL(boot_node_sizes(6, 3, node_of, count), VC_SUCCESS);
    CU_ASSERT(count[0] == 1 && count[1] == 2 && count[2] == 3);
    int broken[] = {0, 3};
    CU_ASSERT_EQUAL(boot_node_sizes(2, 3, broken, count), VC_ERR_ARG);
    boot_info_t b = {.size = 6, .nnodes = 3, .node_of = node_of, .node_id = 1,
                     .node_name = "nodeB"};
    char text[200];
    CU_ASSERT_EQUAL(boot_nodemap_describe(&b, text, sizeof text), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(text, "6 ranks on 3 nodes, ranks per node 1,2,3; this rank on "
                                 "node 1 (nodeB) with 2 ranks");
    b.node_id = 3;
    CU_ASSERT_EQUAL(boot_nodemap_describe(&b, text, sizeof text), VC_ERR_ARG);
}

/* A canonical map is unchanged by canon; ids are renumbered by first rank. */
static void test_canon(void)
{
    int m[] = {3, 3, 2, 4, 2}, nn;
    CU_ASSERT_EQUAL(boot_nodemap_canon(5 + 5, NULL, &nn, err, sizeof err), VC_ERR_ARG);
    int big[10] = {7, 7, 2, 9, 2, 7, 7, 2, 9, 2};
    CU_ASSERT_EQUAL(boot_nodemap_canon(10, big, &nn, err, sizeof err), VC_SUCCESS);
    int want[] = {0, 0, 1, 2, 1, 0, 0, 1, 2, 1};
    CU_ASSERT_EQUAL(nn, 3);
    CU_ASSERT_EQUAL(memcmp(big, want, sizeof want), 0);
    m[3] = -1;
    CU_ASSERT_EQUAL(boot_nodemap_canon(5, m, &nn, err, sizeof err), VC_ERR_BOOTSTRAP);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rank 3"));
}

/* The plan on every rank of a 1+2+3 job: the same remote transport even
 * though each rank has a different number of remote peers (5, 4, 3). */
static void test_plan_uneven(void)
{
    int node_of[] = {0, 1, 1, 2, 2, 2};
    vc_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.net = CFG_NET_AUTO;
    int local_size[] = {1, 2, 2, 3, 3, 3};
    for (int limit = 0; limit <= 6; limit++) {
        cfg.rc_max_peers = limit;
        int want = limit > 0 && limit < 5 ? NET_KIND_UD : NET_KIND_RC;
        for (int r = 0; r < 6; r++) {
            boot_info_t b = {.rank = r, .size = 6, .nnodes = 3, .node_of = node_of,
                             .node_id = node_of[r], .local_size = local_size[r]};
            net_plan_t p;
            CU_ASSERT_EQUAL(net_plan(&cfg, &b, &p, err, sizeof err), VC_SUCCESS);
            CU_ASSERT_EQUAL(p.remote, want);
            CU_ASSERT_EQUAL(p.max_remote, 5);
            CU_ASSERT_EQUAL(p.local, r == 0 ? NET_KIND_NONE : NET_KIND_SHM);
        }
    }
    /* forced rc past the limit: a clear error, on every rank alike */
    cfg.net = CFG_NET_RC;
    cfg.rc_max_peers = 4;
    boot_info_t b = {.rank = 3, .size = 6, .nnodes = 3, .node_of = node_of, .node_id = 2,
                     .local_size = 3};
    net_plan_t p;
    CU_ASSERT_EQUAL(net_plan(&cfg, &b, &p, err, sizeof err), VC_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "VCOLL_RC_MAX_PEERS=4"));
    cfg.rc_max_peers = 5;
    CU_ASSERT_EQUAL(net_plan(&cfg, &b, &p, err, sizeof err), VC_SUCCESS);
    CU_ASSERT(p.local == NET_KIND_RC && p.remote == NET_KIND_RC);
    cfg.net = CFG_NET_UD;
    CU_ASSERT_EQUAL(net_plan(&cfg, &b, &p, err, sizeof err), VC_SUCCESS);
    CU_ASSERT(p.local == NET_KIND_UD && p.remote == NET_KIND_UD);
    cfg.net = CFG_NET_SHM;
    CU_ASSERT_EQUAL(net_plan(&cfg, &b, &p, err, sizeof err), VC_ERR_TRANSPORT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "VCOLL_NET=shm"));
}

static void test_agree(void)
{
    static const char *const nets[] = {"auto", "shm", "rc", "ud", NULL};
    boot_info_t b = {.rank = 3, .size = 4};
    CU_ASSERT_EQUAL(boot_agree_add(&b, "VCOLL_NET", 2, nets), VC_SUCCESS);
    CU_ASSERT_EQUAL(boot_agree_add(&b, "VCOLL_RC_MAX_PEERS", 4, NULL), VC_SUCCESS);
    int64_t same[] = {2, 4}, net[] = {0, 4}, lim[] = {2, 1}, odd[] = {9, 4};
    char msg[256] = "";
    CU_ASSERT_EQUAL(boot_agree_diff(b.agree, 2, 3, same, 0, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(boot_agree_diff(b.agree, 2, 3, net, 0, msg, sizeof msg), 1);
    CU_ASSERT_STRING_EQUAL(msg, "VCOLL_NET must be the same on every rank, but it is rc "
                                "on rank 3 and auto on rank 0");
    CU_ASSERT_EQUAL(boot_agree_diff(b.agree, 2, 3, lim, 0, msg, sizeof msg), 1);
    CU_ASSERT_STRING_EQUAL(msg, "VCOLL_RC_MAX_PEERS must be the same on every rank, but "
                                "it is 4 on rank 3 and 1 on rank 0");
    CU_ASSERT_EQUAL(boot_agree_diff(b.agree, 2, 3, odd, 0, msg, sizeof msg), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "#9 on rank 0"));
    /* the names hash tells lists apart, so a version skew is not a "value" */
    boot_info_t c = {.rank = 0, .size = 4};
    boot_agree_add(&c, "VCOLL_RC_MAX_PEERS", 4, NULL);
    boot_agree_add(&c, "VCOLL_NET", 2, nets);
    CU_ASSERT_NOT_EQUAL(boot_agree_names_hash(b.agree, 2), boot_agree_names_hash(c.agree, 2));
    for (int i = 2; i < BOOT_AGREE_MAX; i++)
        CU_ASSERT_EQUAL(boot_agree_add(&b, "X", i, NULL), VC_SUCCESS);
    CU_ASSERT_EQUAL(boot_agree_add(&b, "one too many", 0, NULL), VC_ERR_ARG);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("nodes", NULL, NULL);
    CU_add_test(s, "map from per-node lists, 1+2+3", test_from_peers_uneven);
    CU_add_test(s, "map from per-node lists, 2x2 by node", test_from_peers_round_robin);
    CU_add_test(s, "incomplete per-node lists", test_from_peers_bad);
    CU_add_test(s, "map from the node leaders' records (O(nodes) lookups)", test_walk);
    CU_add_test(s, "map from host names", test_from_hosts);
    CU_add_test(s, "both sources agree", test_sources_agree);
    CU_add_test(s, "node sizes and description", test_sizes_and_describe);
    CU_add_test(s, "canonical node ids", test_canon);
    CU_add_test(s, "transport plan on 1+2+3", test_plan_uneven);
    CU_add_test(s, "job-wide settings agreement", test_agree);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
