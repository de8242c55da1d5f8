/*
 * test_a2av_hdr.c -- the check of an alltoallv stream header
 * (coll_a2av_hdr_check, shm_alltoallv.c): another process wrote it into
 * shared memory, so whatever it says, the reader takes nothing outside the
 * writer's stream and nothing past its own block, and a header that
 * disagrees with the reader's count is reported.
 *
 * Header: [stream length], then per destination [offset in the stream, or
 * UINT64_MAX: sent as a message][bytes].
 */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <string.h>
#include "coll/coll.h"

#define P 3
#define ME 1

static uint8_t hdr[(2 * P + 1) * 8];

static void set(uint64_t len, uint64_t off, uint64_t n)
{
    uint64_t h[2 * P + 1];
    for (int i = 0; i < 2 * P + 1; i++)
        h[i] = 0xdeadbeefu;     /* the other destinations' entries */
    h[0] = len;
    h[1 + 2 * ME] = off;
    h[2 + 2 * ME] = n;
    memcpy(hdr, h, sizeof h);
}

static int check(size_t want, size_t *len, size_t *off, size_t *take, size_t *msg)
{
    return coll_a2av_hdr_check(hdr, ME, want, len, off, take, msg);
}

static void test_streamed(void)
{
    size_t len, off, take, msg;
    set(100, 40, 20);
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 0);
    CU_ASSERT_EQUAL(len, 100);
    CU_ASSERT_EQUAL(off, 40);
    CU_ASSERT_EQUAL(take, 20);
    CU_ASSERT_EQUAL(msg, 0);
    set(100, 80, 20);           /* the last bytes of the stream */
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 0);
    CU_ASSERT_EQUAL(take, 20);
}

static void test_message(void)
{
    size_t len, off, take, msg;
    set(56, UINT64_MAX, 70000);
    CU_ASSERT_EQUAL(check(70000, &len, &off, &take, &msg), 0);
    CU_ASSERT_EQUAL(take, 0);
    CU_ASSERT_EQUAL(msg, 70000);
    /* a message of another size than mine: reported; the receive is
       sized by the caller from msg (bigger: to scratch) */
    CU_ASSERT_EQUAL(check(100, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(msg, 70000);
}

static void test_count_mismatch(void)
{
    size_t len, off, take, msg;
    set(100, 40, 30);           /* it sends 30, I expect 20: take 20 */
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(take, 20);
    set(100, 40, 10);           /* it sends 10, I expect 20: take 10 */
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(take, 10);
}

static void test_outside_stream(void)
{
    size_t len, off, take, msg;
    set(100, 101, 0);           /* offset past the end */
    CU_ASSERT_EQUAL(check(0, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(take, 0);
    set(100, 90, 20);           /* runs past the end */
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(take, 0);
    set(100, 50, UINT64_MAX - 10);  /* off + bytes would wrap */
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(take, 0);
    set(100, UINT64_MAX - 1, 20);   /* an offset that is not the marker */
    CU_ASSERT_EQUAL(check(20, &len, &off, &take, &msg), 1);
    CU_ASSERT_EQUAL(take, 0);
    CU_ASSERT_EQUAL(msg, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    CU_pSuite s = CU_add_suite("a2av_hdr", NULL, NULL);
    CU_add_test(s, "a block in the stream", test_streamed);
    CU_add_test(s, "a block sent as a message", test_message);
    CU_add_test(s, "counts that disagree", test_count_mismatch);
    CU_add_test(s, "offsets outside the stream", test_outside_stream);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    CU_cleanup_registry();
    return f ? 1 : CU_get_error();
}
