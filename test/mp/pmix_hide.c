/*
 * pmix_hide.c -- LD_PRELOAD fault injection for test/mp/pmix-keys.sh: the
 * real launcher and the real PMIx server run, but PMIx_Get answers "not
 * found" for the keys listed (comma-separated) in VC_TEST_PMIX_HIDE, as a
 * launcher that leaves them out would, and a byte object one byte short
 * for the keys in VC_TEST_PMIX_SHORT, as a rank of another vcoll version
 * would publish it. Everything else goes to libpmix.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pmix.h>
#include <stdlib.h>
#include <string.h>

typedef pmix_status_t get_fn(const pmix_proc_t *, const char[], const pmix_info_t[],
                             size_t, pmix_value_t **);

static int listed(const char *var, const char *key)
{
    const char *list = getenv(var);
    size_t klen = strlen(key);
    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (len == klen && !strncmp(list, key, len))
            return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val)
{
    if (key && listed("VC_TEST_PMIX_HIDE", key))
        return PMIX_ERR_NOT_FOUND;
    get_fn *real = (get_fn *)dlsym(RTLD_NEXT, "PMIx_Get");
    pmix_status_t rc = real ? real(proc, key, info, ninfo, val) : PMIX_ERR_NOT_SUPPORTED;
    if (rc == PMIX_SUCCESS && key && *val && (*val)->type == PMIX_BYTE_OBJECT &&
        (*val)->data.bo.size > 0 && listed("VC_TEST_PMIX_SHORT", key))
        (*val)->data.bo.size--;
    return rc;
}
