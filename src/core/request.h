/*
 * request.h -- the object behind vc_request_t. p2p requests and
 * non-blocking collectives share it; a collective request carries an
 * advance() hook that the progress engine calls until it reports done.
 */
#ifndef VC_REQUEST_H
#define VC_REQUEST_H

#include <stdint.h>
#include <stddef.h>
#include "vcoll.h"
#include "list.h"

#define REQ_MAGIC 0x76635251u   /* live request */

enum { REQ_SEND = 1, REQ_RECV, REQ_COLL };

/* a persistent collective (vc_<name>_init) between starts is INACTIVE: it
   holds its schedule and scratch, is on no queue, and waits and tests
   return at once on it; vc_start makes it ACTIVE until a wait or test
   completes it. Every other request is PERSIST_NONE. */
enum { PERSIST_NONE = 0, PERSIST_INACTIVE, PERSIST_ACTIVE };

struct vc_comm;
struct net;

struct vc_request {
    uint32_t magic;
    uint32_t idx;            /* slot in the pool (stable for the slot's life) */
    uint32_t gen;            /* bumped on every free: stale handles miss */
    struct req_pool *pool;   /* the pool it came from (req_free returns it there) */
    int kind;
    volatile int done;
    int listed;              /* met already by the running req_check_array */
    int persist;             /* PERSIST_* */
    vc_status_t status;
    union {                  /* a free request is on no queue */
        list_node_t link;    /* p2p's posted or coll queue */
        struct vc_request *next_free;   /* the pool's free stack (request.c) */
    };

    /* p2p */
    struct vc_comm *comm;
    uint32_t ctx;            /* context id the message travels on */
    int peer;                /* comm rank (dest for send, source or ANY for recv) */
    int world_peer;          /* world rank of peer (-1 for ANY_SOURCE) */
    int tag;
    void *buf;
    size_t bytes;            /* send: message length; recv: buffer capacity */
    size_t recvd;            /* streamed rendezvous: bytes landed so far */
    size_t expect;           /* streamed rendezvous: bytes that will land */
    int proto;               /* p2p protocol state */
    void *mem_handle;        /* exposed send buffer (rendezvous) */
    unsigned *live;          /* rendezvous send: p2p's count of those in
                                flight, which it leaves when freed */
    struct net *net;         /* transport the peer is reached through */
    uint64_t remote_req;     /* peer's request id (rendezvous) */
    /* a receive copied by both ends (p2p.c: split copies): where it is */
    int hot;                 /* p2p_irecv's P2P_RECV_HOT: never split */
    int split;               /* SPLIT_* of p2p.c, 0 when not split */
    int split_helped;        /* the sender's HELPED: 0 not yet, 1 ok, -1 failed */
    int split_err;           /* my part failed (VC_ERR_UNSUPPORTED: CMA refused,
                                stream it all once the sender's part is settled) */
    size_t split_at;         /* the sender's part is [split_at, message end) */
    uint64_t split_token;    /* the transport's claim word for that part */
    uint64_t split_raddr;    /* the sender's buffer (for taking the part back) */

    /* collectives */
    int (*advance)(struct vc_request *r);   /* returns VC_SUCCESS / VC_ERR_* */
    void (*release)(struct vc_request *r);  /* frees coll state */
    void (*watch)(struct vc_request *r);    /* probe the peers it waits on */
    void *coll;
    /* optional: how a blocking wait completes it, instead of the progress
       loop (a start through the flag slots watches memory other ranks
       write, as the blocking call does) */
    int (*wait)(struct vc_request *r);
};

/* The pool (the context holds it; p2p allocates from it): slabs that are never returned to
   malloc while the library runs, indexed so a wire handle finds its slot. */
typedef struct req_pool {
    struct req_slab **slabs;
    uint32_t nslabs, cap;
    struct vc_request *free;   /* top of the free stack, by next_free */
} req_pool_t;

/* an inactive persistent request: waits and tests treat it like
   VC_REQUEST_NULL (returns at once, empty status; skipped by waitany) */
static inline int req_inactive(const struct vc_request *r)
{
    return r && r->persist == PERSIST_INACTIVE;
}

struct vc_request *req_alloc(req_pool_t *pool, int kind);
void req_free(struct vc_request *r);
int req_valid(const struct vc_request *r);
/* Every non-NULL entry live and none given twice (completing a request
 * twice would free it twice): VC_SUCCESS, else VC_ERR_REQUEST. */
int req_check_array(int n, struct vc_request *const rs[]);
void req_pool_fini(req_pool_t *pool);

/* Requests named on the wire (rendezvous, streaming): a handle is the
 * slot index and the slot's generation, never a pointer, so a late or
 * forged packet can only name a live request of the right kind, or
 * nothing. */
static inline uint64_t req_handle(const struct vc_request *r)
{
    return (uint64_t)r->gen << 32 | r->idx;
}
/* the live request behind h, of kind `kind`, or NULL */
struct vc_request *req_from_handle(const req_pool_t *pool, uint64_t h, int kind);

#endif
