/*
 * select.c -- which algorithm "auto" means, by communicator size and message
 * bytes (allgather: bytes per rank). VCOLL_<COLL>_ALG overrides.
 *
 * Measured on the dev box (2 cores, shm, best of 5 x N iterations of
 * back-to-back calls, max over ranks; the box was shared and loaded, so
 * only large ratios were trusted). Times in us:
 *
 *   allreduce np=2   8B    2K    32K   128K  512K   1M
 *     rec.doubling   0.36  4.2   4.5   11    43     124-151
 *     rabenseifner   0.66  8.0   8.1   21    60
 *     ring           0.64  2.8   8.0   20    60
 *   allreduce np=3 512K: rabenseifner 176, ring 197, rec.doubling 399
 *              np=3 2M: rabenseifner 1594, ring 2272, rec.doubling 4370
 *   allreduce np=4 128K: rabenseifner 85, rec.doubling 166, ring 202
 *   bcast np=3/4: binomial beat scatter_allgather at every size up to 2M
 *     (np=4 512K: 87 vs 1806) -- few ranks, and oversubscribed ranks pay
 *     per round, so the ring's p-1 rounds cost more than they save.
 *   reduce np=3/4: binomial beat rsag at every size up to 2M
 *     (np=4 512K: 165 vs 242).
 *   reduce np=2 (OSU metric: mean over ranks / root's time, 3 runs):
 *     512K binomial 38-45 / 49-57,   rsag 50-54 / 50-54
 *     1M   binomial 130-153 / 178-205, rsag 116-134 / 116-134
 *     2M   binomial 295-335 / 405-449, rsag 301-347 / 301-347
 *     (binomial: the root copies and reduces the whole message alone; rsag
 *     halves both across the two ranks, then gathers)
 *   allgather np=3/4: ring ~= recursive doubling (Bruck) for small blocks,
 *     ring clearly faster from 32K per rank (np=3 128K: 58 vs 312).
 *
 *   oversubscribed (np > 2 cores), barrier / allreduce 8B..8K, us:
 *     np=8  dissemination 60-185 vs linear 24-42;
 *           rec.doubling 48-234 vs linear 30-112 (8B), 94 vs 57 (8K)
 *     np=6  dissemination 21 vs linear 27; rec.doubling 21-54 vs linear 13-38
 *     np=3/4 about even, so linear starts at 5 ranks.
 *
 *   gather (vcoll_osu_gather, 1000 iterations, us; np=4 is oversubscribed
 *   and the box was busy with other builds, so runs differed by 10x):
 *     np=3  8B: binomial 2.7, linear 3.2;  4K: 9.8 vs 11.2;  64K: 77 vs 78
 *     np=4  64K..1M: linear 99-2481 vs binomial 658-5111 (forwarding
 *           through inner ranks doubles the bytes moved at that size)
 *   Small sizes did not separate the two beyond noise, so the choice
 *   follows the cost model: binomial's log2(p) rounds win while the root's
 *   whole buffer is small (latency-bound); above, every block crossing
 *   one link once (linear) wins. np=2 is one message either way. scatter
 *   mirrors gather; gatherv/scatterv have one algorithm (only the root
 *   knows the counts). allgatherv uses allgather's limits on the total.
 *
 * Beyond 8 ranks nothing could be measured here; those rows follow the
 * usual MPICH-style crossovers (marked "unmeasured").
 *
 *   alltoall (osu_alltoall, size per pair, min of 3 runs, box loaded to
 *   ~17 on 2 cores, so only big ratios count):
 *                 64B   1K    4K    8K    64K   1M
 *     np=2 bruck  0.32  0.49  1.58  2.69  318   7924
 *          pairw  0.25  0.37  1.31  1.24  13    3229
 *     np=4 bruck  28    28    57    240   1276  36406
 *          pairw  42    57    109   127   611   15530
 *   (Open MPI np=2/4: 0.21/442, 0.43/101, 2.5/232, 3.1/133, 8.9/377,
 *   5619/17173.) At np=2 Bruck is pairwise's one exchange plus copies; at
 *   np=4 oversubscribed its 2 rounds beat 3 up to 4K per pair; its bytes
 *   grow as p/2*log2(p) per block, so the limit is on the total per rank.
 *
 * Non-commutative (user) ops must be combined in rank order, x0 op x1 op
 * ... op x(p-1) under any association. Rank-ordered algorithms:
 *   reduce binomial (its tree is rooted at rank 0 for such ops, then the
 *   result goes to the root); allreduce recursive_doubling and linear;
 *   reduce_scatter(_block) pairwise; scan and exscan recursive_doubling;
 *   reduce and allreduce hier (they build those flat ones for such ops).
 * Not rank-ordered: reduce rsag, allreduce rabenseifner (both halve at
 * distance p/2 first, pairing x0 with x(p/2)), allreduce ring (block b's
 * chain starts at rank b), reduce_scatter recursive_halving and ring.
 * With noncomm set only the former are chosen, and api.c replaces a forced
 * algorithm that is not rank-ordered by the auto choice.
 *
 * Two-level "hier" (coll_select_hier), by nodes N, ranks per node k
 * (p = N k), message n bytes. What decides is the bytes a node's network
 * link carries and the bytes each rank copies on its node:
 *   bcast, reduce: a flat binomial tree over p ranks puts n on a node's
 *     link only when ranks are placed in blocks and k is a power of two
 *     (its top log2 N levels are then exactly the node crossings); under
 *     round-robin placement (--map-by node) nearly every edge crosses, up
 *     to k n per link. hier: n per link, log2 N network hops, local copies
 *     n per rank (the same as flat).
 *   allreduce: flat recursive doubling puts k n log2 N (blocked) to
 *     k n log2 p (round-robin) on a link, Rabenseifner about 2 k n; hier
 *     puts 2 n (leaders' Rabenseifner) or n log2 N (small n) on it and
 *     copies 2 n per rank on the node (reduce in, broadcast out).
 *   barrier: N instead of p ranks in the network rounds.
 *   allgather (b per rank): the flat ring copies (p-1) b per rank; blocked,
 *     each link carries (p-1) b, round-robin k (p-1) b. hier carries
 *     (N-1) k b per link but copies p b more per rank (the node broadcast of
 *     the whole result), and pads uneven nodes to max k. So it wins when
 *     placement is not in blocks or while latency dominates (N rounds of
 *     the leaders' ring instead of p); for big totals on blocked nodes the
 *     ring is as good on the link and copies less.
 *   One node (N = 1) or one rank per node (k = 1): hier is the flat
 *   algorithm plus bookkeeping, so it is never chosen there. Non-commutative
 *   user ops stay flat (a node-first order is not rank order).
 */
#include "sched.h"
#include "layout.h"

/* allreduce: recursive doubling while latency dominates (and always at
   np=2, where it is one exchange); Rabenseifner above; ring only for big
   vectors on many non-power-of-two ranks (unmeasured) where Rabenseifner's
   fold adds a full-vector transfer. */
#define ALLREDUCE_RD_MAX        8192u
#define ALLREDUCE_RING_MIN      (1u << 20)
#define ALLREDUCE_RING_MIN_RANKS 9
/* oversubscribed nodes (more ranks than cores): every round of a log-depth
   algorithm waits for the scheduler to run the right peer, so the linear
   (gather at rank 0, release) forms win for small p */
#define LINEAR_MIN_RANKS        5
#define LINEAR_MAX_RANKS        16
#define ALLREDUCE_LINEAR_MAX    8192u
/* bcast: binomial unless many ranks and a big message (unmeasured) */
#define BCAST_SAG_MIN_RANKS     16
#define BCAST_SAG_MIN_BYTES     (128u * 1024u)
/* reduce: binomial unless many ranks and a big message (unmeasured), or
 * two ranks and a message past the caches (measured) */
#define REDUCE_RSAG_MIN_RANKS   16
#define REDUCE_RSAG_MIN_BYTES   (64u * 1024u)
#define REDUCE_RSAG_NP2_BYTES   (1u << 20)
/* allgather: recursive doubling / Bruck while blocks are small */
#define ALLGATHER_RD_MAX_BLOCK  (16u * 1024u)
#define ALLGATHER_RD_MAX_TOTAL  (256u * 1024u)
/* gather / scatter (bytes per rank): binomial while the root's whole
   buffer is small, linear above (see the gather notes in the header) */
#define GATHER_BINOMIAL_MAX_TOTAL (32u * 1024u)
/* alltoall (bytes per pair): Bruck's log2(p) rounds while what a rank
   sends in all is small and there are enough ranks for the rounds saved
   to pay for the copies (np=3: 2 rounds either way) */
#define ALLTOALL_BRUCK_MIN_RANKS 4
#define ALLTOALL_BRUCK_MAX_TOTAL (16u * 1024u)
/* reduce_scatter (bytes = a rank's block, reduce_scatter: the average):
   recursive halving for small vectors, then pairwise, ring for many
   ranks (unmeasured) */
#define RS_HALVING_MAX_TOTAL    (64u * 1024u)
#define RS_RING_MIN_RANKS       16

int coll_rank_ordered(int kind, int alg)
{
    switch (kind) {
    /* hier builds flat binomial / recursive doubling for such ops */
    /* shm: its segment reductions are rank-ordered, its two-level form is
       used for such ops only on blocked layouts (shm_node.c) */
    case COLL_REDUCE: return alg == 1 || alg >= 3;      /* binomial, hier, shm */
    case COLL_ALLREDUCE: return alg == 1 || alg >= 4;   /* rd, linear, hier, shm */
    case COLL_REDUCE_SCATTER_BLOCK:
    case COLL_REDUCE_SCATTER: return alg == 2;          /* pairwise */
    }
    return 1;
}

int coll_select(int kind, int size, size_t bytes, size_t count, int oversub,
                int noncomm)
{
    int pof2 = coll_pof2_floor(size);

    switch (kind) {
    case COLL_BARRIER:
        if (oversub && size >= LINEAR_MIN_RANKS && size <= LINEAR_MAX_RANKS)
            return 2;                    /* linear */
        return 1;                        /* dissemination */
    case COLL_BCAST:
        if (size >= BCAST_SAG_MIN_RANKS && bytes >= BCAST_SAG_MIN_BYTES)
            return 2;                    /* scatter_allgather */
        return 1;                        /* binomial */
    case COLL_REDUCE:
        if (noncomm)
            return 1;                    /* binomial */
        if (size >= REDUCE_RSAG_MIN_RANKS && bytes >= REDUCE_RSAG_MIN_BYTES &&
            count >= (size_t)pof2)
            return 2;                    /* rsag */
        if (size == 2 && bytes >= REDUCE_RSAG_NP2_BYTES && count >= 2)
            return 2;                    /* rsag */
        return 1;                        /* binomial */
    case COLL_ALLREDUCE:
        if (oversub && size >= LINEAR_MIN_RANKS && size <= LINEAR_MAX_RANKS &&
            bytes <= ALLREDUCE_LINEAR_MAX)
            return 4;                    /* linear */
        if (noncomm || size <= 2 || bytes <= ALLREDUCE_RD_MAX || count < (size_t)pof2)
            return 1;                    /* recursive_doubling */
        if (bytes >= ALLREDUCE_RING_MIN && size >= ALLREDUCE_RING_MIN_RANKS &&
            size != pof2)
            return 3;                    /* ring */
        return 2;                        /* rabenseifner */
    case COLL_ALLGATHER:
        if (bytes <= ALLGATHER_RD_MAX_BLOCK &&
            bytes * (size_t)size <= ALLGATHER_RD_MAX_TOTAL)
            return 2;                    /* recursive_doubling (Bruck) */
        return 1;                        /* ring */
    case COLL_GATHER:
    case COLL_SCATTER:
        if (size > 2 && bytes * (size_t)size <= GATHER_BINOMIAL_MAX_TOTAL)
            return 1;                    /* binomial */
        return 2;                        /* linear */
    case COLL_ALLGATHERV:                /* bytes: the total over all ranks */
        if (bytes <= ALLGATHER_RD_MAX_TOTAL && bytes / (size_t)size <= ALLGATHER_RD_MAX_BLOCK)
            return 2;                    /* recursive_doubling (Bruck) */
        return 1;                        /* ring */
    case COLL_ALLTOALL:
        if (size >= ALLTOALL_BRUCK_MIN_RANKS && bytes <= ALLTOALL_BRUCK_MAX_TOTAL / (size_t)size)
            return 1;                    /* bruck */
        return 2;                        /* pairwise */
    case COLL_REDUCE_SCATTER_BLOCK:
    case COLL_REDUCE_SCATTER:
        if (noncomm)
            return 2;                    /* pairwise */
        if (bytes * (size_t)size <= RS_HALVING_MAX_TOTAL)
            return 1;                    /* recursive_halving */
        if (size >= RS_RING_MIN_RANKS)
            return 3;                    /* ring */
        return 2;                        /* pairwise */
    }
    return 1;   /* alltoallv, scan, exscan: one algorithm each */
}

/* "shm" (shm_node.c), by ranks per node k and bytes n. Bcast and
 * allgather through a segment, measured (vcoll_osu_*, 2-core box under load 10-20, so only large
 * ratios count; us, segment vs messages):
 *   bcast np=2: 1 KiB 0.17 vs 1.2, 8 KiB 5.7 vs 9.3, 64 KiB 36 vs 61,
 *     128 KiB 127 vs 74, 1 MiB 1240 vs 645: past 64 KiB one CMA copy from
 *     the root beats copy-in plus copy-out on two ranks.
 *   bcast np=8 (4x oversubscribed): 2-16 KiB 9-14 vs 50-70, 512 KiB 426
 *     vs 1025, 1 MiB about even.
 *   allgather np=2: 8 B 0.16 vs 3.3, 32 KiB 12 vs 28, 128 KiB 114 vs 96,
 *     512 KiB 1258 vs 366 (same reason as bcast).
 *   allgather np=8: up to 32 KiB per rank 65-300 vs 240-1700; from 256
 *     KiB per rank every slot handoff waits for the scheduler to run all
 *     7 readers, and it falls behind.
 * With a core per rank the readers drain in parallel, so the caps on
 * larger communicators apply only when the node is oversubscribed. */
#define SEG_NP2_MAX        (64u << 10)
#define SEG_OVERSUB_TOTAL  (2u << 20)
/*
 * Reduce and allreduce through a segment (shm_reduce.c), medians of 3,
 * vcoll_osu_*, float, us, box loaded to 10-22 on its 2 cores (so only
 * ratios of 2 or more count):
 *   allreduce np=2  8B..4K shm 10-43 vs recursive doubling 0.4-23;
 *     32K-256K 316-1676 vs 133-823; 512K 1699 vs 2067; 1M 3354 vs 4429.
 *   reduce np=2: shm behind binomial at every size (1M 3806 vs 2535).
 *     At np=2 messages need one exchange (allreduce) or one send
 *     (reduce); the segment needs two waits on the other rank per window,
 *     each a scheduler turn when the cores are shared.
 *   allreduce np=8 (4x oversubscribed): 8-64B shm 50-67 vs linear 12-16;
 *     128B-4K 20-25 vs linear 13-26, rec.doubling 37-92; 16K 99 vs
 *     rabenseifner 93, linear 51; 128K 222 vs 370 / 240; 256K 306 vs 642
 *     / 466; 512K 1075 vs 1293 / 977; 1M 3726 vs 2557 / 2183.
 *   reduce np=8: up to 4K shm 9-10 vs binomial 3-5; 8K 12.5 vs 24;
 *     64K 23 vs 58; 1M 371 vs 1014 (the root no longer receives and
 *     reduces log2 p full vectors alone).
 * With a core per rank (unmeasurable here) the waits cost no scheduler
 * turn, and the cost model of doc/collectives.md decides: k ranks copy
 * 2n and reduce n each, in 2 all-member waits per window, against
 * log2 k rounds of n (recursive doubling, binomial reduce at the root)
 * or 2 log2 k rounds moving 2n (Rabenseifner) -- so from 3 ranks up.
 */
#define SHM_RED_NP2_MIN        (512u << 10)
#define SHM_RED_OVERSUB_MIN    (4u << 10)
#define SHM_ALLRED_OVERSUB_MAX (512u << 10)

int coll_select_shm(int kind, const struct coll_layout *L, size_t bytes, int oversub)
{
    int k = L->max_ppn;
    if (k < 2)
        return 0;               /* no two members share a node */
    if (kind == COLL_BARRIER)
        return 1;
    if (!bytes)
        return 0;
    switch (kind) {
    case COLL_ALLGATHER:
        bytes *= (size_t)k;
        /* fall through */
    case COLL_BCAST:
        if (k == 2)
            return bytes <= SEG_NP2_MAX;
        return !oversub || bytes <= SEG_OVERSUB_TOTAL;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
        if (k == 2)     /* one exchange (or send) by messages */
            return kind == COLL_ALLREDUCE && bytes >= SHM_RED_NP2_MIN;
        if (!oversub)   /* a core per rank: 2 waits per window, no rounds */
            return 1;
        return bytes > SHM_RED_OVERSUB_MIN &&
               (kind == COLL_REDUCE || bytes <= SHM_ALLRED_OVERSUB_MAX);
    }
    return 0;
}


/* allgather: the flat ring instead of hier from this total on blocked nodes */
#define ALLGATHER_HIER_MAX_TOTAL (1u << 20)

int coll_select_hier(int kind, const struct coll_layout *L, size_t bytes, int noncomm)
{
    if (!L || L->nnodes < 2 || L->max_ppn < 2)
        return 0;
    switch (kind) {
    case COLL_BARRIER:
    case COLL_BCAST:
        return 1;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
        return !noncomm;
    case COLL_ALLGATHER:
        return !L->blocked || bytes * (size_t)L->size < ALLGATHER_HIER_MAX_TOTAL;
    }
    return 0;
}
