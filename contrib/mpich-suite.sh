#!/bin/bash
# mpich-suite.sh -- MPICH's own test suite (test/mpi of a pmodels/mpich
# checkout), built outside this tree with the chosen MPI's compilers, run
# twice per test list entry: plain and with the drop-in preloaded. The MPI
# standard is the drop-in's specification, so what counts is the
# difference: an entry that passes plain and fails (or hangs) preloaded is
# the drop-in's bug. An entry that fails plain too (a test newer than the
# MPI, an MPI bug, a hang of an oversubscribed busy-polling MPI) is listed,
# not counted against the drop-in.
#
# Nothing of MPICH is copied into vcoll: point -S at a checkout (or a
# `git archive` of one holding test/mpi, confdb and maint/version.m4).
set -u

usage() {
    cat <<EOF
Usage: $0 -S MPICH_SRC [options]
  -S DIR        a pmodels/mpich source tree (test/mpi, confdb, maint/version.m4)
  -M MPI        openmpi (default) or mpich: compilers, launcher and drop-in
  -D LIB        the drop-in (default: BUILD/.libs/libvcoll_mpi_MPI.so)
  -B DIR        vcoll build tree for the default -D (default: .)
  -w DIR        work directory: the suite's configured build (default
                ./mpich-suite-MPI); kept between runs, configured once
  -d LIST       test directories, comma separated (default:
                $default_dirs)
  -f REGEX      only the entries whose "DIR/name ranks args" matches
                (e.g. '^coll/allred ')
  -n MAX        skip entries with more ranks than MAX (default 10)
  -t SECONDS    timeout of one entry (default 60; an entry's own timeLimit
                if larger; entries whose own timeLimit passes 120 s, or -t
                if larger, are skipped)
  -o FILE       the per-entry results (default mpich-suite-MPI.txt)
  -s            the suite configured with its dynamic-process tests
                (spawn, f77/spawn, f08/spawn: a work directory of their
                own); Open MPI then also gets its TCP component, which
                joins a parent job and its children
  -h            this help
Exit status: 0 when no entry passes plain and fails preloaded, 1 when one
does, 2 when the suite could not be set up or run.
EOF
}

die() { echo "$0: $*" >&2; exit 2; }
default_dirs="coll,topo,comm,pt2pt,f77/coll,f90/coll,f08/coll"
src="" mpi=openmpi lib="" builddir=. work="" dirs=$default_dirs filt=. maxnp=10 tmo=60 out=""
spawn=0
while [ $# -gt 0 ]; do
    case $1 in -[SMDBwdfnto]) [ $# -ge 2 ] || die "$1 needs an argument" ;; esac
    case $1 in
    -S) src=$2; shift ;;
    -M) mpi=$2; shift ;;
    -D) lib=$2; shift ;;
    -B) builddir=$2; shift ;;
    -w) work=$2; shift ;;
    -d) dirs=$2; shift ;;
    -f) filt=$2; shift ;;
    -n) maxnp=$2; shift ;;
    -t) tmo=$2; shift ;;
    -o) out=$2; shift ;;
    -s) spawn=1 ;;
    -h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done
[ -n "$src" ] || { usage >&2; exit 2; }
. "$(dirname "$0")/dropin-run.sh"
dropin_setup mpich-suite
case $maxnp$tmo in *[!0-9]*) die "-n and -t take numbers" ;; esac
[ -f "$src/test/mpi/configure.ac" ] && [ -d "$src/confdb" ] && [ -f "$src/maint/version.m4" ] ||
    die "$src is not an MPICH source tree (test/mpi/configure.ac, confdb, maint/version.m4)"
for t in mpicc.$mpi mpif77.$mpi mpif90.$mpi autoreconf bc; do
    command -v $t >/dev/null || die "$t missing (apt-get install lib$mpi-dev gfortran autoconf automake libtool bc)"
done

# ---- the suite's own build, once: its configure with this MPI's wrappers ----
sp=--disable-spawn
[ $spawn = 1 ] && sp=--enable-spawn
[ $spawn = 1 ] && [ "$mpi" = openmpi ] && export DROPIN_BTL=self,vader,tcp
if [ -f "$work/build/Makefile" ] && [ "$(cat "$work/spawn" 2>/dev/null)" != "$sp" ]; then
    die "$work was configured $(cat "$work/spawn" 2>/dev/null || echo --disable-spawn): use another -w"
fi
if [ ! -f "$work/build/Makefile" ]; then
    echo "configuring MPICH's test suite in $work (once; a few minutes)" >&2
    rm -rf "$work/src" "$work/build"
    mkdir -p "$work/src/test" "$work/src/maint" "$work/build"
    cp -r "$src/test/mpi" "$work/src/test/" && cp -r "$src/confdb" "$work/src/" &&
        cp "$src/maint/version.m4" "$work/src/maint/" || die "cannot copy the suite"
    (cd "$work/src/test/mpi" && MPICH_CONFDB="$work/src/confdb" ./autogen.sh) \
        > "$work/autogen.log" 2>&1 || die "autogen failed: $work/autogen.log"
    # --enable-strictmpi: no MPIX_ tests (neither MPI here has MPICH's MPIX)
    (cd "$work/build" && "$work/src/test/mpi/configure" CC=mpicc.$mpi F77=mpif77.$mpi \
        FC=mpif90.$mpi MPICC=mpicc.$mpi MPIF77=mpif77.$mpi MPIFC=mpif90.$mpi \
        --disable-cxx $sp --disable-ft-tests --disable-perftest \
        --enable-strictmpi) > "$work/configure.log" 2>&1 ||
        die "the suite's configure failed: $work/configure.log"
    echo "$sp" > "$work/spawn"
    make -C "$work/build/util" > "$work/make-util.log" 2>&1 || die "see $work/make-util.log"
fi
IFS=, read -r -a dlist <<< "$dirs"
for d in "${dlist[@]}"; do
    [ -d "$work/build/$d" ] || die "no test directory $d in the suite"
    case $d in f77/* | f90/* | f08/*)
        make -C "$work/build/${d%%/*}/util" > /dev/null 2>&1 ;; esac
    # -k: a test this MPI cannot compile (Open MPI 4.1 has no MPI-4
    # persistent collectives) is listed as not built, the others run
    make -k -C "$work/build/$d" > "$work/make-${d//\//_}.log" 2>&1
    [ -f "$work/build/$d/testlist" ] || cp "$work/src/test/mpi/$d/testlist" "$work/build/$d/" ||
        die "no test list for $d"
done

# run NP PRE TIMEOUT ENVS... -- PROG ARGS...: prints the exit status
# and leaves the output in $work/last.out
run() {
    local np=$1 pre=$2 t=$3 rc
    shift 3
    dropin_run "$np" "$pre" "$t" "$work/last.out" "$@"
    rc=$?
    if [ $rc -eq 124 ]; then echo hang
    elif [ $rc -eq 0 ] && grep -q "No Errors" "$work/last.out"; then echo pass
    else echo "fail($rc)"; fi
}

: > "$out"
npass=0 nsame=0 nworse=0 nbetter=0 nskip=0 taken=0 worse=()
for d in "${dlist[@]}"; do
    while read -r name np rest; do
        case $name in '' | '#'*) continue ;; esac
        line="$d/$name $np $rest"
        echo "$line" | grep -Eq -- "$filt" || continue
        args=() envs=() tl=$tmo skip="" kvs=()
        read -r -a kvs <<< "$rest"     # (no glob expansion of the fields)
        for kv in "${kvs[@]}"; do
            case $kv in
            arg=*) args+=("${kv#arg=}") ;;
            env=*) envs+=("${kv#env=}") ;;
            timeLimit=*) [ "${kv#timeLimit=}" -gt "$tl" ] && tl=${kv#timeLimit=} ;;
            mem=*) [ "$(echo "${kv#mem=} > 4" | bc)" = 1 ] && skip="needs ${kv#mem=} GB" ;;
            esac
        done
        [ "$tl" -gt 120 ] && [ "$tl" -gt "$tmo" ] && skip="timeLimit $tl s"
        [ "$np" -gt "$maxnp" ] && skip="$np ranks"
        [ -x "$work/build/$d/$name" ] || skip="not built with $mpi"
        if [ -n "$skip" ]; then
            echo "SKIP  $line ($skip)" >> "$out"; nskip=$((nskip + 1)); continue
        fi
        cd "$work/build/$d" || die "cd $d"
        p=$(run "$np" 0 "$tl" "${envs[@]}" -- "./$name" "${args[@]}")
        v=$(run "$np" 1 "$tl" "${envs[@]}" -- "./$name" "${args[@]}")
        grep -q "^vcoll_mpi: .* taken=[1-9]" "$work/last.out" && taken=$((taken + 1))
        if [ "$v" = pass ]; then
            npass=$((npass + 1)); r=OK
            [ "$p" = pass ] || { r=BETTER; nbetter=$((nbetter + 1)); }
        elif [ "$p" = pass ]; then
            r=WORSE; nworse=$((nworse + 1)); worse+=("$line: plain pass, preloaded $v")
        else
            r=SAME; nsame=$((nsame + 1))
        fi
        printf '%-6s %-9s %-9s %s\n' "$r" "plain=$p" "vcoll=$v" "$line" >> "$out"
        [ "$r" = WORSE ] && sed 's/^/    | /' "$work/last.out" | head -20 >> "$out"
        printf '%-6s %s\n' "$r" "$line" >&2
    done < "$work/build/$d/testlist"
done
cat <<EOF
MPICH test suite ($dirs) under $mpi, plain and with $(basename "$lib") preloaded:
  pass preloaded:               $npass (of which $nbetter fail plain)
  fail alike, plain and vcoll:  $nsame
  pass plain, fail preloaded:   $nworse
  skipped:                      $nskip
  entries where vcoll took at least one call: $taken
Per entry: $out
EOF
for w in "${worse[@]}"; do echo "  WORSE: $w"; done
[ "$nworse" -eq 0 ]
