#!/bin/bash
# compare-dropin.sh -- an UNMODIFIED build of the OSU Micro-Benchmarks (7.x)
# collective benchmarks, run plain and with the MPI drop-in preloaded
# (libvcoll_mpi_<mpi>.so), interleaved (plain, vcoll, vcoll, plain, ... so
# that drifting machine load and run order hit both alike). Prints per
# benchmark, rank count and size the median of the repetitions and the ratio
# preloaded/plain as a markdown table, the VCOLL_MPI_STATS=1 line of the
# benchmark's own collective from the preloaded runs, and writes a CSV.
#
# It never builds OSU: point -O at any OSU build or install made with the
# same MPI as the drop-in (e.g. ./configure CC=mpicc.openmpi && make).
set -u
. "$(dirname "$0")/osu-common.sh"

usage() {
    cat <<EOF
Usage: $0 -O OSU_DIR [options]
  -O DIR          an OSU build or install tree (or the directory holding the
                  osu_* collective programs); searched for osu_allreduce
  -M MPI          openmpi (default) or mpich: the MPI that OSU build uses
  -D LIB          the drop-in (default: BUILD/.libs/libvcoll_mpi_MPI.so, else
                  the one in \$(pkg-config --variable=libdir vcoll))
  -B DIR          vcoll build tree for the default -D (default: .)
  -L LAUNCHER     mpirun (Open MPI default), hydra (MPICH default) or srun
                  (srun --mpi=pmix, a Slurm allocation or local Slurm)
  -a ARGS         extra launcher options for both modes, e.g. "-bind-to core"
                  (hydra and srun leave ranks unbound; mpirun binds them)
  -n LIST         rank counts, comma separated (default 2,4,8)
  -b LIST         benchmarks without osu_, comma separated (default: every
                  blocking collective the drop-in intercepts:
                  $default_benches)
  -m [MIN:]MAX    message sizes (default 8:1048576)
  -i ITERS        iterations per size (default: OSU's)
  -x WARMUP       warm-up iterations per size (default: OSU's)
  -r N            repetitions per benchmark and mode (default 3)
  -t SECONDS      timeout of one launcher call (default 300)
  -C              do not pass -c (validation) to the benchmarks
  -T TYPE         datatype (OSU's -T, e.g. mpi_int; default OSU's, MPI_CHAR)
  -o FILE.csv     CSV output (default osu-dropin.csv)
  -k DIR          keep every raw output in DIR
  -S DIR          run nothing: print the table again from the outputs kept
                  in DIR by -k (same -n and -b; e.g. after an interrupted run)
  -h              this help
Extra OSU options may follow a -- (e.g. -- -u 0 to skip validation warm-ups).
osu_barrier has no validation nor datatype: -c, -T, -u are not passed to it.
Environment: VCOLL_* is passed to the preloaded runs (e.g. VCOLL_NET=shm).
EOF
}

default_benches="allreduce,bcast,reduce,allgather,allgatherv,alltoall,alltoallv,gather,gatherv,scatter,scatterv,reduce_scatter,reduce_scatter_block,barrier"
osu="" mpi=openmpi lib="" builddir=. launcher="" nps=2,4,8 benches=$default_benches
sizes=8:1048576 dtype="" iters="" warmup="" reps=3 tmo=300 validate=1 csv=osu-dropin.csv keep="" summarize=""
extra=() largs=()

while [ $# -gt 0 ]; do
    case $1 in
    -O) osu=$2; shift ;;
    -M) mpi=$2; shift ;;
    -D) lib=$2; shift ;;
    -B) builddir=$2; shift ;;
    -L) launcher=$2; shift ;;
    -a) read -r -a largs <<<"$2"; shift ;;
    -n) nps=$2; shift ;;
    -b) benches=$2; shift ;;
    -m) sizes=$2; shift ;;
    -i) iters=$2; shift ;;
    -x) warmup=$2; shift ;;
    -r) reps=$2; shift ;;
    -t) tmo=$2; shift ;;
    -C) validate=0 ;;
    -T) dtype=$2; shift ;;
    -o) csv=$2; shift ;;
    -k) keep=$2; shift ;;
    -S) summarize=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "$0: unknown option $1" >&2; usage >&2; exit 1 ;;
    esac
    [ $# -gt 0 ] && shift
done

die() { echo "$0: $*" >&2; exit 1; }
[ -n "$osu" ] || [ -n "$summarize" ] || { usage >&2; exit 1; }
case $reps$tmo${nps//,/} in *[!0-9]*) die "-r, -t and -n take numbers" ;; esac
[ "$reps" -ge 1 ] || die "-r must be >= 1"
case $mpi in openmpi) : "${launcher:=mpirun}" ;; mpich) : "${launcher:=hydra}" ;;
    *) die "-M takes openmpi or mpich" ;; esac
case $mpi:$launcher in openmpi:mpirun | openmpi:srun | mpich:hydra | mpich:srun) ;;
    *) die "launcher $launcher does not start $mpi programs" ;; esac

# ---- the programs: a directory of osu_* or a tree holding one ----
bindir=""
if [ -n "$summarize" ]; then
    bindir="(outputs kept in $summarize)"
elif [ -x "$osu/osu_allreduce" ]; then
    bindir=$osu
else
    f=$(find "$osu" -type f -name osu_allreduce -perm -u+x 2>/dev/null | sort | head -1)
    [ -n "$f" ] && bindir=$(dirname "$f")
fi
[ -n "$bindir" ] || die "no osu_allreduce under $osu (build OSU first; this script does not)"
prog_of() { # BENCH: blocking programs beside osu_allreduce, osu_i* in ../non_blocking
    local p
    for p in "$bindir/osu_$1" "$bindir/../non_blocking/osu_$1" "$bindir/../blocking/osu_$1"; do
        [ -x "$p" ] && { echo "$p"; return; }
    done
    p=$(find "$osu" -type f -name "osu_$1" -perm -u+x 2>/dev/null | head -1)
    echo "${p:-$bindir/osu_$1}"
}

# Benchmarks this OSU build lacks (7.1.1 has no osu_reduce_scatter_block)
# are left out, said here and again under the table, so that the rest runs.
skipped=()
if [ -z "$summarize" ]; then
    have=()
    for b in ${benches//,/ }; do
        if [ -x "$(prog_of "$b")" ]; then have+=("$b"); else skipped+=("osu_$b"); fi
    done
    [ ${#skipped[@]} -gt 0 ] && echo "not in this OSU build, skipped: ${skipped[*]}" >&2
    [ ${#have[@]} -gt 0 ] || die "none of the benchmarks is in this OSU build ($osu)"
    benches=$(IFS=,; echo "${have[*]}")
fi

# ---- the drop-in ----
if [ -z "$lib" ]; then
    lib=$builddir/.libs/libvcoll_mpi_$mpi.so
    if [ ! -f "$lib" ] && command -v pkg-config >/dev/null; then
        lib=$(pkg-config --variable=libdir vcoll 2>/dev/null)/libvcoll_mpi_$mpi.so
    fi
fi
[ -f "$lib" ] || [ -n "$summarize" ] || die "no drop-in $lib (build vcoll with $mpi's headers, or pass -D)"
[ -f "$lib" ] && lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
# libvcoll.so itself, when the drop-in comes from a build tree
libdir=$(dirname "$lib")

need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found ($2)"; }
[ -n "$summarize" ] || need timeout coreutils
[ -n "$summarize" ] || case $launcher in
mpirun) need mpirun.openmpi "apt-get install openmpi-bin" ;;
hydra) need mpiexec.mpich "apt-get install mpich" ;;
srun) need srun "Slurm with --mpi=pmix" ;;
esac

# launch NP PRELOAD(0/1) PROGRAM ARGS...: the benchmark's output on stdout,
# the ranks' stderr (with the stats lines) on stderr
launch() {
    local n=$1 pre=$2 envs=(VCOLL_MPI_STATS=1) cmd v
    shift 2
    if [ "$pre" = 1 ]; then
        envs+=(LD_PRELOAD="$lib" LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
        for v in $(env | sed -n 's/^\(VCOLL_[A-Za-z0-9_]*\)=.*/\1/p'); do
            [ "$v" = VCOLL_MPI_STATS ] || envs+=("$v=${!v}")
        done
    fi
    case $launcher in
    mpirun)
        cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl self,vader
            --mca oob_tcp_if_include lo -np "$n" "${largs[@]}")
        for v in "${envs[@]}"; do cmd+=(-x "$v"); done ;;
    hydra)
        cmd=(mpiexec.mpich -n "$n" "${largs[@]}")
        for v in "${envs[@]}"; do cmd+=(-genv "${v%%=*}" "${v#*=}"); done ;;
    srun)
        cmd=(env "${envs[@]}" srun --mpi=pmix -N1 -O -n "$n" "${largs[@]}") ;;
    esac
    timeout -k 10 "$tmo" "${cmd[@]}" "$@"
}

# the MPI function a benchmark measures, as the stats lines name it
fn_of() {
    local b=$1 i="" w
    case $b in i*) i=I; b=${b#i} ;; esac
    case $b in
    allgatherv) w=Allgatherv ;; alltoallv) w=Alltoallv ;; reduce_scatter) w=Reduce_scatter ;;
    reduce_scatter_block) w=Reduce_scatter_block ;;
    *) w=$(echo "${b:0:1}" | tr a-z A-Z)${b:1} ;;
    esac
    [ -n "$i" ] && w=$(echo "$w" | tr A-Z a-z) && w=I$w
    # Iallreduce, Ireduce_scatter_block...: MPI's capitalisation
    echo "$w"
}

opts=(-m "$sizes")
[ -n "$iters" ] && opts+=(-i "$iters")
[ -n "$warmup" ] && opts+=(-x "$warmup")
# what osu_barrier rejects ("Invalid option")
dopts=()
[ "$validate" = 1 ] && dopts+=(-c)
[ -n "$dtype" ] && dopts+=(-T "$dtype")
dopts+=("${extra[@]}")
opts_of() { # BENCH: into the array bopts
    bopts=("${opts[@]}")
    case $1 in
    barrier | ibarrier)
        local skip=0 o
        for o in "${dopts[@]}"; do
            if [ $skip = 1 ]; then skip=0; continue; fi
            case $o in -c) ;; -T | -u) skip=1 ;; *) bopts+=("$o") ;; esac
        done ;;
    *) bopts+=("${dopts[@]}") ;;
    esac
}

work=$(mktemp -d "${TMPDIR:-/tmp}/osu-dropin.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
[ -n "$keep" ] && mkdir -p "$keep"
raw=$work/raw     # bench np mode size value status
stats=$work/stats # bench np rep function taken fallback
: >"$raw"
: >"$stats"

# the rows and stats lines of one run's outputs OUT and OUT.err
collect() { # OUT BENCH NP MODE REP RC
    local out=$1 b=$2 np=$3 mode=$4 rep=$5 rc=$6
    # rows printed before a failure still count (a timeout at 1 MiB keeps
    # the small sizes)
    awk -v b="$b" -v np="$np" -v m="$mode" '
        /^#/ || NF < 1 || $1 !~ /^[0-9.]+$/ { next }
        {   st = ($NF == "Pass" || $NF == "Fail") ? $NF : "-"
            if (b ~ /barrier$/) print b, np, m, 0, $1, st
            else if (NF >= 2 && $2 ~ /^[0-9.]+$/) print b, np, m, $1, $2, st }' \
        "$out" >>"$raw"
    [ "$mode" = vcoll ] || return 0
    sed -n 's/^vcoll_mpi: MPI_\([A-Za-z_]*\) taken=\([0-9]*\) fallback=\([0-9]*\)$/\1 \2 \3/p' \
        "$out.err" | while read -r f t fb; do
        echo "$b $np $rep $f $t $fb"
    done >>"$stats"
    grep -q '^vcoll_mpi: MPI_' "$out.err" || [ "$rc" -ne 0 ] ||
        echo "    (no VCOLL_MPI_STATS lines in $out.err: was the drop-in loaded?)" >&2
}

cores=$(nproc 2>/dev/null || echo 1)
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
failed=0 failures=()
if [ -n "$summarize" ]; then
    reps=0
    for out in "$summarize"/*.*.*.*; do
        case $out in *.err) continue ;; esac
        IFS=. read -r b np mode r <<<"$(basename "$out")"
        collect "$out" "$b" "$np" "$mode" "$r" 0
        [ "$r" -gt "$reps" ] && reps=$r
    done
    load0="(not measured)" load1=$load0
    reps=-$reps  # no runs here; the loop below is skipped
fi
for ((rep = 1; rep <= reps; rep++)); do
    # odd repetitions run plain first, even ones preloaded first
    if ((rep % 2)); then modes="plain vcoll"; else modes="vcoll plain"; fi
    for np in ${nps//,/ }; do
        for b in ${benches//,/ }; do
            prog=$(prog_of "$b")
            for mode in $modes; do
                pre=0
                [ "$mode" = vcoll ] && pre=1
                out=$work/$b.$np.$mode.$rep
                printf '[%d/%d] osu_%-22s np=%d %-5s ... ' "$rep" "$reps" "$b" "$np" "$mode" >&2
                opts_of "$b"
                osu_run "$out" "$tmo" launch "$np" "$pre" "$prog" "${bopts[@]}"
                rc=$?
                [ $rc -eq 0 ] || failures+=("osu_$b np=$np $mode run $rep: exit $rc$([ $rc -eq 124 ] && echo " (timed out)")")
                collect "$out" "$b" "$np" "$mode" "$rep" "$rc"
            done
        done
    done
done
[ -n "$summarize" ] && reps=$((-reps)) || load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
[ -s "$raw" ] || die "no results"

echo "# OSU collectives, plain $mpi vs LD_PRELOAD=$(basename "$lib") ($launcher${largs[*]:+ ${largs[*]}})"
echo
[ -n "$summarize" ] && opts=("(as run)") dopts=()
echo "OSU programs: $bindir; options: ${opts[*]} ${dopts[*]}; median of $reps interleaved runs;"
echo "ratio = preloaded/plain latency (< 1: vcoll faster). $cores cores;"
echo "load average before: $load0, after: $load1."
for np in ${nps//,/ }; do
    [ "$np" -gt "$cores" ] && echo "np=$np is oversubscribed ($np ranks on $cores cores)."
done
echo

# ---- medians, ratios, table and CSV ----
awk -v csv="$csv" -v nps="${nps//,/ }" -v benches="${benches//,/ }" "$OSU_AWK_MEDIAN"'
{   k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    n[k]++; v[k, n[k]] = $5
    if ($6 == "Fail") bad[k]++
    if ($6 == "Pass") good[k]++
    if (!(($1, $2, $4) in seen)) { seen[$1, $2, $4] = 1; sz[$1, $2] = sz[$1, $2] " " $4 }
}
function valid(k) { return (k in bad) ? "FAIL" : (k in good) ? "pass" : "-" }
END {
    print "benchmark,np,size,plain_us,vcoll_us,ratio,plain_runs,vcoll_runs,plain_valid,vcoll_valid" > csv
    print "| benchmark | np | size (B) | plain (us) | vcoll (us) | vcoll/plain | runs p/v | -c plain/vcoll |"
    print "|---|---:|---:|---:|---:|---:|---|---|"
    nb = split(benches, B, " "); nn = split(nps, N, " ")
    for (bi = 1; bi <= nb; bi++) for (ni = 1; ni <= nn; ni++) {
        b = B[bi]; p = N[ni]
        ns = split(sz[b, p], S, " ")
        for (si = 1; si <= ns; si++) {
            s = S[si]; kp = b SUBSEP p SUBSEP "plain" SUBSEP s; kv = b SUBSEP p SUBSEP "vcoll" SUBSEP s
            mp = (kp in n) ? median(kp) : -1; mv = (kv in n) ? median(kv) : -1
            r = (mp > 0 && mv >= 0) ? sprintf("%.2f", mv / mp) : "n/a"
            flag = ""
            if (r != "n/a") { rows++; if (r + 0 <= 0.8) fast++; if (r + 0 > 1.5) { slow++; flag = " **" } }
            # (no comparisons inside printf arguments: mawk reads ">" as a redirection)
            sp = "n/a"; sv = "n/a"; cp = ""; cv = ""; cr = r
            if (mp >= 0) { sp = sprintf("%.2f", mp); cp = mp }
            if (mv >= 0) { sv = sprintf("%.2f", mv); cv = mv }
            if (r == "n/a") cr = ""
            printf "| osu_%s | %d | %s | %s | %s | %s%s | %d/%d | %s/%s |\n", b, p, s, sp, sv,
                r, flag, n[kp], n[kv], valid(kp), valid(kv)
            if (valid(kp) == "FAIL" || valid(kv) == "FAIL") vfail++
            printf "%s,%d,%s,%s,%s,%s,%d,%d,%s,%s\n", b, p, s, cp, cv, cr, n[kp], n[kv],
                valid(kp), valid(kv) > csv
        }
    }
    printf "\n%d rows with both medians: %d at <= 0.8, %d above 1.5 (marked **); %d rows with a validation failure\n",
        rows, fast, slow, vfail
}' "$raw"

echo
echo "VCOLL_MPI_STATS=1 of the preloaded runs (the measured function, summed over runs):"
for b in ${benches//,/ }; do
    f=$(fn_of "$b")
    for np in ${nps//,/ }; do
        awk -v b="$b" -v np="$np" -v f="$f" '
            $1 == b && $2 == np && $4 == f { t += $5; fb += $6; r++ }
            $1 == b && $2 == np && $6 > 0 { o = o " MPI_" $4 " fallback=" $6 }
            END { if (r) printf "  osu_%-22s np=%-2d vcoll_mpi: MPI_%s taken=%d fallback=%d (%d runs)%s\n",
                      b, np, f, t, fb, r, o ? "; also" o : ""
                  else printf "  osu_%-22s np=%-2d no stats line for MPI_%s\n", b, np, f }' "$stats"
    done
done
echo
echo "CSV: $csv"
[ ${#skipped[@]} -gt 0 ] && echo "not in this OSU build, skipped: ${skipped[*]}"
if [ $failed -gt 0 ]; then
    echo "$failed run(s) failed or timed out:"
    printf '  %s\n' "${failures[@]}"
fi
exit $((failed > 0))
