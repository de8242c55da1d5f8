/*
 * boot.h -- job bootstrap (PMIx). Who am I, how big is the job, who shares my
 * node, and a key/value exchange that the transports use for their endpoint
 * blobs (shm segment names, QP numbers, GIDs, rkeys).
 */
#ifndef VC_BOOT_H
#define VC_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "vcoll.h"

/* A setting every rank must share (agree.c). name and names (value ->
 * name table for enums, or NULL for numbers) are static strings; show,
 * when set, writes a value as users know it (a packed one, say). */
#define BOOT_AGREE_MAX 16
typedef struct boot_setting {
    const char *name;
    int64_t value;
    const char *const *names;
    void (*show)(int64_t value, char *buf, size_t len);
} boot_setting_t;

/* nodes.c: the key/value list a bootstrap keeps for itself (a singleton's
 * store, the values a caller-supplied exchange has not sent yet) */
typedef struct boot_kv { char *key; void *val; size_t len; struct boot_kv *next; } boot_kv_t;
int boot_kv_push(boot_kv_t **head, const char *key, const void *data, size_t len);
void boot_kv_free(boot_kv_t **head);

/* exchange.c: a caller-supplied allgather (vc_bootstrap_exchange), armed
 * before vc_init and used until boot_finalize */
typedef struct boot_exch {
    int armed, rank, size;
    vc_allgather_fn *fn;
    void *arg;
    boot_kv_t *mine;          /* my puts, until a collecting fence */
    unsigned char *all;       /* size blobs of stride bytes, after a fence */
    size_t stride;
} boot_exch_t;

/* The bootstrap's own state. It is part of boot_info_t, which is part of
 * the context struct, so the library keeps no state anywhere else; PMIx's
 * types stay out of this header (pmix.c owns their meaning). */
typedef struct boot_state {
    char nspace[256];         /* my PMIx process id: namespace and rank */
    uint32_t prank;
    int pmix_up;              /* PMIx_Init succeeded with a server */
    boot_kv_t *local;         /* a singleton's key/value store */
    volatile int fence_state; /* boot_fence_begin: 0 pending, 1 done, <0 error */
    void *fence_info;         /* pmix_info_t: must outlive PMIx_Fence_nb */
    size_t put_bytes;         /* endpoint data this rank published */
    boot_exch_t x;
} boot_state_t;

typedef struct boot_info {
    int rank, size;
    int local_rank, local_size;
    /* The job-wide node map: the same on every rank (nodes.c numbers nodes
     * by their lowest rank), so choices made from it agree job-wide. */
    int node_id;            /* my node, 0..nnodes-1 */
    int nnodes;
    int *local_peers;       /* world ranks on my node, sorted, local_size entries */
    int *node_of;           /* node id of every world rank (size entries) */
    char node_name[64];     /* my node's name as the launcher gave it */
    const char *map_source; /* where the node map came from (for the info log) */
    char jobid[256];        /* PMIx nspace: unique per job */
    int singleton;          /* no launcher: a 1-rank job */
    const char *launcher;   /* "mpirun", "srun", "singleton", "pmix" */
    boot_setting_t agree[BOOT_AGREE_MAX];
    int nagree;
    boot_state_t st;
} boot_info_t;

int boot_init(boot_info_t *info);
/* publish my value for key (visible to everyone after boot_fence(1)) */
int boot_put(boot_info_t *b, const char *key, const void *data, size_t len);
/* key + value bytes this rank has boot_put() so far (what it costs the
   job's key-value store: the scaling benchmark reports it) */
size_t boot_put_bytes(const boot_info_t *b);
/* collect_data: 1 = make put values available; 0 = just a barrier */
int boot_fence(boot_info_t *b, int collect_data);
/* the same barrier (no data) waited on by polling, so the caller can keep
   progressing and watching peers meanwhile: boot_fence_poll() is 0 while
   pending, 1 when done, a VC_ERR_* when it failed */
int boot_fence_begin(boot_info_t *b);
int boot_fence_poll(boot_info_t *b);
/* fetch rank's value for key into buf (*len in: capacity, out: actual) */
int boot_get(boot_info_t *b, int rank, const char *key, void *buf, size_t *len);
/* end the whole job (PMIx_Abort); never returns */
void boot_abort(boot_info_t *b, int code, const char *msg);
int boot_finalize(boot_info_t *b);
void boot_info_free(boot_info_t *info);
/* nodes.c (pure). Remote peers of the rank that has the most of them (the
 * job size minus the smallest node's ranks); the same number on every rank. */
int boot_max_remote_peers(const boot_info_t *info);
/* Renumber node_of[] so nodes are 0.. in the order of their lowest rank;
 * every entry must be in 0..size-1. *nnodes = nodes that hold a rank. */
int boot_nodemap_canon(int size, int *node_of, int *nnodes, char *err, size_t errlen);
/* From one rank list per node (nlists lists, npeers[i] entries each). Every
 * rank must be on exactly one list; otherwise VC_ERR_BOOTSTRAP + err. */
int boot_nodemap_from_peers(int size, int nlists, const int *const *peers,
                            const int *npeers, int *node_of, int *nnodes,
                            char *err, size_t errlen);
/* From one record per rank, fetched on demand: the rank's node leader (the
 * node's lowest rank) and, for a leader only, its node's ranks (*ranks is
 * the fetcher's, valid until its next fetch). Ranks are walked in order
 * and an unplaced rank places its whole node with one fetch (a leader) or
 * two (any other rank, then its leader): at most 2 fetches per node,
 * whatever the job size. *nfetch (may be NULL) gets the count. Records that contradict each
 * other give VC_ERR_BOOTSTRAP + err. */
typedef int boot_node_fetch_fn(void *arg, int rank, int *leader, const int **ranks,
                               int *nranks);
int boot_nodemap_walk(int size, boot_node_fetch_fn *fetch, void *arg, int *node_of,
                      int *nnodes, int *nfetch, char *err, size_t errlen);
/* From each rank's host name: equal names share a node. */
int boot_nodemap_from_hosts(int size, const char *const *host_of, int *node_of,
                            int *nnodes, char *err, size_t errlen);
/* count[n] = ranks on node n (count has nnodes entries) */
int boot_node_sizes(int size, int nnodes, const int *node_of, int *count);
uint64_t boot_nodemap_digest(int size, const int *node_of);
/* "6 ranks on 3 nodes, ranks per node 1,2,3; this rank on node 1 (nodeB) with 2 ranks" */
int boot_nodemap_describe(const boot_info_t *info, char *buf, size_t len);

/* agree.c: job-wide settings. Add them, publish before the fence, then check
 * against a peer (rank 0 after the fence; a peer whose endpoint is missing):
 * VC_SUCCESS, VC_ERR_ARG with msg naming the setting and both ranks, or
 * VC_ERR_BOOTSTRAP when the peer published none. */
int boot_agree_add(boot_info_t *info, const char *name, int64_t value,
                   const char *const *names);
/* the same with a function that shows a value (boot_setting_t) */
int boot_agree_add_shown(boot_info_t *info, const char *name, int64_t value,
                         void (*show)(int64_t value, char *buf, size_t len));
int boot_agree_publish(boot_info_t *info);
int boot_agree_check(boot_info_t *info, int peer, char *msg, size_t len);
/* pure: 1 (and msg) when theirs[] differs from mine[] (n entries each) */
int boot_agree_diff(const boot_setting_t *mine, int n, int me, const int64_t *theirs,
                    int them, char *msg, size_t len);
uint32_t boot_agree_names_hash(const boot_setting_t *s, int n);

/* exchange.c: the backend behind vc_bootstrap_exchange. While armed (from
 * vc_bootstrap_exchange to boot_finalize) every boot_* call above goes to
 * its boot_exch_* twin, which moves data only through the caller's
 * allgather. */
int boot_exch_armed(const boot_info_t *b);
/* vc_bootstrap_exchange (lifecycle) arms it */
void boot_exch_arm(boot_info_t *b, int rank, int size, vc_allgather_fn *fn, void *arg);
int boot_exch_init(boot_info_t *info);
int boot_exch_put(boot_info_t *b, const char *key, const void *data, size_t len);
int boot_exch_fence(boot_info_t *b, int collect_data);
int boot_exch_get(boot_info_t *b, int rank, const char *key, void *buf, size_t *len);
void boot_exch_abort(boot_info_t *b, int code, const char *msg);
int boot_exch_finalize(boot_info_t *b);

/* Pure helper, unit tested: decide from environment what the launcher was
 * when PMIx is unreachable. Returns the number of processes a non-PMIx
 * launcher claims (> 1 means: refuse to run as N singletons), with *who set
 * to the launcher's name. */
int boot_foreign_launcher(const char *(*getenv_fn)(const char *), const char **who);

#endif
