#!/bin/bash
# ud-timeout.sh BUILD -- inside the SoftRoCE guest: a rank that is alive but
# silent (SIGSTOP) must be declared dead by its UD peers once it has
# acknowledged nothing for VCOLL_UD_TIMEOUT seconds, and every survivor must
# get VC_ERR_PEER_FAILED (test/mp/mp_kill.c, MP_KILL_MODE=stop).
set -u
b=${1:?usage: ud-timeout.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=3 t0=$(date +%s)
out=$(timeout 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl '^openib' \
    -np $np -x VCOLL_NET=ud -x VCOLL_UD_TIMEOUT=2 -x MP_KILL_MODE=stop \
    "$b/test/mp/mp_kill" 2>&1 </dev/null)
rc=$? secs=$(($(date +%s) - t0))
echo "$out" | grep -E "detected|acknowledgement" | sed 's/^/  /'
n=$(echo "$out" | grep -c "detected failure of rank $((np - 1))")
if [ $rc -eq 124 ] || [ "$n" -ne $((np - 1)) ] ||
   ! echo "$out" | grep -q "no acknowledgement for"; then
    echo "FAIL: $n of $((np - 1)) survivors reported the stopped rank (exit $rc, ${secs}s)"
    echo "$out" | tail -20 | sed 's/^/  | /'
    exit 1
fi
echo "PASS: every survivor reported the stopped rank within ${secs}s"
