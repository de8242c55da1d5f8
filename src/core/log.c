/* log.c -- one line per message, prefixed with the rank so interleaved
 * output from many processes stays readable. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "log.h"
#include "ctx.h"

static const char *const level_name[] = {"error", "warning", "info", "debug"};

void vc_log(int level, const char *fmt, ...)
{
    /* before vc_init the level is unknown: errors and warnings still show */
    int max = vc_ctx.initialized || vc_ctx.cfg.log_level ? vc_ctx.cfg.log_level : CFG_LOG_WARN;
    if (level > max)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "vcoll[rank %d/%d pid %d] %s: ",
                     vc_ctx.rank, vc_ctx.size, (int)getpid(), level_name[level]);
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
