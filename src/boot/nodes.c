/*
 * nodes.c -- the job's node map and the facts derived from it. Everything
 * here is pure (no PMIx), so uneven layouts are unit tested; pmix.c feeds it.
 *
 * Node ids are canonical: nodes are numbered in the order of their lowest
 * rank. Whatever PMIx source a rank's map came from (per-node peer lists or
 * per-rank host names, see pmix.c), the same layout gives the same ids on
 * every rank, so job-wide choices need no extra exchange.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "boot/boot.h"

int boot_nodemap_canon(int size, int *node_of, int *nnodes, char *err, size_t errlen)
{
    if (size < 1 || !node_of || !nnodes)
        return VC_ERR_ARG;
    int max = -1;
    for (int r = 0; r < size; r++) {
        if (node_of[r] < 0 || node_of[r] >= size) {
            snprintf(err, errlen, "rank %d is on no node", r);
            return VC_ERR_BOOTSTRAP;
        }
        if (node_of[r] > max)
            max = node_of[r];
    }
    int *id = malloc((size_t)(max + 1) * sizeof *id);
    if (!id)
        return VC_ERR_NOMEM;
    for (int n = 0; n <= max; n++)
        id[n] = -1;
    int next = 0;
    for (int r = 0; r < size; r++) {
        if (id[node_of[r]] < 0)
            id[node_of[r]] = next++;
        node_of[r] = id[node_of[r]];
    }
    free(id);
    *nnodes = next;
    return VC_SUCCESS;
}

int boot_nodemap_walk(int size, boot_node_fetch_fn *fetch, void *arg, int *node_of,
                      int *nnodes, int *nfetch, char *err, size_t errlen)
{
    if (size < 1 || !fetch || !node_of || !nnodes)
        return VC_ERR_ARG;
    for (int r = 0; r < size; r++)
        node_of[r] = -1;
    int n = 0, fetches = 0, rc = VC_SUCCESS;
    for (int r = 0; r < size && !rc; r++) {
        if (node_of[r] >= 0)
            continue;
        int leader = -1, cnt = 0;
        const int *list = NULL;
        rc = fetch(arg, r, &leader, &list, &cnt);
        fetches++;
        if (!rc && leader != r) {
            /* r is not a leader: the list comes from its leader, which
               must call itself one and list r */
            list = NULL;
            cnt = 0;
            int l2 = -1;
            if (leader < 0 || leader >= size) {
                snprintf(err, errlen, "rank %d names rank %d as its node's leader, but the "
                         "job has %d ranks", r, leader, size);
                rc = VC_ERR_BOOTSTRAP;
            } else if (leader < r) {
                /* a lower leader would have placed r already */
                snprintf(err, errlen, "rank %d names rank %d as its node's leader, whose "
                         "node does not list it", r, leader);
                rc = VC_ERR_BOOTSTRAP;
            } else {
                rc = fetch(arg, leader, &l2, &list, &cnt);
                fetches++;
                if (!rc && l2 != leader) {
                    snprintf(err, errlen, "rank %d names rank %d as its node's leader, "
                             "which names rank %d", r, leader, l2);
                    rc = VC_ERR_BOOTSTRAP;
                }
            }
            if (!rc)
                leader = l2;
        }
        int has_r = 0;
        for (int i = 0; !rc && i < cnt; i++) {
            int q = list[i];
            if (q < 0 || q >= size) {
                snprintf(err, errlen, "the node of rank %d lists rank %d, but the job has "
                         "%d ranks", leader, q, size);
                rc = VC_ERR_BOOTSTRAP;
            } else if (node_of[q] >= 0) {
                snprintf(err, errlen, "rank %d is listed by two nodes' leaders (the "
                         "second is rank %d)", q, leader);
                rc = VC_ERR_BOOTSTRAP;
            } else {
                node_of[q] = n;
                has_r |= q == r;
            }
        }
        if (!rc && !has_r) {
            snprintf(err, errlen, "rank %d is not on the list of its node's leader %d", r,
                     leader);
            rc = VC_ERR_BOOTSTRAP;
        }
        n++;
    }
    if (nfetch)
        *nfetch = fetches;
    return rc ? rc : boot_nodemap_canon(size, node_of, nnodes, err, errlen);
}

int boot_nodemap_from_peers(int size, int nlists, const int *const *peers,
                            const int *npeers, int *node_of, int *nnodes,
                            char *err, size_t errlen)
{
    if (size < 1 || nlists < 1 || !peers || !npeers || !node_of || !nnodes)
        return VC_ERR_ARG;
    for (int r = 0; r < size; r++)
        node_of[r] = -1;
    for (int n = 0; n < nlists; n++)
        for (int i = 0; i < npeers[n]; i++) {
            int r = peers[n][i];
            if (r < 0 || r >= size) {
                snprintf(err, errlen, "node %d lists rank %d, but the job has %d ranks",
                         n, r, size);
                return VC_ERR_BOOTSTRAP;
            }
            if (node_of[r] >= 0 && node_of[r] != n) {
                snprintf(err, errlen, "rank %d is listed on nodes %d and %d", r,
                         node_of[r], n);
                return VC_ERR_BOOTSTRAP;
            }
            node_of[r] = n;
        }
    return boot_nodemap_canon(size, node_of, nnodes, err, errlen);
}

/* Host names are compared, never ordered: a node is the first rank that
 * carried its name. O(size x nnodes) string compares; with a hash this could
 * be O(size), but it runs only when PMIx lacks per-node lists (pmix.c). */
int boot_nodemap_from_hosts(int size, const char *const *host_of, int *node_of,
                            int *nnodes, char *err, size_t errlen)
{
    if (size < 1 || !host_of || !node_of || !nnodes)
        return VC_ERR_ARG;
    int *first = malloc((size_t)size * sizeof *first), n = 0;
    if (!first)
        return VC_ERR_NOMEM;
    for (int r = 0; r < size; r++) {
        if (!host_of[r] || !*host_of[r]) {
            free(first);
            snprintf(err, errlen, "rank %d has no host name", r);
            return VC_ERR_BOOTSTRAP;
        }
        int k = 0;
        while (k < n && strcmp(host_of[first[k]], host_of[r]))
            k++;
        if (k == n)
            first[n++] = r;
        node_of[r] = k;
    }
    free(first);
    *nnodes = n;
    return VC_SUCCESS;
}

int boot_node_sizes(int size, int nnodes, const int *node_of, int *count)
{
    if (size < 1 || nnodes < 1 || !node_of || !count)
        return VC_ERR_ARG;
    memset(count, 0, (size_t)nnodes * sizeof *count);
    for (int r = 0; r < size; r++) {
        if (node_of[r] < 0 || node_of[r] >= nnodes)
            return VC_ERR_ARG;
        count[node_of[r]]++;
    }
    return VC_SUCCESS;
}

int boot_max_remote_peers(const boot_info_t *b)
{
    if (!b || b->size <= 1 || !b->node_of || b->nnodes <= 1)
        return 0;
    int *count = malloc((size_t)b->nnodes * sizeof *count);
    if (!count || boot_node_sizes(b->size, b->nnodes, b->node_of, count)) {
        free(count);
        return b->size - 1;     /* the safe side: assume the worst layout */
    }
    int smallest = b->size;
    for (int n = 0; n < b->nnodes; n++)
        if (count[n] < smallest)
            smallest = count[n];
    free(count);
    return b->size - smallest;
}

/* FNV-1a over the node ids: equal maps give equal digests on every rank
 * (byte order does not matter, all ranks of a job share it). */
uint64_t boot_nodemap_digest(int size, const int *node_of)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int r = 0; node_of && r < size; r++) {
        uint32_t v = (uint32_t)node_of[r];
        for (int i = 0; i < 4; i++) {
            h ^= (v >> (8 * i)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

int boot_nodemap_describe(const boot_info_t *b, char *buf, size_t len)
{
    if (!b || !buf || len == 0 || !b->node_of || b->nnodes < 1 || b->node_id < 0 ||
        b->node_id >= b->nnodes)
        return VC_ERR_ARG;
    int *count = malloc((size_t)b->nnodes * sizeof *count);
    if (!count)
        return VC_ERR_NOMEM;
    if (boot_node_sizes(b->size, b->nnodes, b->node_of, count)) {
        free(count);
        return VC_ERR_ARG;
    }
    size_t off = (size_t)snprintf(buf, len, "%d ranks on %d node%s, ranks per node ",
                                  b->size, b->nnodes, b->nnodes == 1 ? "" : "s");
    /* a 10k-node list says nothing a summary does not */
    if (b->nnodes <= 16) {
        for (int n = 0; n < b->nnodes && off < len; n++)
            off += (size_t)snprintf(buf + off, len - off, "%s%d", n ? "," : "", count[n]);
    } else {
        int lo = b->size, hi = 0;
        for (int n = 0; n < b->nnodes; n++) {
            lo = count[n] < lo ? count[n] : lo;
            hi = count[n] > hi ? count[n] : hi;
        }
        off += (size_t)snprintf(buf + off, len - off, "%d..%d", lo, hi);
    }
    if (off < len)
        snprintf(buf + off, len - off, "; this rank on node %d (%s) with %d rank%s",
                 b->node_id, b->node_name[0] ? b->node_name : "?", count[b->node_id],
                 count[b->node_id] == 1 ? "" : "s");
    free(count);
    return VC_SUCCESS;
}

int boot_kv_push(boot_kv_t **head, const char *key, const void *data, size_t len)
{
    boot_kv_t *kv = calloc(1, sizeof *kv);
    if (!kv || !(kv->key = strdup(key)) || !(kv->val = malloc(len ? len : 1))) {
        if (kv)
            free(kv->key);
        free(kv);
        return VC_ERR_NOMEM;
    }
    memcpy(kv->val, data, len);
    kv->len = len;
    kv->next = *head;
    *head = kv;
    return VC_SUCCESS;
}

void boot_kv_free(boot_kv_t **head)
{
    while (*head) {
        boot_kv_t *n = (*head)->next;
        free((*head)->key);
        free((*head)->val);
        free(*head);
        *head = n;
    }
}
