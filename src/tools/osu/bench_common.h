/*
 * bench_common.h -- what all OSU-style benchmarks share: options, default
 * iteration counts, buffers, the table header, error handling and the
 * per-rank statistics of the collective benchmarks.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include "bench_backend.h"

/* Which iteration defaults and column layout a benchmark uses. */
enum bench_kind {
    BENCH_LATENCY,  /* ping-pong, 2 ranks */
    BENCH_BW,       /* windowed bandwidth, 2 ranks */
    BENCH_COLL,     /* collective timed on every rank */
    BENCH_BARRIER   /* collective without a message size */
};

#define BENCH_WINDOW 64          /* messages in flight for bw / bibw */
#define BENCH_LARGE 8192         /* above this, fewer iterations (as OSU) */
#define BENCH_HUGE (1u << 20)    /* from 1 MiB on, fewer again */
#define BENCH_EXIT_UNSUPPORTED 3 /* the library does not implement the call */

/* -t values: thread levels in MPI's order (single .. multiple) */
enum { BENCH_THREAD_SINGLE, BENCH_THREAD_FUNNELED, BENCH_THREAD_SERIALIZED,
       BENCH_THREAD_MULTIPLE };

/* -T values, as OSU 7.x spells them (case does not matter). */
enum { BENCH_DT_CHAR, BENCH_DT_INT, BENCH_DT_FLOAT };

typedef struct {
    const char *name;   /* "osu_latency": names the test in the header */
    const char *title;  /* "Latency Test" */
    enum bench_kind kind;
    size_t min_size, max_size;
    size_t size_floor;  /* smallest meaningful size (4 for float reductions) */
    long iters, skip;   /* from -i / -x, or -1 for the size-dependent defaults */
    int full;           /* -f: min/max/iterations columns */
    int reduces;        /* a reduction: takes -T, sizes are whole elements */
    int dtype;          /* BENCH_DT_*: from -T, MPI_CHAR unless told (as OSU 7) */
    int thread_level;   /* -t: BENCH_THREAD_* asked at init, -1 = plain init */
    int thread_granted; /* what the library granted (-1 after a plain init) */
    int rank, nranks;
} bench_t;

/* Parses options (exits on -h or a bad option, before any communication),
 * initialises the library and fills rank/nranks. p2p kinds insist on 2 ranks. */
void bench_start(bench_t *b, int *argc, char ***argv);

/* Checks a bk_* return code. On BK_UNSUPPORTED: says so on stderr (rank 0),
 * finalizes and exits BENCH_EXIT_UNSUPPORTED; any other error: message and
 * abort of the whole job. */
void bench_check(const bench_t *b, int rc, const char *call);

/* Iterations and warm-up rounds for one message size. */
void bench_iters(const bench_t *b, size_t size, long *iters, long *skip);

/* Sizes to run: size = bench_first_size(b); size <= max; size = bench_next_size(size) */
size_t bench_first_size(const bench_t *b);
size_t bench_next_size(size_t size);

/* The datatype of -T and its size in bytes. */
bk_dtype_t bench_dtype(const bench_t *b);
size_t bench_dtype_size(const bench_t *b);
/* Fills count elements of the -T datatype with ones (reduction input). */
void bench_fill_ones(const bench_t *b, void *buf, size_t count);

/* Page-aligned, touched buffer (so page faults are not timed); exits on ENOMEM. */
void *bench_alloc(size_t bytes);

/* Rank 0 prints the header: library, test and transport, then the column names. */
void bench_header(const bench_t *b);

/* Rank 0 prints one row of a p2p table. */
void bench_row(const bench_t *b, size_t size, double value);

/* Collective kinds: every rank passes its own average time per call (us);
 * rank 0 prints the mean over ranks (and min / max with -f). */
void bench_coll_report(const bench_t *b, size_t size, double my_avg_us, long iters);

/* 0-byte exchange between ranks 0 and 1: lines the pair up between sizes
 * without relying on a barrier implementation. */
void bench_pair_sync(const bench_t *b);

/* One collective call of `size` bytes; returns a bk_* code. */
typedef int (*bench_coll_fn)(void *arg, size_t size);

/* The collective driver: one probing call (an unimplemented collective stops
 * here, before any header), then per size a barrier, warm-up + timed calls
 * each followed by an untimed barrier, and bench_coll_report. */
void bench_coll_loop(const bench_t *b, const char *call, bench_coll_fn fn, void *arg);

/* Finalizes; returns the process exit status. */
int bench_finish(const bench_t *b);

#endif
