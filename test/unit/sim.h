/*
 * sim.h -- the in-process schedule simulator shared by the collective unit
 * tests: every rank's schedule runs under the strict (rendezvous) model of
 * src/coll/sched.h, with bounds, overlap, size and deadlock checks.
 */
#ifndef VC_TEST_SIM_H
#define VC_TEST_SIM_H

#include <stdint.h>
#include "coll/sched.h"

#define MAXP 64

typedef struct { int rank, step; } sim_ent_t;
typedef struct { sim_ent_t *e; int head, n, cap; } sim_q_t;

typedef struct {
    coll_sched_t s;
    unsigned char *buf[COLL_NBUF];
    size_t len[COLL_NBUF];
    int round, posted, pending, finished;
    uint64_t know, know_next;   /* ranks I have (transitively) heard from */
} sim_rank_t;

typedef struct {
    int p;
    sim_rank_t r[MAXP];
    sim_q_t sendq[MAXP][MAXP];   /* [src][dst] unmatched sends */
    sim_q_t recvq[MAXP][MAXP];   /* [dst][src] unmatched receives */
    int err;
} sim_t;

/* the first failure's text */
extern char failmsg[512];

int sim_fail(sim_t *S, const char *fmt, int a, int b);
/* Run all ranks to completion (S->p ranks, each with s, buf[], len[] set;
   know = 1 << rank). Returns 0 on success, else failmsg says why. */
int sim_run(sim_t *S);
/* frees schedules and queues, hands back every sim_buf; zeroes S */
void sim_free(sim_t *S);

/* A case's buffers (ranks' buf[], inputs, references): len bytes, 64-byte
   aligned, valid until the next sim_free or sim_buf_reset. They come from
   one arena reused case after case, so its pages are faulted in once per
   test program, not once per case; under ASan the gaps between them and
   everything handed back are poisoned, so an overrun still reports. */
void *sim_buf(size_t len);
void *sim_buf_zero(size_t len);   /* sim_buf, zeroed */
void sim_buf_reset(void);

/* The tail every simulating test program shares: print how many cases
   ran and failed (a CUnit test body: fails on no cases or any failure),
   and run the registered suites verbosely (returns main's exit status). */
void sim_summary(int ncases, int nfail);
int sim_cunit_main(void);

#endif
