#!/usr/bin/env bash
# guest-nodes.sh BUILD_DIR [--timeout S] [--nets auto,rc,ud] - INSIDE the
# SoftRoCE guest: the multi-node suite on emulated nodes. The bad-input
# checks (test/verbs/nodes-errors.sh), then test/verbs/nodes.list on 2+2
# (ranks round-robin over the nodes, so nodes hold non-contiguous ranks) and
# on 1+2+3. Exit 1 if anything failed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=${1:?usage: $0 BUILD_DIR [--timeout S] [--nets LIST]}; shift
TMO=300 NETS=auto,rc,ud
while (($#)); do
  case $1 in
    --timeout) TMO=$2; shift 2 ;;
    --nets) NETS=$2; shift 2 ;;
    *) echo "$0: unknown argument $1" >&2; exit 2 ;;
  esac
done
export TMPDIR=/run
s=0
echo "--- emulated nodes 2+2 (--map-by node) ---"
"$HERE/guest-suite.sh" --build "$B" --nodes 2+2 --map-by node --net "$NETS" --timeout "$TMO" \
  --list "$HERE/nodes.list" --pre "bad input on 1+2+3 fails fast and names the cause=$HERE/nodes-errors.sh $B" \
  --pre "rank killed on another node, reported by every survivor (auto: shm+rc)=$HERE/remote-kill.sh $B auto" \
  --pre "rank killed on another node, reported by every survivor (ud)=$HERE/remote-kill.sh $B ud" || s=1
echo "--- emulated nodes 1+2+3 ---"
"$HERE/guest-suite.sh" --build "$B" --nodes 1+2+3 --net "$NETS" --timeout "$TMO" \
  --list "$HERE/nodes.list" || s=1
exit $s
