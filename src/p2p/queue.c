/* queue.c -- doubly linked request queues (posted receives, collectives). */
#include "p2p_state.h"

void p2p_queue_push(p2p_queue_t *q, struct vc_request *r)
{
    r->next = NULL;
    r->prev = q->tail;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
}

void p2p_queue_remove(p2p_queue_t *q, struct vc_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        q->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q->tail = r->prev;
    r->next = r->prev = NULL;
}
