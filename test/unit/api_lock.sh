#!/bin/sh
# api_lock.sh -- every public call that touches library state must start
# with VC_API_ENTER() (src/api/api.h), or VC_THREAD_MULTIPLE programs race
# in it. Fails naming each function defined in src/ whose body does not.
#
# Public = declared in include/vcoll.h (no internal function is named vc_*:
# the layers below the API carry their own prefixes).
#
# Left without the lock, on purpose:
#   vc_strerror, vc_version_string  constant strings
#   vc_wtime                         reads the clock
#   vc_dtype_size, vc_dtype_opaque   a fixed table / arithmetic (no state)
#   vc_coll_alg_name                 the constant algorithm registry
#   vc_initialized                   MPI allows it from any thread at any time;
#                                    reads the flag atomically instead
#   vc_abort                         must end the job even while another thread
#                                    holds the lock (e.g. in a PMIx fence)
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
header=$srcdir/include/vcoll.h
unlocked=" vc_strerror vc_version_string vc_wtime vc_dtype_size vc_dtype_opaque vc_coll_alg_name vc_initialized vc_abort "

public=$(grep -v '^[[:space:]]*typedef' "$header" |
         grep -o '[A-Za-z_*][[:space:]*]*vc_[a-z0-9_]*[[:space:]]*(' |
         grep -o 'vc_[a-z0-9_]*' | sort -u)
[ -n "$public" ] || { echo "api_lock.sh: no declarations found in $header" >&2; exit 1; }

# "name file verdict" for every non-static vc_* definition: verdict is the
# first statement of the body, reduced to ENTER or OTHER
defs=$(find "$srcdir/src" -name '*.c' | sort | xargs awk '
    FNR == 1 { state = 0 }
    state == 0 && /^[A-Za-z]/ && !/^(static|typedef|extern)/ &&
        /(^|[^A-Za-z0-9_])vc_[a-z0-9_]+\(/ && !/;[[:space:]]*$/ {
        match($0, /vc_[a-z0-9_]+\(/)
        name = substr($0, RSTART, RLENGTH - 1)
        state = 1
    }
    state == 1 {
        if ($0 ~ /\{[[:space:]]*$/) { state = 2; next }
        if ($0 ~ /;[[:space:]]*$/) state = 0
        next
    }
    state == 2 {
        if ($0 ~ /^[[:space:]]*$/) next
        print name, FILENAME, ($0 ~ /^[[:space:]]*VC_API_ENTER\(\);/ ? "ENTER" : "OTHER")
        state = 0
    }')

checked=0 missing=0 stray=0
for f in $public; do
    lines=$(printf '%s\n' "$defs" | awk -v n="$f" '$1 == n')
    [ -n "$lines" ] || continue          # declared, not (yet) defined
    case $unlocked in
    *" $f "*)
        # a pure call that took the lock would be harmless but means the
        # list above is out of date
        if printf '%s\n' "$lines" | grep -q ' ENTER$'; then
            echo "api_lock.sh: $f is listed as lock-free but starts with VC_API_ENTER(); update the list"
            stray=$((stray + 1))
        fi
        continue ;;
    esac
    checked=$((checked + 1))
    printf '%s\n' "$lines" | while read -r name file verdict; do
        [ "$verdict" = ENTER ] || echo "MISSING VC_API_ENTER(): $name (${file#"$srcdir"/})"
    done
    if printf '%s\n' "$lines" | grep -q ' OTHER$'; then
        missing=$((missing + 1))
    fi
done

[ "$checked" -gt 0 ] || { echo "api_lock.sh: found no public definitions under $srcdir/src" >&2; exit 1; }
if [ $missing -gt 0 ] || [ $stray -gt 0 ]; then
    echo "api_lock.sh: $missing public function(s) do not start with VC_API_ENTER();" \
         "put it first in each (see src/core/ctx.h)"
    exit 1
fi
echo "api_lock.sh: all $checked public functions that touch library state start with VC_API_ENTER()"
exit 0
