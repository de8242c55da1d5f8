/*
 * rules.h -- selection as data: a table of rules, each the conditions of a
 * call (collective, ranks, ranks per node, nodes, bytes, oversubscription,
 * ...) and the algorithm for it. The first rule whose conditions hold and
 * whose algorithm can serve the call wins (registry.h: coll_alg_usable).
 *
 * The same text format is the built-in table (rules_builtin.c), the file
 * vcoll_tune writes, and what vcoll_info prints; doc/collectives.md
 * describes it. A table in force is a file's rules (VCOLL_TUNE_FILE, or
 * the default location) followed by the built-in ones, so what a file
 * does not cover falls to the built-in rows.
 */
#ifndef VC_COLL_RULES_H
#define VC_COLL_RULES_H

#include <stdint.h>
#include <stdio.h>
#include "registry.h"

typedef struct coll_range {
    uint64_t lo, hi;    /* inclusive; UINT64_MAX = open */
} coll_range_t;

enum { RULE_ANY = -1 };

typedef struct coll_rule {
    int kind;
    coll_range_t ranks, ppn, nodes, bytes, total, pull;
    /* 0, 1 or RULE_ANY; nonblocking: the call's form (persistent is not) */
    signed char oversub, blocked, pof2, commutative, nonblocking;
    const coll_alg_t *alg;
    int line;           /* in its source */
    int builtin;        /* from the built-in table */
} coll_rule_t;

typedef struct coll_rules {
    coll_rule_t *rule;
    int n, cap;
    uint64_t digest;    /* of the rules from a file (0: none) */
    char source[512];   /* the file, or "built-in" */
} coll_rules_t;

/* Append the rules of text (len bytes, need not be NUL-terminated) to t.
 * On an error: VC_ERR_ARG and "source:line: reason" in err; t is left as
 * it was. A rule that can never apply (an earlier one of the same text
 * covers every call it covers, and that one's algorithm always serves)
 * is an error: the table contradicts itself. */
int coll_rules_parse(coll_rules_t *t, const char *text, size_t len, const char *source,
                     int builtin, char *err, size_t errlen);
void coll_rules_free(coll_rules_t *t);
/* the first rule that holds for q and whose algorithm is usable, or NULL */
const coll_rule_t *coll_rules_match(const coll_rules_t *t, const coll_query_t *q);
/* one rule in the file format (no newline) */
void coll_rule_format(const coll_rule_t *r, char *buf, size_t len);

/* h extended by the string s (h = 0 starts one): the rules' digest and
   vc_coll_set_alg's agreement on names */
uint64_t coll_hash_str(uint64_t h, const char *s);

/* The built-in table's text (rules_builtin.c). */
extern const char coll_rules_builtin[];

/* The table in force, loaded at vc_init (lifecycle) from the setting
 * (VCOLL_TUNE_FILE: a path, "builtin", "optional:<path>", or "" for the
 * default locations). Errors name the file, line and reason. */
int coll_rules_load(const char *setting, char *err, size_t errlen);
void coll_rules_unload(void);
const coll_rules_t *coll_rules_in_force(void);
/* the table in force, or the built-in one before vc_init (select.c) */
const coll_rules_t *coll_rules_current(void);
/* the default file locations, first found wins (vcoll_tune writes the
   first): $XDG_CONFIG_HOME/vcoll/tune.rules (or ~/.config/...), then
   <sysconfdir>/vcoll/tune.rules */
int coll_rules_default_path(int i, char *buf, size_t len);

#endif
