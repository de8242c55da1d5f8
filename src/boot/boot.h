/*
 * boot.h -- job bootstrap (PMIx). Who am I, how big is the job, who shares my
 * node, and a key/value exchange that the transports use for their endpoint
 * blobs (shm segment names, QP numbers, GIDs, rkeys).
 */
#ifndef VC_BOOT_H
#define VC_BOOT_H

#include <stddef.h>
#include <stdint.h>

typedef struct boot_info {
    int rank, size;
    int local_rank, local_size;
    int node_id;            /* 0..nnodes-1 */
    int nnodes;
    int *local_peers;       /* world ranks on my node, sorted, local_size entries */
    int *node_of;           /* node id for each world rank (size entries) */
    char jobid[256];        /* PMIx nspace: unique per job */
    int singleton;          /* no launcher: a 1-rank job */
    const char *launcher;   /* "mpirun", "srun", "singleton", "pmix" */
} boot_info_t;

int boot_init(boot_info_t *info);
/* publish my value for key (visible to everyone after boot_fence(1)) */
int boot_put(const char *key, const void *data, size_t len);
/* collect_data: 1 = make put values available; 0 = just a barrier */
int boot_fence(int collect_data);
/* fetch rank's value for key into buf (*len in: capacity, out: actual) */
int boot_get(int rank, const char *key, void *buf, size_t *len);
/* end the whole job (PMIx_Abort); never returns */
void boot_abort(int code, const char *msg);
int boot_finalize(void);
void boot_info_free(boot_info_t *info);
/* nodes.c: remote peers of the rank that has the most of them (the job size
 * minus the smallest node's ranks); the same number on every rank */
int boot_max_remote_peers(const boot_info_t *info);

/* exchange.c: the backend behind vc_bootstrap_exchange. While armed (from
 * vc_bootstrap_exchange to boot_finalize) every boot_* call above goes to
 * its boot_exch_* twin, which moves data only through the caller's
 * allgather. */
int boot_exch_armed(void);
int boot_exch_init(boot_info_t *info);
int boot_exch_put(const char *key, const void *data, size_t len);
int boot_exch_fence(int collect_data);
int boot_exch_get(int rank, const char *key, void *buf, size_t *len);
void boot_exch_abort(int code, const char *msg);
int boot_exch_finalize(void);

/* Pure helper, unit tested: decide from environment what the launcher was
 * when PMIx is unreachable. Returns the number of processes a non-PMIx
 * launcher claims (> 1 means: refuse to run as N singletons), with *who set
 * to the launcher's name. */
int boot_foreign_launcher(const char *(*getenv_fn)(const char *), const char **who);

#endif
