#!/usr/bin/env bash
# remote-kill.sh BUILD_DIR NET - INSIDE the SoftRoCE guest, on emulated
# nodes 2+2 (--map-by node: ranks 0,2 on vnode0, 1,3 on vnode1): rank 3 is
# killed with SIGKILL while the others wait on it (test/mp/mp_kill.c:
# rank 0 in a receive from it, rank 1 in a wildcard receive, rank 2 in a
# barrier). mpirun --enable-recovery keeps the job alive and tells the
# survivors nothing, so only vcoll's own detection can report it: a pid
# probe for rank 1 (same node), the liveness detector's missing heartbeat
# answers for ranks 0 and 2 (other node). Every survivor must report it,
# within 10 s plus VCOLL_PEER_TIMEOUT, naming the rank.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$(cd "${1:?usage: $0 BUILD_DIR NET}" && pwd)
NET=${2:?usage: $0 BUILD_DIR NET}
export TMPDIR=${TMPDIR:-/run}
log=$(mktemp "$TMPDIR/remote-kill.XXXXXX")
t0=$SECONDS
timeout -k 10 90 "$SRC/contrib/vm/emulated-nodes.sh" --run 2+2 --map-by node --enable-recovery \
    -x VCOLL_NET="$NET" -x VCOLL_PEER_TIMEOUT=3 "$B/test/mp/mp_kill" >"$log" 2>&1 </dev/null &
job=$!
# the survivors' reports are what counts; once all are in (or after 40 s)
# the job is ended here, so a launcher slow to wind down costs no time
for _ in $(seq 400); do
  [[ $(grep -c "detected failure of rank 3" "$log") -ge 3 ]] && break
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
sleep 1
kill $job 2>/dev/null; pkill -f "$B/test/mp/mp_kill" 2>/dev/null; wait $job 2>/dev/null
out=$(cat "$log"); rm -f "$log"
secs=$((SECONDS - t0))
n=$(grep -c "detected failure of rank 3" <<<"$out")
grep -E "detected failure|failed:" <<<"$out" | sed 's/^/  /'
worst=$(grep -o "detected failure of rank 3 after [0-9.]* s" <<<"$out" | awk '{print $(NF-1)}' | sort -n | tail -1)
if [[ $n -ne 3 ]] || grep -q "^FAIL" <<<"$out" || awk -v w="${worst:-99}" 'BEGIN { exit !(w > 13) }'; then
  echo "FAIL: $n of 3 survivors reported the killed rank on another node (net $NET, slowest ${worst:-never} s, ${secs} s)"
  tail -n 20 <<<"$out" | sed 's/^/  | /'
  exit 1
fi
echo "PASS: all 3 survivors reported rank 3 killed on vnode1 (net $NET; slowest after $worst s)"
