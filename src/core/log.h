/* log.h -- rank-tagged logging to stderr, filtered by VCOLL_LOG. */
#ifndef VC_LOG_H
#define VC_LOG_H

#include "config.h"

/* the rank, size and VCOLL_LOG level of this process (the lifecycle) */
void log_setup(int rank, int size, int level);
int log_level(void);
void core_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define LOG_ERR(...)   core_log(CFG_LOG_ERROR, __VA_ARGS__)
#define LOG_WARN(...)  core_log(CFG_LOG_WARN, __VA_ARGS__)
#define LOG_INFO(...)  core_log(CFG_LOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) core_log(CFG_LOG_DEBUG, __VA_ARGS__)

#endif
