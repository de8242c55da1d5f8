#!/bin/bash
# make check: libvcoll.so exports exactly the API of include/vcoll.h.
# The names the header declares (functions, and the data objects its macros
# refer to, such as vc_comm_world_obj) are compared with the dynamic symbols
# the built library defines, in both directions: an internal function that
# leaks out becomes ABI we never meant to promise, and a declared function
# that is not exported is a link error in every application that calls it.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
header=$top_srcdir/include/vcoll.h
lib=${VC_SHARED_LIB:-./.libs/libvcoll.so}
if [ ! -f "$lib" ]; then
    echo "SKIP: $lib not built (configured with --disable-shared?)"
    exit 77
fi

# Declarations, read through the preprocessor so comments, macros and the
# C++ guard are gone: one declaration per ';', typedefs dropped (vc_user_fn
# is a function type, not a function). A declaration "T name(...)" gives a
# function; "extern T name" gives a data object.
declared() {
    ${CC:-cc} -E -P "$header" | tr '\n' ' ' | tr ';' '\n' | awk '
        /^[ \t]*typedef/ { next }
        {
            if (match($0, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
                name = substr($0, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
                print name
            } else if ($1 == "extern") {
                print $NF
            }
        }' | grep '^vc_' | sort -u
}
# Dynamic symbols the library defines, whatever their type (functions T,
# data B/D, anything else that would leak), minus version-node markers.
exported() {
    ${NM:-nm} -D --defined-only "$lib" | awk 'NF >= 3 && $2 != "A" { print $3 }' |
        sed 's/@.*//' | sort -u
}

decl=$(declared) || exit 1
expo=$(exported) || exit 1
ndecl=$(echo "$decl" | grep -c .)
if [ "$ndecl" -lt 50 ]; then   # the parser, not the library, would be wrong
    echo "FAIL: only $ndecl names parsed from $header"; exit 1
fi
extra=$(comm -13 <(echo "$decl") <(echo "$expo"))
missing=$(comm -23 <(echo "$decl") <(echo "$expo"))
fail=0
if [ -n "$extra" ]; then
    echo "FAIL: exported by $lib but not declared in vcoll.h:"; echo "$extra" | sed 's/^/    /'
    fail=1
fi
if [ -n "$missing" ]; then
    echo "FAIL: declared in vcoll.h but not exported by $lib:"; echo "$missing" | sed 's/^/    /'
    fail=1
fi
echo "$ndecl names declared, $(echo "$expo" | grep -c .) exported"
[ $fail -eq 0 ] && echo "PASS: the exports are exactly the API"
exit $fail
