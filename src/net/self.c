/* self.c -- loopback transport for messages a rank sends to itself.
 * Packets are queued in order and delivered from progress (never from
 * inside send, so p2p never re-enters itself). */
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "net.h"

typedef struct self_pkt { struct self_pkt *next; size_t len; uint8_t data[]; } self_pkt_t;
typedef struct { net_t base; int rank; self_pkt_t *head, *tail; } net_self_t;

static int self_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    net_self_t *s = (net_self_t *)n;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    self_pkt_t *p = malloc(sizeof *p + len);
    if (!p)
        return VC_ERR_NOMEM;
    p->next = NULL;
    p->len = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(p->data + p->len, iov[i].iov_base, iov[i].iov_len);
        p->len += iov[i].iov_len;
    }
    if (s->tail)
        s->tail->next = p;
    else
        s->head = p;
    s->tail = p;
    return VC_SUCCESS;
}

static int self_progress(net_t *n)
{
    net_self_t *s = (net_self_t *)n;
    int events = 0;
    /* deliver only what was queued before this call: handlers may queue more */
    self_pkt_t *end = s->tail;
    while (s->head) {
        self_pkt_t *p = s->head;
        s->head = p->next;
        if (!s->head)
            s->tail = NULL;
        n->up.packet(n->up.arg, s->rank, p->data, p->len);
        free(p);
        events++;
        if (p == end)
            break;
    }
    return events;
}

static int self_expose(net_t *n, const void *buf, size_t len, net_key_t *key, void **h)
{
    memset(key, 0, sizeof *key);
    *h = NULL;
    return VC_SUCCESS;
}

static int self_release(net_t *n, void *h) { return VC_SUCCESS; }

static int self_get(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
                    const net_key_t *key, void *cookie)
{
    memmove(dst, (const void *)(uintptr_t)raddr, len);
    n->up.get_done(n->up.arg, cookie, VC_SUCCESS);
    return VC_SUCCESS;
}

static void self_close(net_t *n)
{
    net_self_t *s = (net_self_t *)n;
    while (s->head) {
        self_pkt_t *p = s->head;
        s->head = p->next;
        free(p);
    }
    free(s);
}

static const net_ops_t self_ops = {
    .send = self_send, .progress = self_progress, .mem_expose = self_expose,
    .mem_release = self_release, .get = self_get, .check_peer = NULL, .close = self_close,
};

int net_self_open(const net_env_t *env, const net_upcalls_t *up, net_t **out)
{
    net_self_t *s = calloc(1, sizeof *s);
    if (!s)
        return VC_ERR_NOMEM;
    s->base.ops = &self_ops;
    s->base.name = "self";
    s->base.max_packet = (size_t)1 << 20;
    s->base.up = *up;
    s->rank = env->rank;
    *out = &s->base;
    return VC_SUCCESS;
}
