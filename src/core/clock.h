/*
 * clock.h -- time and the library's version, for every layer. The public
 * vc_wtime and vc_version_string wrap these; layers below the API call
 * these, not the public names (which would be a call upward).
 */
#ifndef VC_CORE_CLOCK_H
#define VC_CORE_CLOCK_H

/* seconds on a monotonic clock (CLOCK_MONOTONIC): for intervals only */
double core_wtime(void);
/* "0.2.0 (verbs rc ud shm)": what every rank of a job must agree on */
const char *core_version(void);

#endif
