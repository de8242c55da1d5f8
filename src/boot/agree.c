/*
 * agree.c -- settings every rank must share (transport choice, packet and
 * segment sizes, collective algorithms, the node map). Each rank publishes
 * its values with its endpoint blobs; after the fence every rank compares its
 * own with rank 0's (one PMIx_Get, whatever the job size). A rank that
 * differs says which setting and which ranks, instead of the transport
 * failing later with "PMIx_Get NOT-FOUND" or a collective hanging. A rank
 * that finds a peer's endpoint missing asks the same question of that peer.
 *
 * The blob is only the values (8 bytes each) plus a hash of the names: the
 * fence copies every rank's blob to every node, so at 100k ranks each byte
 * here costs 100 kB per node. Same names hash = same list, same order.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "vcoll.h"
#include "boot/boot.h"
#include "core/clock.h"

#define AGREE_KEY   "vc.agree"
#define AGREE_MAGIC 0x76634147u   /* "vcAG", bump on layout change */

typedef struct agree_blob {
    uint32_t magic;
    uint32_t n;
    uint32_t names;           /* hash of the setting names, in order */
    uint32_t pad;
    int64_t value[BOOT_AGREE_MAX];
} agree_blob_t;

int boot_agree_add(boot_info_t *b, const char *name, int64_t value,
                   const char *const *names)
{
    if (!b || !name || b->nagree >= BOOT_AGREE_MAX)
        return VC_ERR_ARG;
    boot_setting_t *s = &b->agree[b->nagree++];
    s->name = name;
    s->value = value;
    s->names = names;
    s->show = NULL;
    return VC_SUCCESS;
}

int boot_agree_add_shown(boot_info_t *b, const char *name, int64_t value,
                         void (*show)(int64_t value, char *buf, size_t len))
{
    int rc = boot_agree_add(b, name, value, NULL);
    if (!rc)
        b->agree[b->nagree - 1].show = show;
    return rc;
}

uint32_t boot_agree_names_hash(const boot_setting_t *s, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        for (const char *p = s[i].name; *p; p++) {
            h ^= (uint8_t)*p;
            h *= 16777619u;
        }
    return h ^ (uint32_t)n;
}

static void show(const boot_setting_t *s, int64_t v, char *buf, size_t len)
{
    if (s->show) {
        s->show(v, buf, len);
        return;
    }
    int k = 0;
    while (s->names && s->names[k] && k < v)
        k++;
    if (s->names && v >= 0 && k == v && s->names[k])
        snprintf(buf, len, "%s", s->names[k]);
    else if (s->names)
        snprintf(buf, len, "#%lld", (long long)v);
    else
        snprintf(buf, len, "%lld", (long long)v);
}

int boot_agree_diff(const boot_setting_t *mine, int n, int me, const int64_t *theirs,
                    int them, char *msg, size_t len)
{
    for (int i = 0; i < n; i++) {
        if (mine[i].value == theirs[i])
            continue;
        char a[200], b[200];
        show(&mine[i], mine[i].value, a, sizeof a);
        show(&mine[i], theirs[i], b, sizeof b);
        snprintf(msg, len, "%s must be the same on every rank, but it is %s on rank %d "
                 "and %s on rank %d", mine[i].name, a, me, b, them);
        return 1;
    }
    return 0;
}

int boot_agree_publish(boot_info_t *b)
{
    agree_blob_t blob;
    memset(&blob, 0, sizeof blob);
    blob.magic = AGREE_MAGIC;
    blob.n = (uint32_t)b->nagree;
    blob.names = boot_agree_names_hash(b->agree, b->nagree);
    for (int i = 0; i < b->nagree; i++)
        blob.value[i] = b->agree[i].value;
    return boot_put(b, AGREE_KEY, &blob, sizeof blob);
}

int boot_agree_check(boot_info_t *b, int peer, char *msg, size_t len)
{
    if (!b || peer < 0 || peer >= b->size || !msg || len == 0)
        return VC_ERR_ARG;
    if (peer == b->rank)
        return VC_SUCCESS;
    agree_blob_t blob;
    size_t got = sizeof blob;
    int rc = boot_get(b, peer, AGREE_KEY, &blob, &got);
    if (rc || got != sizeof blob || blob.magic != AGREE_MAGIC) {
        snprintf(msg, len, "rank %d published no job-wide settings vcoll %s understands "
                 "(another vcoll version, or it failed before publishing)", peer,
                 core_version());
        return VC_ERR_BOOTSTRAP;
    }
    if (blob.n != (uint32_t)b->nagree ||
        blob.names != boot_agree_names_hash(b->agree, b->nagree)) {
        snprintf(msg, len, "ranks %d and %d check different job-wide settings "
                 "(different vcoll versions in one job?)", b->rank, peer);
        return VC_ERR_ARG;
    }
    return boot_agree_diff(b->agree, b->nagree, b->rank, blob.value, peer, msg, len)
           ? VC_ERR_ARG : VC_SUCCESS;
}
