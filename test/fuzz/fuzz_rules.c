/*
 * fuzz_rules.c -- libFuzzer harness for the collective rules parser
 * (coll_rules_parse): a rules file is user input. Besides ASan/UBSan's
 * checks: a refused text leaves the table as it was and names a line; an
 * accepted one formats back into text that parses to the same rules.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vcoll.h"
#include "coll/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    coll_rules_t t;
    char err[640];
    memset(&t, 0, sizeof t);
    int rc = coll_rules_parse(&t, (const char *)data, size, "fuzz", 0, err, sizeof err);
    if (rc) {
        if (t.n != 0 || !strstr(err, "fuzz"))
            abort();
        coll_rules_free(&t);
        return 0;
    }
    /* what was accepted reads back as itself */
    for (int i = 0; i < t.n; i++) {
        char f[512], g[512];
        coll_rules_t u;
        memset(&u, 0, sizeof u);
        coll_rule_format(&t.rule[i], f, sizeof f);
        if (coll_rules_parse(&u, f, strlen(f), "again", 0, err, sizeof err) || u.n != 1)
            abort();
        coll_rule_format(&u.rule[0], g, sizeof g);
        if (strcmp(f, g))
            abort();
        coll_rules_free(&u);
    }
    coll_rules_free(&t);
    return 0;
}
