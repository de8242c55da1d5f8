#!/bin/sh
# check-osu.sh -- every OSU-style benchmark runs on 2 ranks over a small size
# range and prints a well-formed table: the header names the library, test
# (and for vcoll the transport), "# Size" comes next, then exactly one row per
# expected size, each with positive numbers (with -f: min <= avg <= max and
# the iteration count asked for).
#
# Run by `make check` from the top build directory (builddir may point
# elsewhere). The MPI builds of the same sources are checked too when they
# were built, so a parsing or method problem shows up on both sides.
set -u

builddir=${builddir:-.}
osudir=$builddir/src/tools/osu
MPIRUN=${MPIRUN:-mpirun.openmpi}
NP=2
ITERS=20
# neighbor_alltoall runs on a 2x1 periodic grid here (both neighbours in a
# dimension are the one other rank, or oneself)
BENCHES="latency bw bibw bcast reduce allreduce allgather gather alltoall neighbor_alltoall barrier"

if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "SKIP: $MPIRUN not found (apt-get install openmpi-bin)"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-osu.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0

# Sizes a run of `-m 1:1024` must print for one benchmark and its options:
# reductions start at one element (MPI_CHAR unless -T says a 4-byte type).
expected_sizes() {
    case $1:$2 in
    barrier:*) echo 0 ;;
    reduce:*mpi_float* | allreduce:*mpi_float* | reduce:*mpi_int* | allreduce:*mpi_int*)
        echo 4 8 16 32 64 128 256 512 1024 ;;
    *) echo 1 2 4 8 16 32 64 128 256 512 1024 ;;
    esac
}

# check_table FILE BENCH FULL LIB SIZES: 0 if the table is well formed.
check_table() {
    awk -v bench="osu_$2" -v full="$3" -v lib="$4" -v want="$5" \
        -v iters="$ITERS" '
    function bad(msg) { printf "  bad table: %s (line %d: %s)\n", msg, NR, $0; err = 1; exit 1 }
    NR == 1 {
        if ($0 !~ /^# / || index($0, bench) == 0) bad("first line must name " bench)
        if (lib == "vcoll" && ($0 !~ /^# vcoll [0-9]+\.[0-9]+\.[0-9]+/ || $0 !~ /transport: [a-z]+/))
            bad("vcoll header must carry version and transport")
        next
    }
    /^# Size/ { sizehdr = 1; next }
    /^#/ { if (sizehdr) bad("comment after the column header"); next }
    {
        if (!sizehdr) bad("row before the # Size header")
        n = split(want, w, " ")
        rows++
        if (rows > n) bad("more rows than sizes")
        if ($1 != w[rows]) bad("size " $1 " where " w[rows] " was expected")
        cols = full ? 5 : 2
        if (NF != cols) bad("expected " cols " columns")
        for (i = 2; i <= (full ? 4 : 2); i++)
            # a bandwidth of 1-byte messages on a loaded box can round to
            # 0.00 MB/s at two decimals (seen in CI for both MPIs): only the
            # row of the largest size must be positive, every row a number
            if ($i !~ /^[0-9]+(\.[0-9]+)?$/ || ($i + 0 <= 0 && rows == n))
                bad("column " i " is not a positive number")
        if (full && !($3 + 0 <= $2 + 0 && $2 + 0 <= $4 + 0)) bad("need min <= avg <= max")
        if (full && $5 != iters) bad("iterations column is not " iters)
    }
    END {
        if (err) exit 1
        if (!sizehdr) { print "  bad table: no # Size header"; exit 1 }
        if (rows != split(want, w, " ")) { printf "  bad table: %d rows, want %d\n", rows, split(want, w, " "); exit 1 }
    }' "$1"
}

# run_one LIB PROGRAM BENCH [extra options]
run_one() {
    lib=$1 prog=$2 bench=$3
    shift 3
    full=0
    case " $* " in *" -f "*) full=1 ;; esac
    out=$tmp/$lib-$bench-$full.out
    err=$tmp/$lib-$bench-$full.err
    if [ "$lib" = mpich ]; then
        timeout -k 10 120 mpiexec.hydra -n $NP "$prog" -m 1:1024 -i $ITERS -x 2 "$@" >"$out" 2>"$err"
    else
        timeout -k 10 120 "$MPIRUN" --allow-run-as-root --oversubscribe --mca oob_tcp_if_include lo \
            -np $NP "$prog" -m 1:1024 -i $ITERS -x 2 "$@" >"$out" 2>"$err"
    fi
    rc=$?
    what="$lib osu_$bench${1:+ $*}"
    if [ $rc -eq 3 ]; then
        echo "FAIL: $what: the library says it is not implemented:"
        sed 's/^/  /' "$err" | head -5
        fail=$((fail + 1))
    elif [ $rc -ne 0 ]; then
        echo "FAIL: $what: exit status $rc"
        sed 's/^/  /' "$err" | head -20
        fail=$((fail + 1))
    elif ! why=$(check_table "$out" "$bench" $full "$lib" "$(expected_sizes "$bench" "$*")"); then
        echo "FAIL: $what: output does not parse:"
        echo "$why"
        sed 's/^/  | /' "$out"
        fail=$((fail + 1))
    else
        echo "PASS: $what ($(grep -vc '^#' "$out") rows)"
        pass=$((pass + 1))
    fi
}

for b in $BENCHES; do
    prog=$osudir/vcoll_osu_$b
    if [ ! -x "$prog" ]; then
        echo "FAIL: vcoll osu_$b: $prog was not built"
        fail=$((fail + 1))
        continue
    fi
    # -h exits before any communication: lets a libtool wrapper finish any
    # first-run work before two ranks start it at once
    "$prog" -h >/dev/null 2>&1
    run_one vcoll "$prog" "$b"
done
for b in allreduce barrier; do
    [ -x "$osudir/vcoll_osu_$b" ] && run_one vcoll "$osudir/vcoll_osu_$b" "$b" -f
done
for b in allreduce reduce; do
    [ -x "$osudir/vcoll_osu_$b" ] && run_one vcoll "$osudir/vcoll_osu_$b" "$b" -T mpi_float
done
# the persistent allreduce (start + wait timed per iteration): the same table
if [ -x "$osudir/vcoll_osu_allreduce_persistent" ]; then
    run_one vcoll "$osudir/vcoll_osu_allreduce_persistent" allreduce_persistent
    run_one vcoll "$osudir/vcoll_osu_allreduce_persistent" allreduce_persistent -f
else
    echo "FAIL: vcoll osu_allreduce_persistent was not built"; fail=$((fail + 1))
fi

# -t multiple: the same tables, with the granted level in the header
for b in latency allreduce; do
    [ -x "$osudir/vcoll_osu_$b" ] || continue
    run_one vcoll "$osudir/vcoll_osu_$b" "$b" -t multiple
    if ! grep -q '^# Thread level: multiple granted (multiple asked)' "$tmp/vcoll-$b-0.out"; then
        echo "FAIL: vcoll osu_$b -t multiple: header does not say multiple was granted"
        fail=$((fail + 1))
    fi
done
if [ -x "$osudir/vcoll_osu_latency" ]; then
    if "$osudir/vcoll_osu_latency" -t bogus >"$tmp/badt.out" 2>"$tmp/badt.err" ||
       ! grep -q "invalid option or value" "$tmp/badt.err" || [ -s "$tmp/badt.out" ]; then
        echo "FAIL: vcoll osu_latency -t bogus: not refused with a message"; fail=$((fail + 1))
    else
        echo "PASS: vcoll osu_latency refuses -t bogus"; pass=$((pass + 1))
    fi
fi

# a bad -T, or -T on a benchmark without reductions, is refused before any
# communication: exit 1 and a message, no table
for b in reduce latency; do
    if [ -x "$osudir/vcoll_osu_$b" ]; then
        if "$osudir/vcoll_osu_$b" -T mpi_bogus >"$tmp/badT.out" 2>"$tmp/badT.err"; then
            echo "FAIL: vcoll osu_$b -T mpi_bogus was accepted"; fail=$((fail + 1))
        elif ! grep -q "invalid option or value" "$tmp/badT.err" || [ -s "$tmp/badT.out" ]; then
            echo "FAIL: vcoll osu_$b -T mpi_bogus: no clear message, or a table anyway"
            sed 's/^/  /' "$tmp/badT.err" | head -3; fail=$((fail + 1))
        else
            echo "PASS: vcoll osu_$b refuses -T mpi_bogus"; pass=$((pass + 1))
        fi
    fi
done

for mpi in openmpi mpich; do
    [ -x "$osudir/$mpi/mpi_osu_latency" ] || continue
    if [ $mpi = mpich ] && ! command -v mpiexec.hydra >/dev/null 2>&1; then
        echo "note: MPICH builds present but no mpiexec.hydra; not run"
        continue
    fi
    for b in $BENCHES; do
        run_one "$mpi" "$osudir/$mpi/mpi_osu_$b" "$b"
    done
    run_one "$mpi" "$osudir/$mpi/mpi_osu_allreduce" allreduce -f
    run_one "$mpi" "$osudir/$mpi/mpi_osu_allreduce" allreduce -T mpi_int
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
