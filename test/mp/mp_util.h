/* mp_util.h -- helpers for the self-checking multi-process tests. */
#ifndef MP_UTIL_H
#define MP_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vcoll.h"

static int mp_rank = -1, mp_size = 0, mp_fails = 0;

#define FAIL(...) do { fprintf(stderr, "FAIL: rank %d: ", mp_rank); fprintf(stderr, __VA_ARGS__); \
                       fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
                       __atomic_add_fetch(&mp_fails, 1, __ATOMIC_RELAXED); } while (0)
#define EXPECT_RC(call, want) do { int rc_ = (call); if (rc_ != (want)) \
        FAIL("%s returned %d (%s), expected %s", #call, rc_, vc_strerror(rc_), #want); } while (0)
#define OK(call) EXPECT_RC(call, VC_SUCCESS)

static inline void mp_init(int *argc, char ***argv)
{
    int rc = vc_init(argc, argv);
    if (rc) {
        fprintf(stderr, "FAIL: vc_init: %s\n", vc_strerror(rc));
        exit(1);
    }
    vc_comm_rank(VC_COMM_WORLD, &mp_rank);
    vc_comm_size(VC_COMM_WORLD, &mp_size);
}

/* 1 when every rank shares my host (collective over the world) */
static inline int mp_on_one_node(void)
{
    char (*h)[64] = calloc((size_t)mp_size, 64), mine[64] = "";
    int one = 1;
    gethostname(mine, sizeof mine - 1);
    OK(vc_allgather(mine, h, 64, VC_BYTE, VC_COMM_WORLD));
    for (int q = 0; q < mp_size; q++)
        one &= !strcmp(h[q], mine);
    free(h);
    return one;
}

/* 1 when env names algorithm alg and every rank shares my host: a forced
   shared-memory algorithm must then take every blocking call of two or
   more ranks (tests check the library's counter) */
static inline int mp_forced_on_one_node(const char *env, const char *alg)
{
    const char *f = getenv(env);
    if (!f || strcmp(f, alg))
        return 0;
    return mp_on_one_node();
}

/* a barrier made of point-to-point only (tests p2p without collectives) */
static inline void mp_sync(void)
{
    char t = 0;
    for (int k = 1; k < mp_size; k <<= 1) {
        OK(vc_sendrecv(&t, 1, VC_BYTE, (mp_rank + k) % mp_size, 0x3fff0000,
                       &t, 1, VC_BYTE, (mp_rank - k + mp_size) % mp_size, 0x3fff0000,
                       VC_COMM_WORLD, VC_STATUS_IGNORE));
    }
}

/* byte pattern that depends on who sent what */
static inline uint8_t mp_pat(int src, int dst, size_t len, size_t i)
{
    return (uint8_t)(src * 31 + dst * 17 + len * 7 + i * 13 + (i >> 8));
}

static inline void mp_fill(uint8_t *b, int src, int dst, size_t len)
{
    for (size_t i = 0; i < len; i++)
        b[i] = mp_pat(src, dst, len, i);
}

static inline size_t mp_verify(const uint8_t *b, int src, int dst, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != mp_pat(src, dst, len, i))
            return i + 1;
    return 0;
}

static inline int mp_finish(const char *name)
{
    int rc = vc_finalize();
    if (rc)
        FAIL("vc_finalize: %s", vc_strerror(rc));
    if (mp_fails) {
        fprintf(stderr, "FAIL: rank %d: %s: %d failure(s)\n", mp_rank, name, mp_fails);
        return 1;
    }
    if (mp_rank == 0)
        printf("%s: ok (%d ranks)\n", name, mp_size);
    return 0;
}

#endif
