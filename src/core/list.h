/*
 * list.h -- the library's one doubly linked list: intrusive (the node is a
 * member of the element, LIST_ENTRY gets the element back) and circular
 * around a head node, so that unlinking needs neither a walk nor to know
 * which list the node is on, and no operation has a first/last special
 * case. Header-only and in core, so every library layer may use it.
 *
 * A list must be list_init'ed before use (a zeroed head is not an empty
 * list). A node that is on no list has NULL links: zeroed memory is such
 * a node, and list_unlink leaves one, so a stale node faults at once
 * instead of corrupting the list it left.
 *
 * Not thread-safe: the owner's lock, if any, covers its lists.
 */
#ifndef VC_CORE_LIST_H
#define VC_CORE_LIST_H

#include <stddef.h>

typedef struct list_node {
    struct list_node *prev, *next;
} list_node_t;

/* a distinct type for the head, so an element cannot be passed for it */
typedef struct list {
    list_node_t h;
} list_t;

/* the element whose member `member` is node n */
#define LIST_ENTRY(n, type, member) ((type *)((char *)(n) - offsetof(type, member)))

/* n walks the nodes of l in order; the body may unlink n, and no other */
#define LIST_FOR_EACH_SAFE(n, nx, l)                                                  \
    for (list_node_t *n = (l)->h.next, *nx = n->next; n != &(l)->h; n = nx, nx = n->next)

/* n walks the nodes of l in order; the body must not unlink n */
#define LIST_FOR_EACH(n, l) for (list_node_t *n = (l)->h.next; n != &(l)->h; n = n->next)

static inline void list_init(list_t *l)
{
    l->h.prev = l->h.next = &l->h;
}

static inline int list_empty(const list_t *l)
{
    return l->h.next == &l->h;
}

/* n goes between a and a->next */
static inline void list_insert_after(list_node_t *a, list_node_t *n)
{
    n->prev = a;
    n->next = a->next;
    a->next->prev = n;
    a->next = n;
}

static inline void list_push_front(list_t *l, list_node_t *n)
{
    list_insert_after(&l->h, n);
}

static inline void list_push_back(list_t *l, list_node_t *n)
{
    list_insert_after(l->h.prev, n);
}

static inline void list_unlink(list_node_t *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = NULL;
}

/* first / last node, NULL when l is empty */
static inline list_node_t *list_first(const list_t *l)
{
    return list_empty(l) ? NULL : l->h.next;
}

static inline list_node_t *list_last(const list_t *l)
{
    return list_empty(l) ? NULL : l->h.prev;
}

/* dst (empty or not yet initialised) takes every node of src, in order;
   src is left empty. A head cannot be copied with `=`: its neighbours
   point at its address. */
static inline void list_take(list_t *dst, list_t *src)
{
    list_init(dst);
    if (list_empty(src))
        return;
    dst->h.next = src->h.next;
    dst->h.prev = src->h.prev;
    dst->h.next->prev = dst->h.prev->next = &dst->h;
    list_init(src);
}

#endif
