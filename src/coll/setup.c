/*
 * setup.c -- what the collective layer needs settled at vc_init: the
 * forced algorithms (VCOLL_<COLL>_ALG) checked against the registry, the
 * rules table in force loaded, and both in a form the lifecycle can agree
 * on job-wide (ranks with different choices would run different schedules
 * and hang).
 */
#include <stdio.h>
#include <string.h>
#include "coll.h"
#include "registry.h"
#include "rules.h"
#include "core/config.h"
#include "core/log.h"

/* 4 bits per collective hold its algorithm's number (0 = auto) */
#define PACK_BITS 4

int coll_setup(const struct vc_config *cfg, char *err, size_t errlen)
{
    for (int k = 0; k < COLL_NKINDS && k < CFG_NCOLL; k++) {
        const char *name = cfg->coll_alg[k];
        if (!strcmp(name, "auto") || coll_alg_find(k, name))
            continue;
        char choices[256], var[64];
        snprintf(var, sizeof var, "VCOLL_%s_ALG", coll_kind_name(k));
        for (char *p = var; *p; p++)
            *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        snprintf(err, errlen, "%s=\"%s\" is not valid; use one of %s", var, name,
                 coll_alg_choices(k, choices, sizeof choices));
        return VC_ERR_ARG;
    }
    int rc = coll_rules_load(cfg->tune_file, err, errlen);
    if (!rc)
        LOG_DEBUG("coll: selection rules: %s", coll_rules_source());
    return rc;
}

void coll_teardown(void)
{
    coll_rules_unload();
}

int64_t coll_forced_pack(const struct vc_config *cfg)
{
    uint64_t v = 0;
    for (int k = 0; k < COLL_NKINDS && k < CFG_NCOLL; k++) {
        uint64_t n = (uint64_t)coll_alg_number(coll_alg_find(k, cfg->coll_alg[k]));
        v |= (n & ((1u << PACK_BITS) - 1)) << (k * PACK_BITS);
    }
    return (int64_t)v;
}

void coll_forced_show(int64_t packed, char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = 0;
    for (int k = 0; k < COLL_NKINDS && k < CFG_NCOLL && u < len; k++) {
        int n = (int)(((uint64_t)packed >> (k * PACK_BITS)) & ((1u << PACK_BITS) - 1));
        const coll_alg_t *const *l;
        int have = coll_algs(k, &l);
        if (!n)
            continue;
        u += (size_t)snprintf(buf + u, len - u, "%s%s=%s", u ? "," : "", coll_kind_name(k),
                              n <= have ? l[n - 1]->name : "?");
    }
    if (!u)
        snprintf(buf, len, "auto everywhere");
}

int64_t coll_rules_digest(void)
{
    return (int64_t)(coll_rules_in_force()->digest & INT64_MAX);
}

const char *coll_rules_source(void)
{
    const coll_rules_t *t = coll_rules_in_force();
    return t->n ? t->source : "built-in";
}
