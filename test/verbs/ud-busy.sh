#!/bin/bash
# ud-busy.sh BUILD -- inside the SoftRoCE guest: busy is not dead. One rank
# computes 8 s without vcoll calls while the others have UD traffic in
# flight to it; VCOLL_UD_TIMEOUT=2 and VCOLL_PEER_TIMEOUT=2 are far shorter,
# so only its liveness thread answering heartbeats keeps it alive
# (test/mp/mp_busy.c). Passes when every rank finishes with correct data.
set -u
b=${1:?usage: ud-busy.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp "${TMPDIR:-/tmp}/ud-busy.XXXXXX")
t0=$(date +%s)
timeout -k 10 120 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl '^openib' \
    -np 3 -x VCOLL_NET=ud -x VCOLL_UD_TIMEOUT=2 -x VCOLL_PEER_TIMEOUT=2 -x MP_BUSY_SECS=8 \
    "$b/test/mp/mp_busy" >"$log" 2>&1 </dev/null
rc=$?
sed 's/^/  /' "$log" | grep -v "^  $" | tail -8
if [ $rc -ne 0 ] || ! grep -q "mp_busy: ok" "$log" || grep -q "failed" "$log"; then
    echo "FAIL: a computing rank was not kept alive (exit $rc, $(($(date +%s) - t0)) s)"
    rm -f "$log"; exit 1
fi
rm -f "$log"
echo "PASS: the rank computing 8 s stayed alive over UD ($(($(date +%s) - t0)) s)"
