/*
 * test_hb.c -- what a heartbeat packet may do, by who sent it
 * (hb_classify, src/net/verbs/hb_thread.c), without an HCA.
 *
 * A PING is answered whoever sent it, but counts as the peer's life only
 * when it comes from the QP *and* GID the peer published, like PONG and
 * DOWN: a QP number is small and reused across nodes, so a PING from the
 * same QP number on another node (a forged or stale one) must not keep a
 * dead peer "alive".
 */
#include <CUnit/Basic.h>
#include <string.h>
#include "net/verbs/hb.h"

static const uint8_t peer_gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0x11, 0x22, 0xff,
                                     0xfe, 0x33, 0x44, 0x55};
static const uint8_t other_gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0x11, 0x22, 0xff,
                                      0xfe, 0x33, 0x44, 0x66};

/* a received UD slot starts with the 40-byte GRH; the source GID at 8 */
static void grh_from(uint8_t grh[40], const uint8_t gid[16])
{
    memset(grh, 0, 40);
    memcpy(grh + 8, gid, 16);
}

static void test_classify(void)
{
    hb_peer_t p;
    memset(&p, 0, sizeof p);
    p.state = HB_P_READY;
    p.qpn = 0x1234;
    memcpy(p.gid, peer_gid, 16);
    struct ibv_wc wc;
    memset(&wc, 0, sizeof wc);
    wc.src_qp = 0x1234;
    wc.wc_flags = IBV_WC_GRH;
    uint8_t grh[40];

    grh_from(grh, peer_gid);                    /* the peer itself */
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PING, &wc, grh), HB_ACT_REPLY | HB_ACT_ALIVE);
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PONG, &wc, grh), HB_ACT_ALIVE | HB_ACT_PONG);
    CU_ASSERT_EQUAL(hb_classify(&p, HB_DOWN, &wc, grh), HB_ACT_DOWN);

    grh_from(grh, other_gid);                   /* its QP number, another GID */
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PING, &wc, grh), HB_ACT_REPLY);
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PONG, &wc, grh), 0);
    CU_ASSERT_EQUAL(hb_classify(&p, HB_DOWN, &wc, grh), 0);

    grh_from(grh, peer_gid);                    /* its GID, another QP */
    wc.src_qp = 0x1235;
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PING, &wc, grh), HB_ACT_REPLY);
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PONG, &wc, grh), 0);

    wc.src_qp = 0x1234;                         /* never resolved: unchecked */
    p.state = HB_P_NONE;
    CU_ASSERT_EQUAL(hb_classify(&p, HB_PING, &wc, grh), HB_ACT_REPLY);
    CU_ASSERT_EQUAL(hb_classify(&p, HB_DOWN, &wc, grh), 0);
    CU_ASSERT_EQUAL(hb_classify(&p, 99, &wc, grh), 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("heartbeat", NULL, NULL);
    CU_add_test(s, "PING, PONG and DOWN by source QP and GID", test_classify);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
