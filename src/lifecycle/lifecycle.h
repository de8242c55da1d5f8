/*
 * lifecycle.h -- building the layers and tearing them down, for the API's
 * vc_init / vc_finalize (which hold the lock and keep the world object
 * VC_COMM_WORLD points at).
 */
#ifndef VC_LIFECYCLE_H
#define VC_LIFECYCLE_H

struct vc_comm;

/* everything vc_init does: config, bootstrap, transports, each layer's
 * state, the world communicator in *world; VC_SUCCESS or why not */
int life_init(struct vc_comm *world);
/* everything vc_finalize does: flush, the closing fence, teardown */
int life_finalize(struct vc_comm *world);

#endif
