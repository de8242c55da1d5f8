#!/bin/bash
# compare.sh -- run the OSU-style benchmarks on vcoll and on every MPI whose
# build of the same benchmark sources is found, interleaved (vcoll, MPI-1,
# MPI-2, vcoll, ...) so that drifting machine load hits all of them alike.
# Prints per benchmark and size the median of the repetitions for each
# library and the ratio vcoll/peer, writes a CSV and optionally a PNG plot.
#
# Run it from a build directory (or pass -B / -P); see src/tools/osu/README.md.
set -u
. "$(dirname "$0")/osu-common.sh"

usage() {
    cat <<EOF
Usage: $0 [options]
  -r N            repetitions per library and benchmark (default 3)
  -n NP           ranks (default 2; latency/bw/bibw always use 2)
  -b LIST         benchmarks, comma separated (default: all)
                  latency,bw,bibw,bcast,reduce,allreduce,allgather,gather,alltoall,
                  neighbor_alltoall,allreduce_persistent,barrier (neighbor_alltoall: on a
                  2-D periodic grid of NP; allreduce_persistent: time per start)
  -m [MIN:]MAX    message sizes passed to every benchmark (default: theirs)
  -i ITERS        iterations passed to every benchmark (default: theirs)
  -x WARMUP       warm-up iterations passed to every benchmark
  -B DIR          vcoll build tree (default: .)
  -P PREFIX       use installed programs under PREFIX instead of a build tree
  -l LIBS         peers, comma separated, among: openmpi,mpich (default: every one built;
                  none: vcoll alone)
  -T FILE         also run vcoll with the rules file FILE (VCOLL_TUNE_FILE, e.g. written
                  by vcoll_tune), interleaved with the plain vcoll runs, which then use the
                  built-in table; adds the column tuned/vcoll (latency: > 1, the file is slower)
  -L LAUNCHER     launcher for vcoll: mpirun (default) or srun (srun --mpi=pmix)
  -t SECONDS      timeout of one launcher call (default 300)
  -o FILE.csv     CSV output (default osu-compare.csv)
  -k DIR          keep every raw benchmark output in DIR
  --plot[=PREFIX] write PREFIX-<benchmark>.png with gnuplot (default prefix osu-compare)
  -h              this help
Environment: VCOLL_* is passed to the vcoll runs (e.g. VCOLL_NET=shm).
EOF
}

reps=3 np=2 benches="latency,bw,bibw,bcast,reduce,allreduce,allgather,gather,alltoall,neighbor_alltoall,allreduce_persistent,barrier"
sizes="" iters="" warmup="" builddir=. prefix="" peers="" launcher=mpirun tmo=300
csv=osu-compare.csv keep="" plot="" tuned=""

while [ $# -gt 0 ]; do
    case $1 in
    -r) reps=$2; shift ;;
    -n) np=$2; shift ;;
    -b) benches=$2; shift ;;
    -m) sizes=$2; shift ;;
    -i) iters=$2; shift ;;
    -x) warmup=$2; shift ;;
    -B) builddir=$2; shift ;;
    -P) prefix=$2; shift ;;
    -l) peers=$2; shift ;;
    -L) launcher=$2; shift ;;
    -t) tmo=$2; shift ;;
    -T) tuned=$2; shift ;;
    -o) csv=$2; shift ;;
    -k) keep=$2; shift ;;
    --plot) plot=osu-compare ;;
    --plot=*) plot=${1#--plot=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$0: unknown option $1" >&2; usage >&2; exit 1 ;;
    esac
    [ $# -gt 0 ] && shift
done

case $reps$np in *[!0-9]*) echo "$0: -r and -n take numbers" >&2; exit 1 ;; esac
[ "$reps" -ge 1 ] && [ "$np" -ge 1 ] || { echo "$0: -r and -n must be >= 1" >&2; exit 1; }

# ---- where the programs are ----
if [ -n "$prefix" ]; then
    vdir=$prefix/bin
    mdir=$prefix/libexec/vcoll
else
    vdir=$builddir/src/tools/osu
    mdir=$builddir/src/tools/osu
fi
prog_of() { # LIB BENCH
    if [ "$1" = vcoll ] || [ "$1" = tuned ]; then echo "$vdir/vcoll_osu_$2"; else echo "$mdir/$1/mpi_osu_$2"; fi
}
if [ ! -x "$(prog_of vcoll latency)" ]; then
    echo "$0: no vcoll benchmarks in $vdir (build vcoll, or use -B / -P)" >&2
    exit 1
fi

if [ "$peers" = none ]; then
    peers=""
elif [ -z "$peers" ]; then
    for p in openmpi mpich; do
        [ -x "$(prog_of $p latency)" ] && peers="$peers${peers:+,}$p"
    done
fi
libs="vcoll ${peers//,/ }"
if [ -n "$tuned" ]; then
    # vc_init refuses a bad file on every rank: say so once, before any run
    [ -r "$tuned" ] || { echo "$0: -T $tuned: not a readable file" >&2; exit 1; }
    tuned=$(cd "$(dirname "$tuned")" && pwd)/$(basename "$tuned")
    libs="vcoll tuned ${peers//,/ }"
fi
for p in ${peers//,/ }; do
    case $p in openmpi | mpich) ;; *) echo "$0: unknown peer '$p'" >&2; exit 1 ;; esac
    [ -x "$(prog_of "$p" latency)" ] || {
        echo "$0: $p benchmarks not built ($(prog_of "$p" latency)); configure found no MPI compiler for it?" >&2
        exit 1
    }
done
[ -n "$peers" ] || echo "note: no MPI peers, measuring vcoll only" >&2

# ---- launchers, each with the flags it needs on one node ----
launch() { # LIB NP PROGRAM ARGS...
    local lib=$1 n=$2
    shift 2
    local cmd
    case $lib in
    vcoll | tuned)
        # -T: the plain runs take the built-in table, not a default-location file
        if [ -n "$tuned" ]; then
            if [ "$lib" = tuned ]; then export VCOLL_TUNE_FILE=$tuned; else export VCOLL_TUNE_FILE=builtin; fi
        fi
        if [ "$launcher" = srun ]; then
            cmd=(srun --mpi=pmix -O -n "$n")
        else
            # mpirun's PMIx server bootstraps vcoll; Open MPI's own transports are unused
            cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe --mca oob_tcp_if_include lo -np "$n")
            # forward the vcoll configuration to every rank
            for v in $(env | sed -n 's/^\(VCOLL_[A-Za-z0-9_]*\)=.*/\1/p'); do cmd+=(-x "$v"); done
        fi ;;
    openmpi)
        cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl self,vader
            --mca oob_tcp_if_include lo -np "$n") ;;
    mpich) cmd=(mpiexec.hydra -n "$n") ;;
    esac
    timeout -k 10 "$tmo" "${cmd[@]}" "$@"
}

need() { command -v "$1" >/dev/null 2>&1 || { echo "$0: $1 not found ($2)" >&2; exit 1; }; }
need timeout coreutils
if [ "$launcher" = srun ]; then need srun "Slurm with --mpi=pmix"; else need mpirun.openmpi "apt-get install openmpi-bin"; fi
case ",$peers," in *,openmpi,*) need mpirun.openmpi "apt-get install openmpi-bin" ;; esac
case ",$peers," in *,mpich,*) need mpiexec.hydra "apt-get install mpich" ;; esac

opts=()
[ -n "$sizes" ] && opts+=(-m "$sizes")
[ -n "$iters" ] && opts+=(-i "$iters")
[ -n "$warmup" ] && opts+=(-x "$warmup")

work=$(mktemp -d "${TMPDIR:-/tmp}/osu-compare.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
[ -n "$keep" ] && mkdir -p "$keep"
raw=$work/raw # lines: bench lib size value

# libtool wrapper scripts may do first-run work: do it once, not per rank
for b in ${benches//,/ }; do "$(prog_of vcoll "$b")" -h >/dev/null 2>&1; done

failed=0
for ((rep = 1; rep <= reps; rep++)); do
    for b in ${benches//,/ }; do
        case $b in latency | bw | bibw) n=2 ;; *) n=$np ;; esac
        for lib in $libs; do
            prog=$(prog_of "$lib" "$b")
            out=$work/$b.$lib.$rep.out
            [ -x "$prog" ] || { echo "$0: missing $prog" >&2; exit 1; }
            printf '[%d/%d] %-9s %-8s np=%d ... ' "$rep" "$reps" "$b" "$lib" "$n" >&2
            osu_run "$out" "$tmo" launch "$lib" "$n" "$prog" "${opts[@]}" || continue
            awk -v b="$b" -v l="$lib" '!/^#/ && NF >= 2 { print b, l, $1, $2 }' "$out" >>"$raw"
        done
    done
done
[ -s "$raw" ] || { echo "$0: no results" >&2; exit 1; }

# ---- medians, ratios, table and CSV ----
# metric per benchmark: bandwidth (higher is better) or latency (lower is better)
awk -v libs="$libs" -v csv="$csv" "$OSU_AWK_MEDIAN"'
function unit(b) { return (b == "bw" || b == "bibw") ? "MB/s" : "us" }
# vcoll over a peer; the tuned table over the built-in one (both: < 1 is
# better for latency)
function ratio(li) { return L[li] == "tuned" ? med[li] / med[1] : med[1] / med[li] }
{
    k = $1 SUBSEP $2 SUBSEP $3
    n[k]++; v[k, n[k]] = $4
    if (!(($1, $3) in seen)) { seen[$1, $3] = 1; sizes[$1] = sizes[$1] " " $3 }
    if (!($1 in border)) { border[$1] = ++nb; blist[nb] = $1 }
}
END {
    nl = split(libs, L, " ")
    print "benchmark,size,unit,library,median,min,max,runs,vcoll_over_peer" > csv
    # (on a tuned row the last column is tuned over built-in)
    for (bi = 1; bi <= nb; bi++) {
        b = blist[bi]
        printf "\n## osu_%s (%s, median of runs; ratio = vcoll/peer, %s)\n", b, unit(b),
            unit(b) == "us" ? "< 1 means vcoll is faster" : "> 1 means vcoll is faster"
        printf "%-10s", "# Size"
        for (li = 1; li <= nl; li++) printf "%14s", L[li]
        for (li = 2; li <= nl; li++) printf "%16s", L[li] == "tuned" ? "tuned/vcoll" : "vcoll/" L[li]
        printf "\n"
        ns = split(sizes[b], S, " ")
        for (si = 1; si <= ns; si++) {
            s = S[si]
            printf "%-10s", s
            delete med
            for (li = 1; li <= nl; li++) {
                k = b SUBSEP L[li] SUBSEP s
                if (k in n) { med[li] = median(k); printf "%14.2f", med[li] }
                else printf "%14s", "n/a"
            }
            for (li = 2; li <= nl; li++) {
                if ((1 in med) && (li in med) && med[li] > 0 && med[1] > 0)
                    printf "%16.3f", ratio(li)
                else printf "%16s", "n/a"
            }
            printf "\n"
            for (li = 1; li <= nl; li++) {
                if (!(li in med)) continue
                k = b SUBSEP L[li] SUBSEP s
                r = (li > 1 && (1 in med) && med[li] > 0 && med[1] > 0) ? sprintf("%.4f", ratio(li)) : ""
                printf "%s,%s,%s,%s,%.4f,%.4f,%.4f,%d,%s\n", b, s, unit(b), L[li], med[li],
                    lo[k], hi[k], n[k], r > csv
            }
        }
    }
}' "$raw"
echo
echo "CSV: $csv"

# ---- plot ----
if [ -n "$plot" ]; then
    if ! command -v gnuplot >/dev/null 2>&1; then
        echo "--plot: gnuplot not found (apt-get install gnuplot-nox); no PNG written, the CSV has the data" >&2
    else
        for b in ${benches//,/ }; do
            grep -q "^$b," "$csv" || continue
            [ "$b" = barrier ] && continue # a single point, nothing to plot against size
            case $b in bw | bibw) ylab="Bandwidth (MB/s)" ;; *) ylab="Latency (us)" ;; esac
            cmd="set terminal pngcairo size 900,600 noenhanced; set output '$plot-$b.png';"
            cmd+=" set datafile separator ','; set logscale x 2; set logscale y; set format x '%.0b%B';"
            cmd+=" set xlabel 'Message size (bytes)'; set ylabel '$ylab'; set key top left;"
            cmd+=" set title 'osu_$b, np=$np, median of $reps runs'; set grid; plot"
            sep=""
            for lib in $libs; do
                grep -q "^$b,[0-9]*,[^,]*,$lib," "$csv" || continue
                cmd+="$sep '< grep \"^$b,.*,$lib,\" $csv' using 2:5 with linespoints title '$lib'"
                sep=","
            done
            # pngcairo is in gnuplot-nox/-qt; fall back to the plain png terminal
            if gnuplot -e "$cmd" 2>/dev/null || gnuplot -e "${cmd/pngcairo/png}"; then
                echo "PNG: $plot-$b.png"
            fi
        done
    fi
fi
[ $failed -eq 0 ] || echo "$failed run(s) failed; see the messages above" >&2
exit $((failed > 0))
