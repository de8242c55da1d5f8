#!/usr/bin/env bash
# guest-hier-ratios.sh BUILD_DIR OUTDIR [REPS] - INSIDE the SoftRoCE guest:
# the five collectives on emulated nodes 2x2 (ranks round-robin over the
# nodes) and 2x3 (in blocks), with leaders over rc (auto) and over ud
# (VCOLL_RC_MAX_PEERS=0), each forced to its flat algorithm, to hier and to
# shm (allgather's shm is hier over several nodes), interleaved in one job
# (test/mp/mp_alg_bench.c), REPS runs each (default 3). Writes
# OUTDIR/<layout>.<net>.txt ("coll alg size rep us" lines);
# contrib/hier-ratios.sh makes the table on the host.
# First checks mp_shmcoll with shm forced on both layouts and nets.
set -uo pipefail
B=${1:?usage: $0 BUILD_DIR OUTDIR [REPS]}; OUT=${2:?}; REPS=${3:-3}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EN=$SRC/contrib/vm/emulated-nodes.sh
export TMPDIR=/run
mkdir -p "$OUT"
run() {  # layout net cmd...
  local layout=$1 net=$2; shift 2
  local m=(); [[ $layout == 2+2 ]] && m=(--map-by node)
  local x=(); [[ $net == ud ]] && x=(-x VCOLL_RC_MAX_PEERS=0)
  timeout -k 10 600 "$EN" --run "$layout" "${m[@]}" --oversubscribe "${x[@]}" "$@"
}
fails=0
for layout in 2+2 3+3; do
  for net in rc ud; do
    if run "$layout" "$net" -x MP_QUICK=1 -x VCOLL_ALLREDUCE_ALG=shm -x VCOLL_REDUCE_ALG=shm \
         -x VCOLL_BARRIER_ALG=shm -x VCOLL_BCAST_ALG=shm "$B/test/mp/mp_shmcoll" \
         > "$OUT/check.$layout.$net.log" 2>&1; then
      echo "PASS mp_shmcoll shm forced $layout $net"
    else
      echo "FAIL mp_shmcoll shm forced $layout $net"; tail -20 "$OUT/check.$layout.$net.log"
      fails=$((fails + 1))
    fi
  done
done
# one job per layout and net: mp_alg_bench interleaves flat, hier and shm
for layout in 2+2 3+3; do
  for net in rc ud; do
    run "$layout" "$net" "$B/test/mp/mp_alg_bench" 10 "$REPS" 8 1024 16384 65536 \
      > "$OUT/$layout.$net.txt" 2> "$OUT/$layout.$net.err" || fails=$((fails + 1))
    echo "timed $layout $net $(date +%T): $(wc -l < "$OUT/$layout.$net.txt") lines"
  done
done
exit $((fails > 0))
