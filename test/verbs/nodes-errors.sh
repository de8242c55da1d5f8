#!/usr/bin/env bash
# nodes-errors.sh BUILD_DIR - on emulated nodes 1+2+3, bad configurations
# fail fast with a message that names the cause, never hang:
#  1. VCOLL_NET=rc past VCOLL_RC_MAX_PEERS (5 peers each, limit 4);
#  2. one rank with another VCOLL_RC_MAX_PEERS than the rest (it would pick
#     UD where the others pick RC): the job ends naming the variable and the
#     ranks.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
RUN=("$SRC/contrib/vm/emulated-nodes.sh" --run 1+2+3 --oversubscribe)
export TMPDIR=${TMPDIR:-/run}
fails=0
expect() {   # name, regex, command...
  local name=$1 re=$2; shift 2
  local out t0=$SECONDS
  out=$(timeout -k 10 120 "$@" 2>&1); local rc=$?
  if [[ $rc == 0 || $rc == 124 ]] || ! grep -Eq "$re" <<<"$out"; then
    echo "FAIL $name: exit $rc, wanted /$re/ in:"; tail -n 15 <<<"$out" | sed 's/^/  | /'
    fails=$((fails + 1))
  else
    echo "ok   $name ($((SECONDS - t0)) s): $(grep -Eo "$re.*" <<<"$out" | head -1)"
  fi
}
expect "forced rc past the limit" "VCOLL_NET=rc needs an RC connection to each of the 5 other ranks, more than VCOLL_RC_MAX_PEERS=4" \
  "${RUN[@]}" -x VCOLL_NET=rc -x VCOLL_RC_MAX_PEERS=4 "$B/test/verbs/mp_nodes"
expect "VCOLL_RC_MAX_PEERS differs on rank 4" "VCOLL_RC_MAX_PEERS must be the same on every rank, but it is 9 on rank 4 and 1872 on rank 0" \
  "${RUN[@]}" sh -c '[ "$OMPI_COMM_WORLD_RANK" = 4 ] && export VCOLL_RC_MAX_PEERS=9; exec "$0"' "$B/test/verbs/mp_nodes"
exit $((fails > 0))
