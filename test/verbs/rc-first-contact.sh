#!/bin/bash
# rc-first-contact.sh BUILD -- inside the SoftRoCE guest: RC connects on
# first use (test/verbs/mp_ondemand.c), so the first send to a peer is also
# its handshake. A peer that is stopped (SIGSTOP) before it ever answers
# must fail that send with VC_ERR_PEER_FAILED within VCOLL_PEER_TIMEOUT + 5
# s, not hang; a peer that computes for 3 x VCOLL_PEER_TIMEOUT before its
# first vcoll call is busy, not dead, and the send must succeed. Rank 0
# kills the stopped rank itself, so the launcher's exit status says nothing
# here: rank 0's PASS/FAIL line does.
set -u
b=${1:?usage: rc-first-contact.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fails=0
for mode in stopped busy; do
  log=$(mktemp "${TMPDIR:-/tmp}/rc-first.XXXXXX")
  t0=$(date +%s)
  timeout -k 10 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl '^openib' \
      -np 2 -x VCOLL_NET=rc -x VCOLL_PEER_TIMEOUT=2 "$b/test/verbs/mp_ondemand" $mode \
      >"$log" 2>&1 </dev/null
  rc=$?
  if [ $rc -eq 124 ] || ! grep -q "^PASS: " "$log" || grep -q "^FAIL" "$log"; then
    echo "FAIL: $mode peer (launcher exit $rc, $(($(date +%s) - t0)) s)"
    tail -20 "$log" | sed 's/^/  | /'
    fails=$((fails + 1))
  else
    echo "$mode: $(grep '^PASS: ' "$log")"
  fi
  rm -f "$log"
done
exit $((fails > 0))
