/*
 * shm_slots.h -- the node's flag slots as the "flags" algorithms see them
 * (shm_flags*.c): a slot's layout, finding rank's slot of a call,
 * and the steps every small call takes (my line, an empty line published,
 * the check that the ring may be written) inline. Those steps sit on the
 * path of every small blocking call on a node, on every rank; as calls
 * across files they cost a tenth of a scatterv's instructions (np 4, 8 B,
 * through the drop-in: 961 per call at a non-root, 866 with them inline).
 */
#ifndef VC_COLL_SHM_SLOTS_H
#define VC_COLL_SHM_SLOTS_H

#include <stdint.h>
#include "coll.h"
#include "comm_priv.h"
#include "core/comm.h"
#include "net/net.h"

typedef struct shm_slot {
    uint64_t seq;
    uint8_t data[NET_SHM_SLOT_BYTES - 8];
} shm_slot_t;

_Static_assert((NET_SHM_BLK_DEPTH & (NET_SHM_BLK_DEPTH - 1)) == 0 && NET_SHM_BLK_DEPTH >= 2,
               "the blocking ring's depth is a power of two, at least 2");

/* The slots of set `first` (0: the blocking calls' ring; PSET_FIRST(k):
   persistent request k, two alternate slots; NB_SET: the non-blocking
   calls, two alternate slots) for call `seq`: rank's. */
#define PSET_FIRST(k) (NET_SHM_BLK_DEPTH + 2 * (k))
#define NB_SET PSET_FIRST(NET_SHM_PSETS)
static inline shm_slot_t *coll_slot_of(shm_slot_t *base, int first, int rank, uint64_t seq)
{
    int i = first ? first + (int)(seq & 1) : (int)(seq & (NET_SHM_BLK_DEPTH - 1));
    return &base[rank * NET_SHM_SLOTS + i];
}

/* the node's slots: looked up once (shm_flags.c), then one load */
shm_slot_t *coll_flags_slots_lookup(coll_state_t *cs);
static inline shm_slot_t *coll_flags_slots(const struct vc_comm *comm)
{
    void *b = __atomic_load_n(&comm->coll->flag_slots, __ATOMIC_RELAXED);
    return b ? b : coll_flags_slots_lookup(comm->coll);
}

/* rank's line of call seq in the blocking set: its data (*cap bytes) and
   its sequence word (published last, with release order) */
static inline unsigned char *coll_flags_line(const struct vc_comm *comm, int rank,
                                             uint64_t seq, const uint64_t **seqw,
                                             size_t *cap)
{
    shm_slot_t *s = coll_slot_of(coll_flags_slots(comm), 0, rank, seq);
    *seqw = &s->seq;
    *cap = sizeof s->data;
    return s->data;
}

/* my line of call seq in the blocking set, empty: the flag alone (a
   barrier's, a root's that sends nothing, a reader's "I am past seq - 1") */
static inline void coll_flags_publish_empty(const struct vc_comm *comm, uint64_t seq)
{
    shm_slot_t *mine = coll_slot_of(coll_flags_slots(comm), 0, comm->coll->rank, seq);
    __atomic_store_n(&mine->seq, seq, __ATOMIC_RELEASE);
}

/* The blocking calls' slots (set 0, a ring of NET_SHM_BLK_DEPTH = D):
   before my line of call k overwrites that of call k-D, every rank must be
   past k-D (its k-D+1 line is there). Free while the last call every line
   of which I saw is recent enough (most calls: a compare, here); else
   shm_flags.c looks once at call k-1, then waits. */
int coll_flags_settle_look(const struct vc_comm *comm, coll_comm_t *cc, uint64_t k);
static inline int coll_flags_settle(const struct vc_comm *comm, coll_comm_t *cc, uint64_t k)
{
    const uint64_t lag = NET_SHM_BLK_DEPTH - 1;
    if (k <= lag || cc->flags_seen >= k - lag)
        return VC_SUCCESS;
    return coll_flags_settle_look(comm, cc, k);
}

#endif
