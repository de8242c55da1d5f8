/*
 * mp_nodes.c -- a multi-node job agrees on its layout and its transports.
 * Meant for emulated nodes (contrib/vm/emulated-nodes.sh: each node has its
 * own host name) but correct on one node too.
 *
 * The reference is independent of the library's PMIx code: every rank's
 * gethostname(), allgathered; equal names share a node. Checked:
 *  - the library's node map (ctx_lib.boot) equals the reference, numbered by
 *    lowest rank, and so does its "most remote peers" number;
 *  - every rank holds the same node count, most-remote number and map digest
 *    (allreduce MIN == MAX): the job-wide decisions really are job-wide;
 *  - each peer's transport is the one VCOLL_NET / VCOLL_RC_MAX_PEERS (read
 *    here from the environment, defaults as documented) call for;
 *  - traffic over it: every pair exchanges an eager and a rendezvous-sized
 *    message, and allreduce / bcast / allgather give the plain-loop values.
 * MP_NODES_VERBOSE=1 prints each rank's view.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../mp/mp_util.h"
#include "core/ctx.h"
#include "net/net.h"

#define HOST 64

static const char *expected_net(int same_node, int ref_max_remote)
{
    const char *net = getenv("VCOLL_NET");
    if (net && *net && strcmp(net, "auto"))
        return net;
    if (same_node)
        return "shm";
    const char *m = getenv("VCOLL_RC_MAX_PEERS");
    long limit = m && *m ? strtol(m, NULL, 0) : 4096;   /* documented default */
    return limit > 0 && ref_max_remote > limit ? "ud" : "rc";
}

static void check_layout(const char *hosts, int *ref_node, int *ref_max_remote)
{
    /* reference: node of a rank = first rank with the same host name */
    int nnodes = 0, *count = calloc((size_t)mp_size, sizeof *count);
    for (int r = 0; r < mp_size; r++) {
        int k = 0;
        while (k < r && strcmp(hosts + k * HOST, hosts + r * HOST))
            k++;
        ref_node[r] = k == r ? nnodes++ : ref_node[k];
        count[ref_node[r]]++;
    }
    int smallest = mp_size;
    for (int n = 0; n < nnodes; n++)
        smallest = count[n] < smallest ? count[n] : smallest;
    *ref_max_remote = nnodes > 1 ? mp_size - smallest : 0;

    const boot_info_t *b = &ctx_lib.boot;
    if (b->nnodes != nnodes)
        FAIL("library sees %d nodes, host names say %d", b->nnodes, nnodes);
    for (int r = 0; r < mp_size; r++)
        if (b->node_of[r] != ref_node[r]) {
            FAIL("library puts rank %d on node %d, host names on node %d", r,
                 b->node_of[r], ref_node[r]);
            break;
        }
    if (b->node_id != ref_node[mp_rank] || b->local_size != count[ref_node[mp_rank]])
        FAIL("library: my node %d with %d ranks; reference: node %d with %d", b->node_id,
             b->local_size, ref_node[mp_rank], count[ref_node[mp_rank]]);
    if (boot_max_remote_peers(b) != *ref_max_remote)
        FAIL("library: most remote peers %d, reference %d", boot_max_remote_peers(b),
             *ref_max_remote);

    /* the same numbers on every rank */
    uint64_t d = boot_nodemap_digest(mp_size, b->node_of);
    int64_t mine[4] = {b->nnodes, boot_max_remote_peers(b), (int64_t)(d >> 32),
                       (int64_t)(d & 0xffffffffu)};
    int64_t lo[4], hi[4];
    OK(vc_allreduce(mine, lo, 4, VC_INT64, VC_MIN, VC_COMM_WORLD));
    OK(vc_allreduce(mine, hi, 4, VC_INT64, VC_MAX, VC_COMM_WORLD));
    if (memcmp(lo, hi, sizeof lo))
        FAIL("ranks disagree: nodes %lld..%lld, most remote peers %lld..%lld, map digest "
             "differs: %s", (long long)lo[0], (long long)hi[0], (long long)lo[1],
             (long long)hi[1], lo[2] != hi[2] || lo[3] != hi[3] ? "yes" : "no");
    if (mp_rank == 0 || getenv("MP_NODES_VERBOSE")) {
        char text[256];
        boot_nodemap_describe(b, text, sizeof text);
        printf("mp_nodes: rank %d on %s: %s; most remote peers %lld on every rank "
               "(map from %s)\n", mp_rank, hosts + mp_rank * HOST, text,
               (long long)hi[1], b->map_source);
    }
    free(count);
}

static void check_transports(const int *ref_node, int ref_max_remote)
{
    int kinds[4] = {0};   /* self shm rc ud */
    static const char *const names[] = {"self", "shm", "rc", "ud"};
    for (int r = 0; r < mp_size; r++) {
        const net_t *n = ctx_lib.prog.net_of[r];
        const char *want = r == mp_rank ? "self"
                         : expected_net(ref_node[r] == ref_node[mp_rank], ref_max_remote);
        if (!n || strcmp(n->name, want))
            FAIL("rank %d is reached over %s, expected %s", r, n ? n->name : "nothing", want);
        for (int k = 0; n && k < 4; k++)
            kinds[k] += !strcmp(n->name, names[k]);
    }
    if (mp_rank == 0 || getenv("MP_NODES_VERBOSE"))
        printf("mp_nodes: rank %d reaches %d peer(s) over shm, %d over rc, %d over ud\n",
               mp_rank, kinds[1], kinds[2], kinds[3]);
}

static void traffic(void)
{
    size_t sizes[] = {24, 48 << 10};   /* eager, and rendezvous at the default limit */
    for (int s = 0; s < 2; s++) {
        size_t len = sizes[s];
        uint8_t *out = malloc(len * (size_t)mp_size), *in = malloc(len * (size_t)mp_size);
        vc_request_t *rq = malloc(2 * (size_t)mp_size * sizeof *rq);
        int n = 0;
        for (int p = 0; p < mp_size; p++) {
            mp_fill(out + p * len, mp_rank, p, len);
            memset(in + p * len, 0, len);
            OK(vc_irecv(in + p * len, len, VC_BYTE, p, 7, VC_COMM_WORLD, &rq[n++]));
            OK(vc_isend(out + p * len, len, VC_BYTE, p, 7, VC_COMM_WORLD, &rq[n++]));
        }
        OK(vc_waitall(n, rq, NULL));
        for (int p = 0; p < mp_size; p++)
            if (mp_verify(in + p * len, p, mp_rank, len))
                FAIL("%zu bytes from rank %d corrupted", len, p);
        free(out);
        free(in);
        free(rq);
    }
    int64_t v = mp_rank + 1, sum = 0;
    OK(vc_allreduce(&v, &sum, 1, VC_INT64, VC_SUM, VC_COMM_WORLD));
    if (sum != (int64_t)mp_size * (mp_size + 1) / 2)
        FAIL("allreduce sum %lld, expected %lld", (long long)sum,
             (long long)mp_size * (mp_size + 1) / 2);
    for (int root = 0; root < mp_size; root++) {
        int32_t b[300];
        for (int i = 0; i < 300; i++)
            b[i] = mp_rank == root ? root * 1000 + i : -1;
        OK(vc_bcast(b, 300, VC_INT32, root, VC_COMM_WORLD));
        for (int i = 0; i < 300; i++)
            if (b[i] != root * 1000 + i) {
                FAIL("bcast from %d: b[%d] = %d", root, i, b[i]);
                break;
            }
    }
    int32_t *all = malloc((size_t)mp_size * 2 * sizeof *all), me[2] = {mp_rank, -mp_rank};
    OK(vc_allgather(me, all, 2, VC_INT32, VC_COMM_WORLD));
    for (int r = 0; r < mp_size; r++)
        if (all[2 * r] != r || all[2 * r + 1] != -r)
            FAIL("allgather slot %d holds %d,%d", r, all[2 * r], all[2 * r + 1]);
    free(all);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    char me[HOST] = "";
    if (gethostname(me, sizeof me - 1))
        FAIL("gethostname failed");
    char *hosts = calloc((size_t)mp_size, HOST);
    int *ref_node = malloc((size_t)mp_size * sizeof *ref_node), ref_max_remote = 0;
    OK(vc_allgather(me, hosts, HOST, VC_BYTE, VC_COMM_WORLD));
    check_layout(hosts, ref_node, &ref_max_remote);
    check_transports(ref_node, ref_max_remote);
    traffic();
    free(hosts);
    free(ref_node);
    return mp_finish("mp_nodes");
}
