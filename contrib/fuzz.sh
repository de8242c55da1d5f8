#!/bin/bash
# fuzz.sh -- build the libFuzzer harnesses (clang, ASan+UBSan) and run each
# for a while on its seed corpus (test/fuzz/corpus/<name>). New inputs go
# to a scratch directory; crashes stop the run and are kept in it.
#   contrib/fuzz.sh [-t SECONDS_PER_HARNESS] [-r RUNS] [builddir]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
secs=30 runs=-1
while getopts t:r: o; do
    case $o in t) secs=$OPTARG ;; r) runs=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
build=${1:-$top/_build-fuzz}
command -v clang >/dev/null || { echo "fuzz.sh: clang is needed (apt-get install clang)" >&2; exit 2; }
mkdir -p "$build" && cd "$build"
[ -f Makefile ] || "$top/configure" -q CC=clang --enable-fuzzers
# the harnesses and the library they link, not the whole tree (tools,
# benchmarks and drop-ins are not fuzzed, and clang+ASan builds are slow)
make -j2 test/fuzz/fuzz_p2p test/fuzz/fuzz_ud test/fuzz/fuzz_ud_ooo test/fuzz/fuzz_rules \
    test/fuzz/fuzz_a2av_hdr test/fuzz/fuzz_shm_ring >/dev/null
rc=0
for h in test/fuzz/fuzz_*; do
    [ -x "$h" ] || continue
    name=${h##*/fuzz_}
    work=$(mktemp -d /tmp/vcoll-fuzz-$name.XXXXXX)
    echo "== fuzz_$name: ${secs}s"
    if ! "$h" -max_total_time="$secs" -runs="$runs" -print_final_stats=1 \
            -artifact_prefix="$work/" "$work" "$top/test/fuzz/corpus/$name" 2>"$work/log"; then
        echo "fuzz_$name FAILED; input and log in $work"; tail -40 "$work/log"; rc=1
        continue
    fi
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/log" || true
    rm -rf "$work"
done
exit $rc
