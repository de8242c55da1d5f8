/*
 * test_rules.c -- selection as data: the rules format (every error names
 * the file, the line and the reason), first-match semantics with the
 * registry's promises, the table in force and its precedence, and the
 * forced algorithms as the job-wide agreement carries them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CUnit/Basic.h>
#include "vcoll.h"
#include "coll/coll.h"
#include "coll/rules.h"
#include "coll/layout.h"
#include "core/config.h"
#include "tools/tune_pick.h"

static int parse(coll_rules_t *t, const char *text, char *err, size_t len)
{
    memset(t, 0, sizeof *t);
    err[0] = 0;
    return coll_rules_parse(t, text, strlen(text), "t.rules", 0, err, len);
}

/* the built-in table parses, contradicts itself nowhere, and every rule
   reads back as itself */
static void test_builtin(void)
{
    coll_rules_t t, u;
    char err[512], f[256];
    CU_ASSERT_EQUAL_FATAL(parse(&t, coll_rules_builtin, err, sizeof err), VC_SUCCESS);
    CU_ASSERT(t.n > 40);
    for (int k = 0; k < COLL_NKINDS; k++) {
        int last = -1;   /* each collective ends with a rule every call matches */
        for (int i = 0; i < t.n; i++)
            if (t.rule[i].kind == k)
                last = i;
        CU_ASSERT_FATAL(last >= 0);
        coll_rule_format(&t.rule[last], f, sizeof f);
        CU_ASSERT_PTR_NOT_NULL(strstr(f, " : "));
        CU_ASSERT_EQUAL(strchr(f, '='), NULL);
    }
    for (int i = 0; i < t.n; i++) {
        char g[256];
        coll_rule_format(&t.rule[i], f, sizeof f);
        CU_ASSERT_EQUAL_FATAL(parse(&u, f, err, sizeof err), VC_SUCCESS);
        CU_ASSERT_EQUAL(u.n, 1);
        coll_rule_format(&u.rule[0], g, sizeof g);
        CU_ASSERT_STRING_EQUAL(f, g);
        coll_rules_free(&u);
    }
    coll_rules_free(&t);
}

static void test_syntax(void)
{
    coll_rules_t t;
    char err[512], f[256];
    const char *ok =
        "# a comment line\n"
        "\n"
        "bcast ranks=4-16 bytes=1k-64K oversub=no : scatter_allgather  # trailing\n"
        "  allreduce   ppn=2-   nodes=-3 total=2m- pof2=yes commutative=yes :ring\n"
        "gather bytes=7 : linear\r\n";
    CU_ASSERT_EQUAL_FATAL(parse(&t, ok, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(t.n, 3);
    CU_ASSERT_EQUAL(t.rule[0].line, 3);
    CU_ASSERT_EQUAL(t.rule[0].bytes.lo, 1024);
    CU_ASSERT_EQUAL(t.rule[0].bytes.hi, 65536);
    CU_ASSERT_EQUAL(t.rule[0].oversub, 0);
    CU_ASSERT_EQUAL(t.rule[1].nodes.lo, 1);
    CU_ASSERT_EQUAL(t.rule[1].nodes.hi, 3);
    CU_ASSERT_EQUAL(t.rule[1].total.lo, 2u << 20);
    CU_ASSERT_EQUAL(t.rule[1].total.hi, UINT64_MAX);
    CU_ASSERT_STRING_EQUAL(t.rule[1].alg->name, "ring");
    coll_rule_format(&t.rule[1], f, sizeof f);
    CU_ASSERT_STRING_EQUAL(f, "allreduce ppn=2- nodes=1-3 total=2097152- pof2=yes "
                              "commutative=yes : ring");
    CU_ASSERT(t.digest != 0);
    /* pull: a size range like bytes, matched against the agreed one-copy
       size; a rule without it matches any */
    coll_rules_t tp;
    CU_ASSERT_EQUAL_FATAL(parse(&tp, "bcast bytes=4k- pull=8k- : scatter_allgather\n"
                                     "bcast : binomial\n", err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL(tp.rule[0].pull.lo, 8192);
    CU_ASSERT_EQUAL(tp.rule[0].pull.hi, UINT64_MAX);
    CU_ASSERT_EQUAL(tp.rule[1].pull.lo, 0);
    coll_rule_format(&tp.rule[0], f, sizeof f);
    CU_ASSERT_STRING_EQUAL(f, "bcast bytes=4096- pull=8192- : scatter_allgather");
    coll_query_t q = {.kind = COLL_BCAST, .form = FORM_BLOCKING, .ranks = 8, .ppn = 8,
                      .nodes = 1, .count = 1 << 16, .esize = 1, .bytes = 1 << 16};
    static const uint64_t pulls[] = {4097, 46u << 10, UINT64_MAX};
    for (int i = 0; i < 3; i++) {
        q.pull = pulls[i];
        const coll_rule_t *m = coll_rules_match(&tp, &q);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_STRING_EQUAL(m->alg->name, i ? "scatter_allgather" : "binomial");
    }
    coll_rules_free(&tp);
    coll_rules_t t2;
    CU_ASSERT_EQUAL(parse(&t2, ok, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL(t.digest, t2.digest);           /* same rules, same digest */
    coll_rules_free(&t2);
    CU_ASSERT_EQUAL(parse(&t2, "bcast bytes=1k-64k ranks=4-16 oversub=no : scatter_allgather\n",
                          err, sizeof err), VC_SUCCESS);
    CU_ASSERT(t.digest != t2.digest);
    coll_rules_free(&t2);
    coll_rules_free(&t);
}

/* every malformed line is refused with the file, the line and the reason,
   and leaves the table as it was */
static void test_errors(void)
{
    static const struct { const char *text, *want; } bad[] = {
        {"bcast ranks=2 binomial\n", "t.rules:1: no ':'"},
        {"\n\nbcst : binomial\n", "t.rules:3: unknown collective \"bcst\""},
        {"bcast size=2 : binomial\n", "\"size\" is not a condition"},
        {"bcast ranks=0 : binomial\n", "ranks=0 is not a number or range"},
        {"bcast bytes=5-2 : binomial\n", "bytes=5-2"},
        {"bcast bytes=x : binomial\n", "bytes=x"},
        {"bcast ranks=- : binomial\n", "ranks=-"},
        {"bcast bytes=1q : binomial\n", "bytes=1q"},
        {"bcast bytes=99999999999999999999 : binomial\n", "bytes=9999"},
        {"bcast bytes=17179869184g : binomial\n", "bytes=17179869184g"},
        {"bcast pull=big : binomial\n", "pull=big"},
        {"bcast oversub=maybe : binomial\n", "oversub=maybe: use yes or no"},
        {"bcast ranks=2 ranks=3 : binomial\n", "ranks given twice"},
        {"bcast : quick\n", "bcast has no algorithm \"quick\" (it has binomial|"},
        {"bcast : binomial ring\n", "one algorithm after ':', found 2"},
        {"bcast :\n", "no algorithm after ':'"},
        {" : binomial\n", "no collective before ':'"},
        {"bcast ranks=2- : binomial\nbcast ranks=4-8 bytes=8 : scatter_allgather\n",
         "t.rules:2: this rule never applies: line 1 (binomial)"},
        {"bcast : binomial\nbcast : binomial\n", "t.rules:2: this rule never applies"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        coll_rules_t t;
        int rc = parse(&t, bad[i].text, err, sizeof err);
        CU_ASSERT_EQUAL(rc, VC_ERR_ARG);
        CU_ASSERT_EQUAL(t.n, 0);
        if (!strstr(err, bad[i].want))
            printf("\n  \"%s\": got \"%s\", want \"%s\"", bad[i].text, err, bad[i].want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
        coll_rules_free(&t);
    }
    /* a line too long, a NUL byte: refused, not read past */
    char *big = malloc(4096);
    memset(big, 'a', 4095);
    big[4095] = 0;
    coll_rules_t t;
    CU_ASSERT_EQUAL(parse(&t, big, err, sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line longer than"));
    free(big);
    memset(&t, 0, sizeof t);
    CU_ASSERT_EQUAL(coll_rules_parse(&t, "bcast\0: binomial\n", 17, "t.rules", 0, err,
                                     sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "NUL"));
    /* an algorithm that may decline does not shadow what follows */
    CU_ASSERT_EQUAL(parse(&t, "allreduce : rabenseifner\nallreduce : recursive_doubling\n",
                          err, sizeof err), VC_SUCCESS);
    coll_rules_free(&t);
}

/* the first rule that holds and whose algorithm can serve the call */
static void test_match(void)
{
    coll_rules_t t;
    char err[512];
    int one[8] = {0};
    coll_layout_t L;
    CU_ASSERT_EQUAL_FATAL(coll_layout_build(&L, 8, one), VC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(parse(&t, "allreduce bytes=0-64 : linear\n"
                                    "allreduce ranks=8 : rabenseifner\n"
                                    "allreduce : ring\n"
                                    "allreduce : recursive_doubling\n", err, sizeof err),
                          VC_SUCCESS);
    coll_query_t q;
    coll_query_init(&q, COLL_ALLREDUCE, FORM_BLOCKING, &L, 16, 4, 16, 0, 0);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "linear");
    coll_query_init(&q, COLL_ALLREDUCE, FORM_BLOCKING, &L, 1024, 4, 1024, 0, 0);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "rabenseifner");
    /* fewer elements than ranks: Rabenseifner and the ring cannot split it */
    coll_query_init(&q, COLL_ALLREDUCE, FORM_BLOCKING, &L, 5, 16, 5, 0, 0);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "recursive_doubling");
    /* a non-commutative op skips what would reorder it */
    coll_query_init(&q, COLL_ALLREDUCE, FORM_BLOCKING, &L, 1024, 4, 1024, 1, 1);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "recursive_doubling");
    /* nothing for reduce in this table */
    coll_query_init(&q, COLL_REDUCE, FORM_BLOCKING, &L, 1024, 4, 1024, 0, 0);
    CU_ASSERT_PTR_NULL(coll_rules_match(&t, &q));
    coll_rules_free(&t);
    /* shared-memory algorithms serve blocking calls only */
    CU_ASSERT_EQUAL_FATAL(parse(&t, "bcast : shm\nbcast : binomial\n", err, sizeof err),
                          VC_SUCCESS);
    coll_query_init(&q, COLL_BCAST, FORM_BLOCKING, &L, 64, 1, 64, 0, 0);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "shm");
    q.no_shared = 1;
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "binomial");
    coll_query_init(&q, COLL_BCAST, FORM_NONBLOCKING, &L, 64, 1, 64, 0, 0);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "binomial");
    coll_rules_free(&t);
    /* ... and "flags" the non-blocking ones too, where it fits; the
       nonblocking key tells the forms apart (persistent is not) */
    CU_ASSERT_EQUAL_FATAL(parse(&t, "barrier nonblocking=yes : flags\n"
                                    "barrier nonblocking=no : linear\n"
                                    "barrier : dissemination\n", err, sizeof err),
                          VC_SUCCESS);
    coll_query_init(&q, COLL_BARRIER, FORM_NONBLOCKING, &L, 0, 1, 0, 0, 0);
    q.flags_ok = 1;
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "flags");
    q.flags_ok = 0;     /* not a world on one node: the schedule below */
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "dissemination");
    coll_query_init(&q, COLL_BARRIER, FORM_BLOCKING, &L, 0, 1, 0, 0, 0);
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "linear");
    coll_query_init(&q, COLL_BARRIER, FORM_PERSISTENT, &L, 0, 1, 0, 0, 0);
    q.flags_ok = 1;
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "linear");
    coll_rules_free(&t);
    /* a form "flags" cannot start (alltoallv) passes it over */
    CU_ASSERT_EQUAL_FATAL(parse(&t, "alltoallv nonblocking=yes : flags\n"
                                    "alltoallv : linear\n", err, sizeof err),
                          VC_SUCCESS);
    coll_query_init(&q, COLL_ALLTOALLV, FORM_NONBLOCKING, &L, 0, 1, 0, 0, 0);
    q.flags_ok = 1;
    CU_ASSERT_STRING_EQUAL(coll_rules_match(&t, &q)->alg->name, "linear");
    coll_rules_free(&t);
    coll_layout_free(&L);
}

static char dir[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* VCOLL_TUNE_FILE, then the default place, then the built-in rows; the
   file's rows come first and the built-in ones cover the rest */
static void test_load(void)
{
    char path[256], dflt[256], err[640];
    snprintf(dir, sizeof dir, "/tmp/vc_rules_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    setenv("XDG_CONFIG_HOME", dir, 1);
    snprintf(path, sizeof path, "%s/my.rules", dir);
    write_file(path, "bcast ranks=3 : scatter_allgather\n");

    CU_ASSERT_EQUAL(coll_rules_load(path, err, sizeof err), VC_SUCCESS);
    const coll_rules_t *t = coll_rules_in_force();
    CU_ASSERT_PTR_NOT_NULL(strstr(t->source, "my.rules"));
    CU_ASSERT_STRING_EQUAL(t->rule[0].alg->name, "scatter_allgather");
    CU_ASSERT_FALSE(t->rule[0].builtin);
    CU_ASSERT(t->rule[1].builtin);
    CU_ASSERT(coll_rules_digest() != 0);

    CU_ASSERT_EQUAL(coll_rules_load("builtin", err, sizeof err), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(coll_rules_source(), "built-in");
    CU_ASSERT_EQUAL(coll_rules_digest(), 0);

    /* asked for and missing, or malformed: refused, naming the file */
    snprintf(dflt, sizeof dflt, "%s/none.rules", dir);
    CU_ASSERT_EQUAL(coll_rules_load(dflt, err, sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "none.rules: cannot open"));
    write_file(path, "bcast ranks=3 : scatter_allgather\nreduce : fast\n");
    CU_ASSERT_EQUAL(coll_rules_load(path, err, sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "my.rules:2: reduce has no algorithm \"fast\""));
    CU_ASSERT_STRING_EQUAL(coll_rules_source(), "built-in");   /* what was in force stays */
    CU_ASSERT_EQUAL(coll_rules_load(dir, err, sizeof err), VC_ERR_ARG);   /* a directory */
    /* optional: ignored with a warning */
    char opt[300];
    snprintf(opt, sizeof opt, "optional:%s", path);
    CU_ASSERT_EQUAL(coll_rules_load(opt, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(coll_rules_source(), "built-in");

    /* the default place: nothing there is the built-in table; a file there
       is used, and refused when malformed */
    CU_ASSERT_EQUAL(coll_rules_load("", err, sizeof err), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(coll_rules_source(), "built-in");
    CU_ASSERT_EQUAL(coll_rules_default_path(0, dflt, sizeof dflt), 0);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/vcoll", dir);
    mkdir(sub, 0700);
    write_file(dflt, "barrier : linear\n");
    CU_ASSERT_EQUAL(coll_rules_load("", err, sizeof err), VC_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(strstr(coll_rules_source(), "vcoll/tune.rules"));
    write_file(dflt, "barrier linear\n");
    CU_ASSERT_EQUAL(coll_rules_load("", err, sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "tune.rules:1: no ':'"));
    unlink(dflt);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
    coll_rules_unload();
}

static const char *fake_alg;
static const char *fake_env(const char *name)
{
    if (!strcmp(name, "VCOLL_BCAST_ALG"))
        return fake_alg;
    if (!strcmp(name, "VCOLL_ALLREDUCE_ALG"))
        return "Ring";
    if (!strcmp(name, "VCOLL_TUNE_FILE"))
        return "builtin";
    return NULL;
}

/* VCOLL_<COLL>_ALG: checked against the registry, and carried job-wide
   as one value that reads back by name */
static void test_forced(void)
{
    vc_config_t cfg;
    char err[640], shown[256];
    fake_alg = "no way";
    CU_ASSERT_EQUAL(cfg_parse(&cfg, fake_env, err, sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "VCOLL_BCAST_ALG"));
    fake_alg = "quick";
    CU_ASSERT_EQUAL_FATAL(cfg_parse(&cfg, fake_env, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_EQUAL(coll_setup(&cfg, err, sizeof err), VC_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "VCOLL_BCAST_ALG=\"quick\" is not valid; use one of "
                                       "auto|binomial|scatter_allgather"));
    fake_alg = "scatter_allgather";
    CU_ASSERT_EQUAL_FATAL(cfg_parse(&cfg, fake_env, err, sizeof err), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(cfg.coll_alg[COLL_ALLREDUCE], "ring");
    CU_ASSERT_EQUAL(coll_setup(&cfg, err, sizeof err), VC_SUCCESS);
    int64_t v = coll_forced_pack(&cfg);
    coll_forced_show(v, shown, sizeof shown);
    CU_ASSERT_STRING_EQUAL(shown, "bcast=scatter_allgather,allreduce=ring");
    coll_forced_show(0, shown, sizeof shown);
    CU_ASSERT_STRING_EQUAL(shown, "auto everywhere");
    strcpy(cfg.coll_alg[COLL_ALLREDUCE], "linear");
    CU_ASSERT(coll_forced_pack(&cfg) != v);
    coll_teardown();
    /* the public listing */
    const char *name;
    CU_ASSERT_EQUAL(vc_coll_alg_name("allreduce", 0, &name), VC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(name, "recursive_doubling");
    CU_ASSERT_EQUAL(vc_coll_alg_name("allreduce", 99, &name), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_coll_alg_name("allreduc", 0, &name), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_coll_alg_name(NULL, 0, &name), VC_ERR_ARG);
    CU_ASSERT_EQUAL(vc_coll_set_alg(VC_COMM_WORLD, "bcast", "binomial"),
                    VC_ERR_NOT_INITIALIZED);
}

/* vcoll_tune's choice at one size: the table's choice stays unless another
   is ahead by the keep factor in the median and in every round */
static void test_tune_pick(void)
{
    tune_cand_t c[3] = {{1, 100, 102, 104}, {1, 90, 92, 94}, {0, 0, 0, 0}};
    /* 1 leads by 11 % and in every round: it wins over the table's 0 */
    CU_ASSERT_EQUAL(tune_pick(c, 3, 0, -1, 1.05), 1);
    /* within the keep factor: the table's 0 stays */
    CU_ASSERT_EQUAL(tune_pick(c, 3, 0, -1, 1.2), 0);
    /* ahead by 9 % in the median but one round slower than the table's
       fastest (session 28: allreduce 1 MiB went to hier that way) */
    c[1] = (tune_cand_t){1, 80, 92, 101};
    CU_ASSERT_EQUAL(tune_pick(c, 3, 0, -1, 1.05), 0);
    /* no table choice among the candidates: the fastest median */
    CU_ASSERT_EQUAL(tune_pick(c, 3, -1, -1, 1.05), 1);
    /* the smaller size's winner stays within 3 % */
    c[0] = (tune_cand_t){1, 90, 94, 95};
    CU_ASSERT_EQUAL(tune_pick(c, 3, -1, 0, 1.05), 0);
    CU_ASSERT_EQUAL(tune_pick(c, 3, 2, 0, 1.05), 0);      /* 2 cannot serve */
    /* nothing measured: the previous winner, or none */
    tune_cand_t none[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    CU_ASSERT_EQUAL(tune_pick(none, 2, -1, 1, 1.05), 1);
    CU_ASSERT_EQUAL(tune_pick(none, 2, -1, -1, 1.05), -1);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rules", NULL, NULL);
    CU_add_test(s, "the built-in table", test_builtin);
    CU_add_test(s, "syntax", test_syntax);
    CU_add_test(s, "errors name file, line and reason", test_errors);
    CU_add_test(s, "first usable rule wins", test_match);
    CU_add_test(s, "the table in force and its precedence", test_load);
    CU_add_test(s, "forced algorithms", test_forced);
    CU_add_test(s, "vcoll_tune keeps the table unless clearly beaten", test_tune_pick);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
