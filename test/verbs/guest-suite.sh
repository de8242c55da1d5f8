#!/usr/bin/env bash
# guest-suite.sh - runs vcoll's multi-process tests over the verbs transport.
# Meant to run INSIDE the SoftRoCE guest (contrib/vm/vcoll-vm.sh); see
# test/verbs/run-verbs-tests.sh for the host-side driver.
#
#   guest-suite.sh --build DIR [--net rc[,ud]] [--np 2,3,4] [--hca rxe0,rxe1]
#                  [--list FILE]... [--only REGEX] [--timeout SECS]
#                  [--pre NAME=SHELLCMD]... [--nodes LAYOUT] [--map-by HOW] [-v]
#
# Programs come from test/mp/*.list (`<program> <np list> [ENV=VAL ...]`);
# each is run for every np in both its own list and --np, once per --net.
# `<program>@<net>` runs only on that net (e.g. UD loss injection).
# --hca is exported as VCOLL_HCA; a comma list is indexed by local rank, so
# rxe0,rxe1 splits the ranks across two devices.  --pre runs a shell command
# first and counts it as a test.  --nodes 2+2 (ranks per node) runs each
# job on emulated nodes (contrib/vm/emulated-nodes.sh: one Open MPI daemon
# and PMIx server per node, each with its own host name); np is then the
# layout's total and only entries listing it run.  --map-by is passed to
# mpirun (e.g. node: ranks round-robin over the nodes).  --net auto is
# shm+rc (or shm+ud past VCOLL_RC_MAX_PEERS).  One PASS/FAIL line per run, then
# "N passed, N failed"; exit 1 on any failure or when nothing ran.
set -uo pipefail

PROG=${0##*/}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD='' NETS=rc NPS=2,3,4 HCA='' ONLY='' TMO=300 VERBOSE=0 NODES='' MAPBY=''
LISTS=() PRES=()

usage() { sed -n '6,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "$PROG: $*" >&2; exit 2; }

while (($#)); do
  case $1 in
    --build) BUILD=${2-}; shift 2 ;;
    --net) NETS=${2-}; shift 2 ;;
    --np) NPS=${2-}; shift 2 ;;
    --hca) HCA=${2-}; shift 2 ;;
    --list) LISTS+=("${2-}"); shift 2 ;;
    --only) ONLY=${2-}; shift 2 ;;
    --timeout) TMO=${2-}; shift 2 ;;
    --pre) PRES+=("${2-}"); shift 2 ;;
    --nodes) NODES=${2-}; shift 2 ;;
    --map-by) MAPBY=${2-}; shift 2 ;;
    -v) VERBOSE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[[ -n $BUILD && -d $BUILD ]] || die "--build DIR is required and must exist"
BUILD=$(cd "$BUILD" && pwd)
[[ $TMO =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
((${#LISTS[@]})) || LISTS=("$SRC"/test/mp/*.list)
LAUNCH=(mpirun.openmpi --allow-run-as-root --oversubscribe --mca oob_tcp_if_include lo
        --mca btl '^openib')
if [[ -n $NODES ]]; then
  [[ $NODES =~ ^[1-9][0-9]*(\+[1-9][0-9]*)*$ ]] || die "--nodes wants e.g. 2+2 or 1+2+3"
  NPS=$((NODES))
  # the agent adds its own hostfile and -np; a later -np would override it
  LAUNCH=("$SRC/contrib/vm/emulated-nodes.sh" --run "$NODES" --oversubscribe)
fi
[[ -n $MAPBY ]] && LAUNCH+=(--map-by "$MAPBY")

# Open MPI's session directory must not live on 9p (the host's /tmp).
export TMPDIR=/run
[[ -d /sys/class/infiniband ]] && [[ -n $(ls /sys/class/infiniband 2>/dev/null) ]] \
  || echo "$PROG: warning: no verbs devices here (not inside the SoftRoCE guest?)" >&2

LOGDIR=$(mktemp -d "$TMPDIR/vcoll-suite.XXXXXX")
PASSED=0 FAILED=0 FAILS=() LISTRUNS=0

# $1 = label, rest = command; output kept in a log, shown on failure (or -v).
run_one() {
  local label=$1; shift
  local log=$LOGDIR/$((PASSED + FAILED)).log t0=$EPOCHREALTIME rc secs k0
  k0=$(dmesg 2>/dev/null | wc -l)
  "$@" >"$log" 2>&1 </dev/null
  rc=$?
  secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  if [[ $rc == 0 ]]; then
    PASSED=$((PASSED + 1))
    printf 'PASS  %-64s %6ss\n' "$label" "$secs"
    [[ $VERBOSE == 1 ]] && sed 's/^/      | /' "$log"
  else
    FAILED=$((FAILED + 1)); FAILS+=("$label")
    local why="exit $rc"; [[ $rc == 124 ]] && why="timeout ${TMO}s"
    printf 'FAIL  %-64s %6ss  (%s)\n' "$label" "$secs" "$why"
    # the first errors name the cause; the tail below may hold only their echoes
    local n; n=$(wc -l <"$log")
    ((n > 25)) && head -n $((n - 25)) "$log" | grep -E 'error|warning' | head -n 12 \
      | sed 's/^/      : /'
    tail -n 25 "$log" | sed 's/^/      | /'
    # and what the kernel (rxe) said meanwhile
    dmesg 2>/dev/null | tail -n +$((k0 + 1)) | tail -n 10 | sed 's/^/      k /'
  fi
  return 0
}

# Built programs live in $BUILD/test/mp or test/verbs (non-recursive automake); plain
# commands (hostname, absolute paths) are accepted too, for harness checks.
find_prog() {
  local p=$1 c
  case $p in
    /*) [[ -x $p ]] && { echo "$p"; return 0; } ;;
    */*) [[ -x $BUILD/$p ]] && { echo "$BUILD/$p"; return 0; } ;;
    *) for c in "$BUILD/test/mp/$p" "$BUILD/test/verbs/$p" "$BUILD/$p"; do
         [[ -f $c && -x $c ]] && { echo "$c"; return 0; }
       done
       command -v "$p" 2>/dev/null && return 0 ;;
  esac
  return 1
}

in_list() { [[ ,$2, == *,$1,* ]]; }

for pre in "${PRES[@]}"; do
  run_one "${pre%%=*}" timeout -k 10 "$TMO" bash -c "${pre#*=}"
done

for net in ${NETS//,/ }; do
  for list in "${LISTS[@]}"; do
    [[ -f $list ]] || { echo "$PROG: warning: no list file $list" >&2; continue; }
    while read -r prog nplist envs; do
      [[ -z $prog || $prog == \#* ]] && continue
      if [[ $prog == *@* ]]; then
        [[ ${prog#*@} == "$net" ]] || continue
        prog=${prog%@*}
      fi
      [[ -n $ONLY && ! $prog =~ $ONLY ]] && continue
      xs=(-x "VCOLL_NET=$net")
      [[ -n $HCA ]] && xs+=(-x "VCOLL_HCA=$HCA")
      for e in $envs; do xs+=(-x "$e"); done
      for np in ${nplist//,/ }; do
        in_list "$np" "$NPS" || continue
        LISTRUNS=$((LISTRUNS + 1))
        label="${prog} np=$np${NODES:+ nodes=$NODES} net=$net${HCA:+ hca=$HCA}${envs:+ $envs}"
        if ! exe=$(find_prog "$prog"); then
          FAILED=$((FAILED + 1)); FAILS+=("$label")
          printf 'FAIL  %-64s %6ss  (program not found in %s)\n' "$label" 0 "$BUILD"
          continue
        fi
        npx=(-np "$np"); [[ -n $NODES ]] && npx=()
        run_one "$label" timeout -k 10 "$TMO" "${LAUNCH[@]}" "${npx[@]}" "${xs[@]}" "$exe"
      done
    done < "$list"
  done
done

rm -rf "$LOGDIR"
echo "$PASSED passed, $FAILED failed"
if ((FAILED)); then
  printf 'failed: %s\n' "${FAILS[@]}"
  exit 1
fi
((LISTRUNS)) || { echo "$PROG: no test program ran (no list entry matched --np $NPS)"; exit 1; }
exit 0
