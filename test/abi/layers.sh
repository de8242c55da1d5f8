#!/bin/bash
# layers.sh -- hold the code to the layer order of doc/architecture.md.
#
# For every layer (a folder of src/), what it uses from the others:
#  - symbols: `nm -u` of its objects, resolved to the layer whose objects
#    define them (`nm --defined-only`);
#  - headers: its #include "..." lines (headers carry struct layouts and
#    macros that nm cannot see).
# Each use must be allowed by the "may use" column of the table in
# doc/architecture.md, or be listed in test/abi/layers.debt: known debt,
# each line to be paid off (#24). A debt line that no longer matches any
# use fails the check too, so the list only shrinks.
#
#   test/abi/layers.sh [BUILD_DIR [SRC_DIR]]     (make check passes both)
#   LAYERS_NO_DEBT=1 test/abi/layers.sh ...       every use against the table alone
set -u
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-${top_srcdir:-$(dirname "$0")/../..}}" && pwd)
NM=${NM:-nm}
doc=$src/doc/architecture.md
debt=$src/test/abi/layers.debt
command -v ${NM%% *} >/dev/null || { echo "layers.sh: nm (binutils) not found"; exit 77; }
[ -r "$doc" ] || { echo "layers.sh: $doc missing"; exit 1; }

# layer of a path below src/ (net/verbs and net/shm are layers of their
# own), in awk: the script runs every path through it in one process, since
# a fork per line cost most of a minute on a box with slow process creation
layer_awk='
function layer_of(p) {
    if (p ~ /^core\/ctx\.[cho]$/) return "ctx"   # the context: handles of every layer
    if (p ~ /^net\/verbs\//) return "net/verbs"
    if (p ~ /^net\/shm\//) return "net/shm"
    if (p ~ /\//) { sub(/\/.*/, "", p); return p }
    return "public"                              # vcoll.h and friends: the public contract
}
function rel_of(o) { sub(/^src\//, "", o); sub(/\.libs\//, "", o); return o }
function base(p) { sub(/.*\//, "", p); return p }'

# the table: "| layer | may use |" rows between the two marker comments
declare -A may
while IFS='|' read -r _ l u _; do
    l=$(echo $l | tr -d '`') u=$(echo $u)
    [ -n "$l" ] && may[$l]=" $(echo "$u" | tr -d '`' | tr ',' ' ') public "
done < <(sed -n '/<!-- layers:begin -->/,/<!-- layers:end -->/p' "$doc" | grep '^| `')
[ ${#may[@]} -gt 3 ] || { echo "layers.sh: no layer table in $doc"; exit 1; }

allowed() {   # from to
    [ "$1" = "$2" ] && return 0
    [[ ${may[$1]:-} == *" $2 "* ]]
}

uses=$(mktemp)
trap 'rm -f "$uses"' EXIT

# ---- symbols: one nm over every object for the definitions, one for the
# undefined references ("file:addr T sym" and "file:   U sym" with -A)
objs=$(cd "$build" && find src -path '*/.libs/*.o' | sort)
[ -n "$objs" ] || { echo "layers.sh: no objects under $build/src (build first)"; exit 1; }
# the exported API (src/vcoll.map): what mpi/ and tools/ may call
public=$(sed -n 's/^[[:space:]]*\(vc_[A-Za-z0-9_]*\);.*/\1/p' "$src/src/vcoll.map" | tr '\n' ' ')
{
    (cd "$build" && $NM -A --defined-only -g $objs 2>/dev/null) | sed 's/^/D /'
    (cd "$build" && $NM -A -u $objs 2>/dev/null) | sed 's/^/U /'
} | awk -v pub=" $public " "$layer_awk"'
    { f = $2; sub(/:.*/, "", f); l = layer_of(rel_of(f)) }
    $1 == "D" && NF == 4 { if (!($4 in def)) def[$4] = l; next }
    $1 == "U" {
        s = $NF; k = f SUBSEP s
        if (!(s in def) || def[s] == l || k in seen) next
        seen[k] = 1
        if ((l == "mpi" || l == "tools") && index(pub, " " s " ")) next
        print l, def[s], "sym", s, base(rel_of(f))
    }' >> "$uses"

# ---- headers: #include "dir/x.h" or "../dir/x.h" that leaves the folder
(cd "$src/src" && grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' --include='*.c' --include='*.h' .) |
awk "$layer_awk"'
    function norm(p,   n, i, k, seg, out) {   # resolve . and .. (realpath -m)
        n = split(p, seg, "/"); k = 0
        for (i = 1; i <= n; i++) {
            if (seg[i] == "" || seg[i] == ".") continue
            if (seg[i] == "..") { if (k > 0) k--; continue }
            out[++k] = seg[i]
        }
        p = ""
        for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
        return p
    }
    {
        file = $0; sub(/:.*/, "", file); sub(/^\.\//, "", file)
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
        l = layer_of(file)
        if (inc ~ /^\.\.\//) { d = file; sub(/\/?[^\/]*$/, "", d); p = norm(d "/" inc) }
        else if (inc ~ /\//) p = inc
        else next                       # same folder, or the public vcoll.h
        t = layer_of(p)
        if (t != l) print l, t, "inc", p, base(file)
    }' >> "$uses"

# ---- judge
bad=0
declare -A owed=()     # set, even when empty (set -u)
if [ -z "${LAYERS_NO_DEBT:-}" ] && [ -r "$debt" ]; then
    while read -r f arrow t what file _; do
        [[ -z $f || $f == \#* ]] && continue
        owed["$f $t $what $file"]=0
    done < "$debt"
fi
while read -r l t kind what file; do
    [ -z "$l" ] && continue
    [ "$l" = tools ] && continue            # tools may read internals (introspection)
    # ending the job is the lifecycle's and the API's decision alone
    if [ "$kind" = sym ] && [ "$what" = boot_abort ] && [ "$l" != lifecycle ] && [ "$l" != api ]; then
        :
    elif allowed "$l" "$t"; then
        continue
    fi
    if [ -n "${owed["$l $t $what $file"]+x}" ]; then
        owed["$l $t $what $file"]=1
        continue
    fi
    echo "layers: $l uses $t: $([ $kind = sym ] && echo "symbol $what" || echo "header $what") (in $file)"
    bad=$((bad + 1))
done < <(sort -u "$uses")
for k in "${!owed[@]}"; do
    if [ "${owed[$k]}" = 0 ]; then
        echo "layers: debt paid, remove from test/abi/layers.debt: ${k/ / -> }"
        bad=$((bad + 1))
    fi
done
n=$(wc -l < "$uses")
if [ $bad -gt 0 ]; then
    echo "layers: $bad use(s) against doc/architecture.md (of $n cross-layer uses)"
    exit 1
fi
echo "layers: $n cross-layer uses, all allowed by doc/architecture.md (${#owed[@]} listed as debt)"
