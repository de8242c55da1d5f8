/*
 * proto.h -- p2p wire formats (packets carried by any net.h transport).
 *
 *   eager:       EAGER(hdr + payload)                       -> receiver copies out
 *   rendezvous:  RTS(hdr, sreq, addr, key) -> receiver get()s into the user buffer
 *                -> FIN(sreq)                                -> sender completes
 *   split:       (large, shm: both ends copy) RTS -> HELP(sreq, rreq, token,
 *                off, len, addr) and the receiver get()s [0, off); the part
 *                [off, off + len) goes to whoever takes the token's claim
 *                word first: the sender put()s it and answers HELPED(rreq,
 *                status), or the receiver gets it too -> FIN
 *   streamed:    (transport cannot get, e.g. CMA refused)
 *                RTS -> CTS(sreq, rreq, n) -> DATA(rreq, off, bytes)... -> done
 * Request ids are handles (slot index + generation, request.h), echoed back
 * unchanged and checked before use: never pointers.
 */
#ifndef VC_P2P_PROTO_H
#define VC_P2P_PROTO_H

#include <stdint.h>
#include "../net/net.h"

enum { P2P_EAGER = 1, P2P_RTS, P2P_FIN, P2P_CTS, P2P_DATA, P2P_HELP, P2P_HELPED };
/* RTS flags, the sender's state when it posted it. LONE: no receive
   posted and no other rendezvous send alive (not yet freed), nothing else to
   copy (split from net_t.split_lone_min). BUSY: receives posted, it will
   be copying into those (an exchange): it is not asked to copy a part */
enum { P2P_F_LONE = 1, P2P_F_BUSY = 2 };

typedef struct p2p_hdr {        /* leads every matched message (EAGER, RTS) */
    uint8_t type;
    uint8_t flags;              /* P2P_F_* (RTS) */
    uint8_t pad[2];
    uint32_t ctx;               /* communicator context (+1 for collectives) */
    int32_t src;                /* sender's rank in that communicator */
    int32_t tag;
    uint64_t len;               /* full message length */
} p2p_hdr_t;

typedef struct p2p_rts {
    p2p_hdr_t h;
    uint64_t sreq;
    uint64_t addr;
    net_key_t key;
} p2p_rts_t;

typedef struct p2p_fin {
    uint8_t type;
    uint8_t pad[7];
    uint64_t sreq;
} p2p_fin_t;

typedef struct p2p_cts {
    uint8_t type;
    uint8_t pad[7];
    uint64_t sreq, rreq;
    uint64_t len;               /* bytes the receiver wants (<= message length) */
} p2p_cts_t;

typedef struct p2p_data {
    uint8_t type;
    uint8_t pad[7];
    uint64_t rreq;
    uint64_t off;
} p2p_data_t;

typedef struct p2p_help {
    uint8_t type;
    uint8_t pad[7];
    uint64_t sreq, rreq;
    uint64_t token;             /* the receiver's claim word for this part */
    uint64_t off, len;          /* the part, in the message */
    uint64_t addr;              /* where it goes in the receiver's memory */
} p2p_help_t;

typedef struct p2p_helped {
    uint8_t type;
    uint8_t pad[3];
    int32_t status;             /* VC_SUCCESS: the part is in place */
    uint64_t rreq;
} p2p_helped_t;

/* The fixed header of any packet: what p2p_on_packet copies out of the
   transport's buffer, once, before checking or using any of it. */
typedef union p2p_any {
    uint8_t type;
    p2p_hdr_t h;
    p2p_rts_t rts;
    p2p_fin_t fin;
    p2p_cts_t cts;
    p2p_data_t data;
    p2p_help_t help;
    p2p_helped_t helped;
} p2p_any_t;

#endif
