/*
 * rules.c -- the rules table: parsing (a file is untrusted input: every
 * line is checked, and an error names the file, the line and the reason),
 * matching, and the table in force.
 *
 * Format, one rule per line, '#' to the end of a line is a comment:
 *
 *     <collective> [<key>=<value> ...] : <algorithm>
 *
 * keys ranks, ppn (most ranks on one node), nodes, bytes, total, pull (the
 * message size from which ranks of a node copy once: registry.h) take a
 * number or a range N-M, N- (no upper end), -M; bytes, total and pull take
 * k, m, g suffixes (powers of two). oversub, blocked, pof2 (ranks is a power of
 * two), commutative (the op) and nonblocking (the call's form: vc_i<name>)
 * take yes or no. A key left out matches
 * anything. What bytes and total mean per collective: registry.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "vcoll.h"
#include "rules.h"
#include "core/log.h"

#define LINE_MAX_LEN 1024
#define FILE_MAX_BYTES (1u << 20)

static const coll_range_t ANY = {0, UINT64_MAX};

uint64_t coll_hash_str(uint64_t h, const char *s)
{
    if (!h)
        h = 14695981039346656037ull;    /* FNV-1a 64 */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;   /* a terminator: "ab","c" != "a","bc" */
}

/* ---- parsing ---- */

static int parse_num(const char *s, size_t n, int suffixes, uint64_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (buf[0] < '0' || buf[0] > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno)
        return -1;
    uint64_t mul = 1;
    if (suffixes && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        default: return -1;
        }
        end++;
    }
    if (*end || v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

static int parse_range(const char *v, int suffixes, int min, coll_range_t *r)
{
    const char *dash = strchr(v, '-');
    size_t n = strlen(v);
    *r = ANY;
    if (!dash) {
        if (parse_num(v, n, suffixes, &r->lo))
            return -1;
        r->hi = r->lo;
    } else {
        if (dash > v && parse_num(v, (size_t)(dash - v), suffixes, &r->lo))
            return -1;
        if (dash[1] && parse_num(dash + 1, strlen(dash + 1), suffixes, &r->hi))
            return -1;
        if (dash == v && !dash[1])
            return -1;      /* "-" alone */
        if (dash == v)
            r->lo = (uint64_t)min;   /* "-M": from the least value there is */
    }
    return r->lo > r->hi || r->lo < (uint64_t)min ? -1 : 0;
}

static int parse_yesno(const char *v, signed char *out)
{
    if (!strcmp(v, "yes"))
        *out = 1;
    else if (!strcmp(v, "no"))
        *out = 0;
    else
        return -1;
    return 0;
}

typedef struct {
    const char *key;
    size_t off;
    int is_range, suffixes, min;
} key_t_;

#define R(f) offsetof(coll_rule_t, f)
static const key_t_ keys[] = {
    {"ranks", R(ranks), 1, 0, 1}, {"ppn", R(ppn), 1, 0, 1}, {"nodes", R(nodes), 1, 0, 1},
    {"bytes", R(bytes), 1, 1, 0}, {"total", R(total), 1, 1, 0}, {"pull", R(pull), 1, 1, 0},
    {"oversub", R(oversub), 0, 0, 0}, {"blocked", R(blocked), 0, 0, 0},
    {"pof2", R(pof2), 0, 0, 0}, {"commutative", R(commutative), 0, 0, 0},
    {"nonblocking", R(nonblocking), 0, 0, 0},
};
#undef R
#define NKEYS (int)(sizeof keys / sizeof keys[0])

/* split on blanks; tokens point into line (which is modified) */
static int tokens(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(line, " \t\r", &save); p; p = strtok_r(NULL, " \t\r", &save)) {
        if (n == max)
            return -1;
        tok[n++] = p;
    }
    return n;
}

static int parse_line(char *line, coll_rule_t *r, char *why, size_t len)
{
    char *colon = strchr(line, ':');
    if (!colon) {
        snprintf(why, len, "no ':' before the algorithm (write: <collective> "
                 "[key=value ...] : <algorithm>)");
        return -1;
    }
    *colon = 0;
    char *lt[16], *rt[4];
    int nl = tokens(line, lt, 16);
    if (nl < 0) {
        snprintf(why, len, "too many conditions (at most %d)", NKEYS);
        return -1;
    }
    if (nl == 0) {
        snprintf(why, len, "no collective before ':'");
        return -1;
    }
    int nr = tokens(colon + 1, rt, 4);
    if (nr != 1) {
        snprintf(why, len, nr == 0 ? "no algorithm after ':'"
                                   : "one algorithm after ':', found %d words", nr);
        return -1;
    }
    memset(r, 0, sizeof *r);
    r->ranks = r->ppn = r->nodes = r->bytes = r->total = r->pull = ANY;
    r->oversub = r->blocked = r->pof2 = r->commutative = r->nonblocking = RULE_ANY;
    if ((r->kind = coll_kind_of(lt[0])) < 0) {
        snprintf(why, len, "unknown collective \"%.40s\"", lt[0]);
        return -1;
    }
    unsigned seen = 0;
    for (int i = 1; i < nl; i++) {
        char *eq = strchr(lt[i], '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            for (int j = 0; j < NKEYS; j++)
                if (!strcmp(keys[j].key, lt[i]))
                    k = j;
        }
        if (k < 0) {
            snprintf(why, len, "\"%.40s\" is not a condition (use ranks, ppn, nodes, bytes, "
                     "total, pull = a number or range; oversub, blocked, pof2, commutative, "
                     "nonblocking = yes|no)", lt[i]);
            return -1;
        }
        if (seen & (1u << k)) {
            snprintf(why, len, "%s given twice", keys[k].key);
            return -1;
        }
        seen |= 1u << k;
        char *p = (char *)r + keys[k].off;
        int bad = keys[k].is_range
                      ? parse_range(eq + 1, keys[k].suffixes, keys[k].min, (coll_range_t *)p)
                      : parse_yesno(eq + 1, (signed char *)p);
        if (bad) {
            snprintf(why, len, keys[k].is_range
                     ? "%s=%.40s is not a number or range N, N-M, N-, -M%s%s"
                     : "%s=%.40s: use yes or no%s%s", keys[k].key, eq + 1,
                     keys[k].is_range && keys[k].suffixes ? " (k/m/g allowed)" : "",
                     keys[k].is_range && keys[k].min ? ", from 1" : "");
            return -1;
        }
    }
    if (!(r->alg = coll_alg_find(r->kind, rt[0]))) {
        char choices[256];
        coll_alg_choices(r->kind, choices, sizeof choices);
        snprintf(why, len, "%s has no algorithm \"%.40s\" (it has %.200s)",
                 coll_kind_name(r->kind), rt[0], choices + 5);   /* past "auto|" */
        return -1;
    }
    return 0;
}

static int range_covers(coll_range_t a, coll_range_t b)
{
    return a.lo <= b.lo && a.hi >= b.hi;
}

static int tri_covers(signed char a, signed char b)
{
    return a == RULE_ANY || a == b;
}

/* can the algorithm of rule a decline a call its conditions hold for? */
static int always_serves(const coll_alg_t *a)
{
    return a->forms == FORM_ALL && !a->fits && (a->props & ALG_RANK_ORDERED) &&
           !(a->props & (ALG_SHARED | ALG_NODE_AWARE)) && a->build;
}

static int covers(const coll_rule_t *a, const coll_rule_t *b)
{
    return a->kind == b->kind && range_covers(a->ranks, b->ranks) &&
           range_covers(a->ppn, b->ppn) && range_covers(a->nodes, b->nodes) &&
           range_covers(a->bytes, b->bytes) && range_covers(a->total, b->total) &&
           range_covers(a->pull, b->pull) && tri_covers(a->oversub, b->oversub) &&
           tri_covers(a->blocked, b->blocked) && tri_covers(a->pof2, b->pof2) &&
           tri_covers(a->commutative, b->commutative) &&
           tri_covers(a->nonblocking, b->nonblocking);
}

static int push(coll_rules_t *t, const coll_rule_t *r)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        coll_rule_t *n = realloc(t->rule, (size_t)cap * sizeof *n);
        if (!n)
            return VC_ERR_NOMEM;
        t->rule = n;
        t->cap = cap;
    }
    t->rule[t->n++] = *r;
    return VC_SUCCESS;
}

int coll_rules_parse(coll_rules_t *t, const char *text, size_t len, const char *source,
                     int builtin, char *err, size_t errlen)
{
    int first = t->n, line = 0, rc = VC_SUCCESS;
    char buf[LINE_MAX_LEN + 1], why[320];
    size_t i = 0;
    while (i < len && !rc) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        line++;
        size_t n = e - i;
        if (n > LINE_MAX_LEN) {
            snprintf(err, errlen, "%s:%d: line longer than %d characters", source, line,
                     LINE_MAX_LEN);
            rc = VC_ERR_ARG;
            break;
        }
        memcpy(buf, text + i, n);
        buf[n] = 0;
        i = e + 1;
        if (memchr(buf, 0, n)) {
            snprintf(err, errlen, "%s:%d: a NUL byte (not a text file?)", source, line);
            rc = VC_ERR_ARG;
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        if (buf[strspn(buf, " \t\r")] == 0)
            continue;
        coll_rule_t r;
        if (parse_line(buf, &r, why, sizeof why)) {
            snprintf(err, errlen, "%s:%d: %s", source, line, why);
            rc = VC_ERR_ARG;
            break;
        }
        r.line = line;
        r.builtin = builtin;
        for (int j = first; j < t->n; j++)
            if (covers(&t->rule[j], &r) && always_serves(t->rule[j].alg)) {
                snprintf(err, errlen, "%s:%d: this rule never applies: line %d (%s) comes "
                         "first and covers every call it covers", source, line,
                         t->rule[j].line, t->rule[j].alg->name);
                rc = VC_ERR_ARG;
                break;
            }
        if (!rc && (rc = push(t, &r)))
            snprintf(err, errlen, "%s: out of memory reading the rules", source);
    }
    if (rc) {
        t->n = first;   /* as it was */
        return rc;
    }
    /* the digest covers what may differ between ranks: a file's rules */
    for (int j = first; j < t->n && !builtin; j++) {
        char f[256];
        coll_rule_format(&t->rule[j], f, sizeof f);
        t->digest = coll_hash_str(t->digest, f);
    }
    return VC_SUCCESS;
}

void coll_rules_free(coll_rules_t *t)
{
    free(t->rule);
    memset(t, 0, sizeof *t);
}

/* ---- matching ---- */

static int in(coll_range_t r, uint64_t v)
{
    return v >= r.lo && v <= r.hi;
}

static int tri(signed char c, int v)
{
    return c == RULE_ANY || c == (v != 0);
}

static int holds(const coll_rule_t *r, const coll_query_t *q)
{
    int pof2 = q->ranks > 0 && !(q->ranks & (q->ranks - 1));
    return r->kind == q->kind && in(r->ranks, (uint64_t)q->ranks) &&
           in(r->ppn, (uint64_t)q->ppn) && in(r->nodes, (uint64_t)q->nodes) &&
           in(r->bytes, q->bytes) && in(r->total, q->total) && in(r->pull, q->pull) &&
           tri(r->oversub, q->oversub) && tri(r->blocked, q->blocked) &&
           tri(r->pof2, pof2) && tri(r->commutative, !q->noncomm) &&
           tri(r->nonblocking, q->form == FORM_NONBLOCKING);
}

const coll_rule_t *coll_rules_match(const coll_rules_t *t, const coll_query_t *q)
{
    for (int i = 0; t && i < t->n; i++)
        if (holds(&t->rule[i], q) && coll_alg_usable(t->rule[i].alg, q))
            return &t->rule[i];
    return NULL;
}

static size_t put_range(char *buf, size_t len, const char *key, coll_range_t r)
{
    if (r.lo == ANY.lo && r.hi == ANY.hi)
        return 0;
    if (r.lo == r.hi)
        return (size_t)snprintf(buf, len, " %s=%llu", key, (unsigned long long)r.lo);
    if (r.hi == UINT64_MAX)
        return (size_t)snprintf(buf, len, " %s=%llu-", key, (unsigned long long)r.lo);
    return (size_t)snprintf(buf, len, " %s=%llu-%llu", key, (unsigned long long)r.lo,
                            (unsigned long long)r.hi);
}

void coll_rule_format(const coll_rule_t *r, char *buf, size_t len)
{
    size_t u = (size_t)snprintf(buf, len, "%s", coll_kind_name(r->kind));
    for (int k = 0; k < NKEYS && u < len; k++) {
        const char *p = (const char *)r + keys[k].off;
        if (keys[k].is_range)
            u += put_range(buf + u, len - u, keys[k].key, *(const coll_range_t *)p);
        else if (*(const signed char *)p != RULE_ANY)
            u += (size_t)snprintf(buf + u, len - u, " %s=%s", keys[k].key,
                                  *(const signed char *)p ? "yes" : "no");
    }
    if (u < len)
        snprintf(buf + u, len - u, " : %s", r->alg->name);
}

/* ---- the table in force ---- */

static coll_rules_t in_force;

const coll_rules_t *coll_rules_in_force(void)
{
    return &in_force;
}

void coll_rules_unload(void)
{
    coll_rules_free(&in_force);
}

#ifndef VC_SYSCONFDIR
#define VC_SYSCONFDIR "/etc"
#endif

int coll_rules_default_path(int i, char *buf, size_t len)
{
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    int n = -1;
    if (i == 0 && x && *x == '/')
        n = snprintf(buf, len, "%s/vcoll/tune.rules", x);
    else if (i == 0 && h && *h == '/')
        n = snprintf(buf, len, "%s/.config/vcoll/tune.rules", h);
    else if (i == 1)
        n = snprintf(buf, len, "%s/vcoll/tune.rules", VC_SYSCONFDIR);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* read a whole (small) file; a message in err when it cannot be had */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX_BYTES) {
        snprintf(err, errlen, "%s: not a regular file of at most %u bytes", path,
                 FILE_MAX_BYTES);
        fclose(f);
        return NULL;
    }
    char *text = malloc((size_t)st.st_size + 1);
    size_t got = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    int bad = !text || ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: cannot read: %s", path, text ? strerror(errno) : "no memory");
        free(text);
        return NULL;
    }
    *len = got;
    return text;
}

static int load_file(coll_rules_t *t, const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = slurp(path, &len, err, errlen);
    if (!text)
        return VC_ERR_ARG;
    int rc = coll_rules_parse(t, text, len, path, 0, err, errlen);
    free(text);
    if (!rc)
        snprintf(t->source, sizeof t->source, "%s, then built-in", path);
    return rc;
}

int coll_rules_load(const char *setting, char *err, size_t errlen)
{
    coll_rules_t t = {0};
    int rc = VC_SUCCESS;
    char path[512];
    const char *opt = "optional:";

    snprintf(t.source, sizeof t.source, "built-in");
    if (!setting)
        setting = "";
    if (!strncmp(setting, opt, strlen(opt))) {
        char why[600];
        if (load_file(&t, setting + strlen(opt), why, sizeof why)) {
            LOG_WARN("VCOLL_TUNE_FILE (optional) ignored, the built-in rules apply: %s", why);
            coll_rules_free(&t);
            snprintf(t.source, sizeof t.source, "built-in");
        }
    } else if (*setting && strcmp(setting, "builtin")) {
        rc = load_file(&t, setting, err, errlen);
    } else if (!*setting) {
        for (int i = 0; i < 2; i++) {
            struct stat st;
            if (coll_rules_default_path(i, path, sizeof path) || stat(path, &st))
                continue;   /* nothing there: the next place */
            rc = load_file(&t, path, err, errlen);
            break;
        }
    }
    if (!rc && (rc = coll_rules_parse(&t, coll_rules_builtin, strlen(coll_rules_builtin),
                                      "built-in rules", 1, err, errlen)))
        rc = VC_ERR_INTERNAL;   /* the unit tests parse it: cannot happen */
    if (rc) {
        coll_rules_free(&t);
        return rc;
    }
    coll_rules_free(&in_force);
    in_force = t;
    return VC_SUCCESS;
}
