/* clock.c -- time and the version string (clock.h). */
#include <time.h>
#include "clock.h"

double core_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *core_version(void)
{
    return "0.3.0 (verbs rc ud shm)";
}
