/*
 * p2p_world.h -- the p2p layer alone, as rank 0 of a world of `size`
 * ranks that all sit behind one fake transport: what the wire tests
 * (test_p2p_wire.c) and the parser fuzzer (test/fuzz/fuzz_p2p.c) feed
 * packets into. Header-only: the fuzzer is built apart from the tests.
 */
#ifndef VC_TEST_P2P_WORLD_H
#define VC_TEST_P2P_WORLD_H

#include <string.h>
#include "core/comm.h"
#include "core/log.h"
#include "core/request.h"
#include "boot/boot.h"
#include "progress/progress.h"
#include "p2p/p2p.h"

static prog_t p2p_world_prog;
static req_pool_t p2p_world_reqs;
static boot_info_t p2p_world_boot;
/* the state the packets go to (p2p_on_packet's arg) */
static struct p2p_state *p2p_world;

/* every rank behind net; p2p_init()'s result */
static inline int p2p_world_setup(int size, net_t *net)
{
    log_setup(0, size, -1);             /* the drops are expected: keep quiet */
    int rc = prog_init(&p2p_world_prog, 0, size, &p2p_world_boot, 1.0, 16);
    if (rc)
        return rc;
    for (int i = 0; i < size; i++)
        p2p_world_prog.net_of[i] = net;
    if ((rc = p2p_init(&p2p_world_prog, &p2p_world_reqs, 1024, &p2p_world)))
        return rc;
    vc_comm_world_obj.magic = COMM_MAGIC;
    vc_comm_world_obj.rank = 0;
    vc_comm_world_obj.size = size;
    vc_comm_world_obj.p2p = p2p_world;
    return VC_SUCCESS;
}

/* a fresh p2p state on the same world (nothing queued) */
static inline int p2p_world_reset(void)
{
    p2p_fini(p2p_world);
    p2p_world_prog.npollers = 0;
    int rc = p2p_init(&p2p_world_prog, &p2p_world_reqs, 1024, &p2p_world);
    vc_comm_world_obj.p2p = p2p_world;
    return rc;
}

#endif
