/* log.h -- rank-tagged logging to stderr, filtered by VCOLL_LOG. */
#ifndef VC_LOG_H
#define VC_LOG_H

#include "config.h"

void vc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define LOG_ERR(...)   vc_log(CFG_LOG_ERROR, __VA_ARGS__)
#define LOG_WARN(...)  vc_log(CFG_LOG_WARN, __VA_ARGS__)
#define LOG_INFO(...)  vc_log(CFG_LOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) vc_log(CFG_LOG_DEBUG, __VA_ARGS__)

#endif
