/*
 * tune_pick.h -- vcoll_tune's choice at one size, apart from the timing so
 * a unit test can hold it to its rules (test/unit/test_rules.c).
 */
#ifndef VC_TUNE_PICK_H
#define VC_TUNE_PICK_H

/* one candidate's rounds at one size: fastest, median and slowest (us) */
typedef struct {
    int runs;           /* 0: it cannot serve the call, not measured */
    double lo, med, hi;
} tune_cand_t;

/* The winner among c[0..n-1]: the fastest median, unless the table in
   force's choice (tab) is within keep of it or the fastest did not beat
   it in every round; else the smaller size's winner (prev) if within 3 %;
   -1 for none. */
int tune_pick(const tune_cand_t *c, int n, int tab, int prev, double keep);

#endif
