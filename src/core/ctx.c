/* ctx.c -- the library's state: one object, defined in the layer every
 * other one builds on. */
#include "ctx.h"

struct vc_ctx vc_ctx = {.rank = -1, .dead_peer = -1,
                        .lock = PTHREAD_MUTEX_INITIALIZER};
