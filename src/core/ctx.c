/* ctx.c -- the library's state: one object, which only the API and the
 * lifecycle touch (ctx.h). */
#include "ctx.h"

struct vc_ctx ctx_lib = {.rank = -1, .lock = PTHREAD_MUTEX_INITIALIZER};
