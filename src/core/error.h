/* error.h -- the sentence for a VC_ERR_* code (what vc_strerror returns). */
#ifndef VC_ERROR_H
#define VC_ERROR_H

const char *core_strerror(int err);

#endif
