# osu-common.sh -- what contrib/compare.sh and contrib/compare-dropin.sh
# share; sourced, not run.

# awk: median of the values v[k, 1..n[k]] (lo[k], hi[k]: their extremes).
# Prepend to an awk program: awk "$OSU_AWK_MEDIAN"'...'
OSU_AWK_MEDIAN='
function median(k,    i, j, m, t, a) {
    m = n[k]
    for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    lo[k] = a[1]; hi[k] = a[m]
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}'

# osu_run OUT TIMEOUT LAUNCHER-FUNCTION ARGS...: one benchmark run, stdout in
# OUT and stderr in OUT.err (copied to $keep when set); says "ok" or why it
# failed on stderr, counts failures in $failed and returns the exit code.
osu_run() {
    local out=$1 tmo=$2 rc why
    shift 2
    "$@" >"$out" 2>"$out.err"
    rc=$?
    [ -n "${keep:-}" ] && cp "$out" "$out.err" "$keep/"
    if [ $rc -eq 0 ]; then
        echo ok >&2
        return 0
    fi
    why=$(grep -m1 -i 'not implemented\|error\|fail\|abort' "$out.err")
    [ $rc -eq 124 ] && why="timed out after ${tmo}s"
    echo "FAILED (exit $rc${why:+: $why})" >&2
    failed=$((failed + 1))
    return $rc
}
