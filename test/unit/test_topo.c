/*
 * test_topo.c -- HCA selection against synthetic hwloc XML topologies.
 * The expected choices are written out by hand from the XML files in
 * test/unit/topo/, independently of the selector's logic.
 */
#include <stdio.h>
#include <string.h>
#include <CUnit/Basic.h>
#include <hwloc.h>

#include "vcoll.h"
#include "topo/topo.h"

#ifndef TOPO_XML_DIR
#define TOPO_XML_DIR "test/unit/topo"
#endif

static hwloc_topology_t load(const char *file)
{
    char path[1024];
    hwloc_topology_t t = NULL;
    snprintf(path, sizeof path, "%s/%s", TOPO_XML_DIR, file);
    int rc = topo_load_xml(&t, path);
    CU_ASSERT_EQUAL_FATAL(rc, VC_SUCCESS);
    return t;
}

/* cpuset of one PU (by OS index) */
static hwloc_bitmap_t pu(int i)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    hwloc_bitmap_only(b, (unsigned)i);
    return b;
}

/* name chosen for a rank on PU p with local rank lr */
static const char *choose(hwloc_topology_t t, int p, int lr,
                          const char *const *names, int n, int *dist)
{
    topo_hca_choice_t ch;
    hwloc_bitmap_t cs = p >= 0 ? pu(p) : NULL;
    int rc = topo_hca_select(t, cs, names, n, lr, NULL, &ch);
    hwloc_bitmap_free(cs);
    CU_ASSERT_EQUAL(rc, VC_SUCCESS);
    if (rc != VC_SUCCESS || ch.dev < 0 || ch.dev >= n)
        return "(none)";
    CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, names[ch.dev]));
    if (dist)
        *dist = ch.distance;
    return names[ch.dev];
}

static void test_two_numa_own_side(void)
{
    hwloc_topology_t t = load("two_numa.xml");
    const char *fwd[] = { "mlx5_0", "mlx5_1" };
    const char *rev[] = { "mlx5_1", "mlx5_0" };
    int d = -9;
    /* PUs 0,1 are on package/NUMA 0 with mlx5_0; PUs 2,3 on 1 with mlx5_1 */
    for (int lr = 0; lr < 4; lr++) {
        CU_ASSERT_STRING_EQUAL(choose(t, 0, lr, fwd, 2, &d), "mlx5_0");
        CU_ASSERT_EQUAL(d, TOPO_NEAR_NUMA);
        CU_ASSERT_STRING_EQUAL(choose(t, 1, lr, rev, 2, &d), "mlx5_0");
        CU_ASSERT_STRING_EQUAL(choose(t, 2, lr, fwd, 2, &d), "mlx5_1");
        CU_ASSERT_EQUAL(d, TOPO_NEAR_NUMA);
        CU_ASSERT_STRING_EQUAL(choose(t, 3, lr, rev, 2, &d), "mlx5_1");
    }
    hwloc_bitmap_t cs = pu(0);
    CU_ASSERT_EQUAL(topo_hca_distance(t, cs, "mlx5_0", NULL, 0), TOPO_NEAR_NUMA);
    CU_ASSERT_EQUAL(topo_hca_distance(t, cs, "mlx5_1", NULL, 0), TOPO_NEAR_REMOTE);
    char where[96];
    topo_hca_distance(t, cs, "mlx5_1", where, sizeof where);
    CU_ASSERT_PTR_NOT_NULL(strstr(where, "NUMA node 1"));
    /* a rank spanning both packages is near neither: spread by local rank */
    hwloc_bitmap_set_range(cs, 0, 3);
    CU_ASSERT_EQUAL(topo_hca_distance(t, cs, "mlx5_0", NULL, 0), TOPO_NEAR_REMOTE);
    hwloc_bitmap_free(cs);
    CU_ASSERT_STRING_EQUAL(choose(t, -1, 0, fwd, 2, NULL), "mlx5_0");
    CU_ASSERT_STRING_EQUAL(choose(t, -1, 1, fwd, 2, NULL), "mlx5_1");
    hwloc_topology_destroy(t);
}

static void test_equidistant_split(void)
{
    hwloc_topology_t t = load("one_numa_two_hca.xml");
    const char *names[] = { "mlx5_0", "mlx5_1" };
    int count[2] = { 0, 0 }, d = -9;
    for (int lr = 0; lr < 4; lr++) {
        const char *c = choose(t, lr, lr, names, 2, &d);
        CU_ASSERT_EQUAL(d, TOPO_NEAR_NUMA);
        count[strcmp(c, "mlx5_0") == 0 ? 0 : 1]++;
        /* neighbours in local-rank order alternate */
        CU_ASSERT_STRING_EQUAL(c, lr % 2 ? "mlx5_1" : "mlx5_0");
    }
    CU_ASSERT_EQUAL(count[0], 2);
    CU_ASSERT_EQUAL(count[1], 2);
    hwloc_topology_destroy(t);
}

static void test_unplaced_rxe(void)
{
    hwloc_topology_t t = load("two_numa.xml");
    const char *rxe[] = { "rxe0", "rxe1" };
    int count[2] = { 0, 0 }, d = -9;
    for (int lr = 0; lr < 4; lr++) {
        /* all four ranks on package 0: rxe is equidistant anyway */
        const char *c = choose(t, lr % 2, lr, rxe, 2, &d);
        CU_ASSERT_EQUAL(d, TOPO_NEAR_REMOTE);
        count[strcmp(c, "rxe0") == 0 ? 0 : 1]++;
    }
    CU_ASSERT_EQUAL(count[0], 2);
    CU_ASSERT_EQUAL(count[1], 2);
    char where[96];
    hwloc_bitmap_t cs = pu(2);
    CU_ASSERT_EQUAL(topo_hca_distance(t, cs, "rxe0", where, sizeof where),
                    TOPO_NEAR_REMOTE);
    CU_ASSERT_PTR_NOT_NULL(strstr(where, "not placed"));
    hwloc_bitmap_free(cs);
    /* a placed, near HCA beats an unplaced one */
    const char *mix[] = { "rxe0", "mlx5_1" };
    for (int lr = 0; lr < 4; lr++)
        CU_ASSERT_STRING_EQUAL(choose(t, 3, lr, mix, 2, NULL), "mlx5_1");
    hwloc_topology_destroy(t);
}

static void test_package_level(void)
{
    hwloc_topology_t t = load("snc_package.xml");
    const char *names[] = { "mlx5_1", "mlx5_0" };
    int d = -9;
    /* PU 0: NUMA 0 has no HCA; mlx5_0 is in the same package */
    CU_ASSERT_STRING_EQUAL(choose(t, 0, 1, names, 2, &d), "mlx5_0");
    CU_ASSERT_EQUAL(d, TOPO_NEAR_PACKAGE);
    CU_ASSERT_STRING_EQUAL(choose(t, 3, 0, names, 2, &d), "mlx5_0");
    CU_ASSERT_EQUAL(d, TOPO_NEAR_NUMA);
    CU_ASSERT_STRING_EQUAL(choose(t, 4, 1, names, 2, &d), "mlx5_1");
    CU_ASSERT_EQUAL(d, TOPO_NEAR_NUMA);
    CU_ASSERT_STRING_EQUAL(choose(t, 5, 0, names, 2, &d), "mlx5_1");
    hwloc_topology_destroy(t);
}

static void test_override(void)
{
    hwloc_topology_t t = load("two_numa.xml");
    const char *names[] = { "mlx5_0", "mlx5_1" };
    hwloc_bitmap_t cs = pu(0);    /* near mlx5_0: override must still win */
    topo_hca_choice_t ch;

    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 0, "mlx5_1:2", &ch), VC_SUCCESS);
    CU_ASSERT_EQUAL(ch.dev, 1);
    CU_ASSERT_EQUAL(ch.port, 2);
    CU_ASSERT_EQUAL(ch.distance, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, "VCOLL_HCA"));

    /* list indexed by local rank modulo its length */
    const char *spec = "mlx5_1,mlx5_0:1,mlx5_1:3";
    int want_dev[] = { 1, 0, 1, 1, 0 }, want_port[] = { 0, 1, 3, 0, 1 };
    for (int lr = 0; lr < 5; lr++) {
        CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, lr, spec, &ch), VC_SUCCESS);
        CU_ASSERT_EQUAL(ch.dev, want_dev[lr]);
        CU_ASSERT_EQUAL(ch.port, want_port[lr]);
    }

    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 0, "mlx4_9", &ch), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, "mlx4_9"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, "mlx5_1"));   /* lists what exists */
    CU_ASSERT_EQUAL(ch.dev, -1);
    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 0, "mlx5_0:x", &ch), VC_ERR_ARG);
    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 0, "mlx5_0:0", &ch), VC_ERR_ARG);
    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 0, ":1", &ch), VC_ERR_ARG);
    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 1, "mlx5_0,", &ch), VC_ERR_ARG);
    /* empty override means: choose by locality */
    CU_ASSERT_EQUAL(topo_hca_select(t, cs, names, 2, 1, "", &ch), VC_SUCCESS);
    CU_ASSERT_EQUAL(ch.dev, 0);
    hwloc_bitmap_free(cs);
    hwloc_topology_destroy(t);
}

static void test_errors(void)
{
    topo_hca_choice_t ch;
    CU_ASSERT_EQUAL(topo_hca_select(NULL, NULL, NULL, 0, 0, NULL, &ch), VC_ERR_TRANSPORT);
    CU_ASSERT_EQUAL(ch.dev, -1);
    CU_ASSERT_EQUAL(topo_hca_select(NULL, NULL, NULL, 0, 0, NULL, NULL), VC_ERR_ARG);
    /* without a topology every device is equidistant */
    const char *names[] = { "a", "b", "c" };
    for (int lr = 0; lr < 6; lr++) {
        CU_ASSERT_EQUAL(topo_hca_select(NULL, NULL, names, 3, lr, NULL, &ch), VC_SUCCESS);
        CU_ASSERT_EQUAL(ch.dev, lr % 3);
    }
    hwloc_topology_t t = NULL;
    CU_ASSERT_NOT_EQUAL(topo_load_xml(&t, TOPO_XML_DIR "/does-not-exist.xml"), VC_SUCCESS);
}

static void test_real_machine(void)
{
    /* the host's own topology must load and give a non-empty cpuset */
    hwloc_topology_t t = NULL;
    CU_ASSERT_EQUAL_FATAL(topo_load(&t), VC_SUCCESS);
    hwloc_bitmap_t cs = topo_my_cpuset(t);
    CU_ASSERT_PTR_NOT_NULL(cs);
    CU_ASSERT_FALSE(hwloc_bitmap_iszero(cs));
    hwloc_bitmap_free(cs);
    hwloc_topology_destroy(t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("topo", NULL, NULL);
    CU_add_test(s, "two NUMA nodes: each side its own HCA", test_two_numa_own_side);
    CU_add_test(s, "equidistant HCAs split by local rank", test_equidistant_split);
    CU_add_test(s, "unplaced (rxe) devices are equidistant", test_unplaced_rxe);
    CU_add_test(s, "same package beats remote", test_package_level);
    CU_add_test(s, "VCOLL_HCA override", test_override);
    CU_add_test(s, "errors", test_errors);
    CU_add_test(s, "real machine loads", test_real_machine);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
