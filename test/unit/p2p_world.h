/*
 * p2p_world.h -- the p2p layer alone, as rank 0 of a world of `size`
 * ranks that all sit behind one fake transport: what the wire tests
 * (test_p2p_wire.c) and the parser fuzzer (test/fuzz/fuzz_p2p.c) feed
 * packets into. Header-only: the fuzzer is built apart from the tests.
 */
#ifndef VC_TEST_P2P_WORLD_H
#define VC_TEST_P2P_WORLD_H

#include "core/ctx.h"
#include "core/comm.h"
#include "p2p/p2p.h"

/* nets: room for size pointers, all set to net. p2p_init()'s result. */
static inline int p2p_world_setup(int size, net_t *net, net_t **nets)
{
    vc_ctx.size = size;
    vc_ctx.rank = 0;
    vc_ctx.cfg.eager_limit = 1024;
    vc_ctx.cfg.log_level = -1;        /* the drops are expected: keep quiet */
    vc_ctx.dead_peer = -1;
    for (int i = 0; i < size; i++)
        nets[i] = net;
    vc_ctx.net_of = nets;
    vc_comm_world_obj.magic = COMM_MAGIC;
    vc_comm_world_obj.rank = 0;
    vc_comm_world_obj.size = size;
    return p2p_init();
}

#endif
