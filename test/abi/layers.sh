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

# layer of a path below src/ (net/verbs and net/shm are layers of their own)
layer_of() {
    case $1 in
    core/ctx.[ch]|core/ctx.o) echo ctx ;;   # the context: handles of every layer
    net/verbs/*) echo net/verbs ;;
    net/shm/*) echo net/shm ;;
    */*) echo "${1%%/*}" ;;
    *) echo public ;;       # vcoll.h and friends: the public contract
    esac
}

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
trap 'rm -f "$uses" "$uses.def"' EXIT

# ---- symbols
objs=$(cd "$build" && find src -path '*/.libs/*.o' | sort)
[ -n "$objs" ] || { echo "layers.sh: no objects under $build/src (build first)"; exit 1; }
for o in $objs; do
    rel=${o#src/}; rel=${rel/.libs\//}
    l=$(layer_of "$rel")
    $NM --defined-only -g "$build/$o" 2>/dev/null | awk -v l="$l" 'NF == 3 {print $3, l}'
done | sort -u -k1,1 > "$uses.def"
# the exported API (src/vcoll.map): what mpi/ and tools/ may call
public=$(sed -n 's/^[[:space:]]*\(vc_[A-Za-z0-9_]*\);.*/\1/p' "$src/src/vcoll.map" | tr '\n' ' ')
for o in $objs; do
    rel=${o#src/}; rel=${rel/.libs\//}
    l=$(layer_of "$rel")
    $NM -u "$build/$o" 2>/dev/null | awk '{print $NF}' | sort -u |
        join - "$uses.def" |
        awk -v l="$l" -v f="${rel##*/}" -v pub=" $public " '
            $2 == l { next }
            (l == "mpi" || l == "tools") && index(pub, " " $1 " ") { next }
            { print l, $2, "sym", $1, f }'
done >> "$uses"

# ---- headers
(cd "$src/src" && grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' --include='*.c' --include='*.h' .) |
while IFS= read -r line; do
    file=${line%%:*}; file=${file#./}
    inc=$(echo "$line" | sed 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
    l=$(layer_of "$file")
    case $inc in
    ../*) p=$(cd "$src/src/$(dirname "$file")" && realpath -m --relative-to="$src/src" "$inc") ;;
    */*) p=$inc ;;
    *) continue ;;          # same folder, or the public vcoll.h
    esac
    t=$(layer_of "$p")
    [ "$t" != "$l" ] && echo "$l $t inc $p ${file##*/}"
done >> "$uses"

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
