/* log.c -- one line per message, prefixed with the rank so interleaved
 * output from many processes stays readable. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "log.h"

static const char *const level_name[] = {"error", "warning", "info", "debug"};

/* Who is speaking and what is shown: process-wide, like stderr itself.
   Before vc_init (and after a failed one) the rank is unknown and errors
   and warnings still show. */
static struct {
    int rank, size;
    int level;
} who = {-1, 0, CFG_LOG_WARN};

void log_setup(int rank, int size, int level)
{
    who.rank = rank;
    who.size = size;
    who.level = level;
}

int log_level(void)
{
    return who.level;
}

void core_log(int level, const char *fmt, ...)
{
    if (level > who.level)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "vcoll[rank %d/%d pid %d] %s: ",
                     who.rank, who.size, (int)getpid(), level_name[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line)
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line - 1)
        n = sizeof line - 2;
    line[n++] = '\n';
    /* one write() so lines from different ranks do not interleave mid-line */
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}
