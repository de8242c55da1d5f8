#!/bin/bash
# run-mp.sh -- run every multi-process test listed in test/mp/*.list under a
# launcher. List format, one program per line:
#     <program> <np,np,...> [VAR=value ...]
# Usage: run-mp.sh --launcher mpirun|srun [--builddir DIR] [--srcdir DIR]
#                  [--np-max N] [--only PROG] [--timeout SECS]
# MP_SMOKE=1: each program once, its first line at its largest np within
# --np-max (make distcheck: the tarball's lists, programs and scripts all
# work from a read-only source tree; the full matrix ran in the build).
# MP_SMOKE=lines: every line once, at its largest np within --np-max (the
# sanitizer stage and srun: each algorithm and setting under the new
# condition, the np ranges having run under mpirun in the build).
# Prints PASS/FAIL per run and a final "N passed, N failed" line.
set -u
launcher=mpirun
builddir=${builddir:-.}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
npmax=${MP_NP_MAX:-8}
only=
smoke=${MP_SMOKE:-0}
declare -A seen=()
tmo=${MP_TIMEOUT:-180}
while [ $# -gt 0 ]; do
    case $1 in
    --launcher) launcher=$2; shift 2 ;;
    --builddir) builddir=$2; shift 2 ;;
    --srcdir) srcdir=$2; shift 2 ;;
    --np-max) npmax=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --timeout) tmo=$2; shift 2 ;;
    *) echo "run-mp.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
case $smoke in 0|1|lines) ;;
*) echo "run-mp.sh: MP_SMOKE=$smoke: expected 0, 1 or lines" >&2; exit 2 ;;
esac

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pass=0 fail=0
logdir=$(mktemp -d /tmp/vcoll-mp.XXXXXX)

launch() {   # np, env assignments..., --, program
    local np=$1; shift
    local envs=() xs=()
    while [ "$1" != -- ]; do envs+=("$1"); xs+=(-x "${1%%=*}"); shift; done
    shift
    case $launcher in
    mpirun)
        env "${envs[@]}" timeout -k 10 "$tmo" mpirun.openmpi --oversubscribe \
            --mca oob_tcp_if_include lo --mca btl self,vader ${xs[@]+"${xs[@]}"} -np "$np" "$@" ;;
    srun)
        env -u PMIX_MCA_psec "${envs[@]}" timeout -k 10 "$tmo" srun --mpi=pmix --overcommit -n "$np" \
            --export=ALL "$@" ;;
    esac
}

for list in "$srcdir"/test/mp/*.list; do
    [ -e "$list" ] || continue
    while read -r prog nps rest; do
        case $prog in ''|'#'*) continue ;; esac
        [ -n "$only" ] && [ "$prog" != "$only" ] && continue
        [ "$smoke" = 1 ] && [ -n "${seen[$prog]+x}" ] && continue
        # a name with a slash is a program of the build tree (an example)
        case $prog in */*) exe=$builddir/$prog ;; *) exe=$builddir/test/mp/$prog ;; esac
        if [ ! -x "$exe" ]; then
            echo "FAIL: $prog: not built ($exe)"; fail=$((fail + 1)); continue
        fi
        read -r -a envs <<< "${rest:-}"
        runs=${nps//,/ }
        if [ "$smoke" != 0 ]; then     # the largest np within npmax, if any
            top=0
            for np in $runs; do [ "$np" -le "$npmax" ] && [ "$np" -gt "$top" ] && top=$np; done
            runs=
            [ "$top" -gt 0 ] && runs=$top && seen[$prog]=1
        fi
        for np in $runs; do
            [ "$np" -gt "$npmax" ] && continue
            log=$logdir/${prog//\//_}.$np.$pass.$fail.log
            t0=$(date +%s.%N)
            launch "$np" ${envs[@]+"${envs[@]}"} -- "$exe" > "$log" 2>&1 < /dev/null
            rc=$?
            dt=$(printf '%.2f' "$(echo "$(date +%s.%N) - $t0" | bc)")
            label="$launcher np=$np $prog${rest:+ ($rest)}"
            if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$log"; then
                echo "PASS: $label ${dt}s"; pass=$((pass + 1))
            else
                echo "FAIL: $label (exit $rc, ${dt}s)"; fail=$((fail + 1))
                sed 's/^/    | /' "$log" | tail -25
            fi
        done
    done < "$list"
done
rm -rf "$logdir"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
