#!/bin/bash
# rc-error.sh BUILD -- inside the SoftRoCE guest: a send on RC to a rank that
# died must come back as an error completion that names both ranks and the
# verbs status, and turn into VC_ERR_PEER_FAILED for every survivor
# (test/mp/mp_kill.c, MP_KILL_MODE=send). The pid probe, which would find
# the dead rank first, is pushed out of reach with VCOLL_PEER_CHECK, short
# RC timeouts make the NIC give up quickly, and mpirun --enable-recovery
# keeps the job alive after the kill so the survivors can have their say.
set -u
b=${1:?usage: rc-error.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=3 victim=2 t0=$(date +%s)
out=$(timeout -k 10 120 mpirun.openmpi --enable-recovery --oversubscribe --mca oob_tcp_if_include lo \
    --mca btl '^openib' -np $np -x VCOLL_NET=rc -x VCOLL_PEER_CHECK=100000 \
    -x VCOLL_IB_TIMEOUT=10 -x VCOLL_IB_RETRY=1 -x MP_KILL_MODE=send \
    "$b/test/mp/mp_kill" 2>&1 </dev/null)
rc=$? secs=$(($(date +%s) - t0))
echo "$out" | grep -E "detected|failed:" | sed 's/^/  /'
n=$(echo "$out" | grep -c "detected failure of rank $victim")
if [ $rc -eq 124 ] || [ "$n" -ne $((np - 1)) ] ||
   ! echo "$out" | grep -Eq "rc: rank [0-9]+ -> rank $victim: .*failed: .*\(status [0-9]+"; then
    echo "FAIL: $n of $((np - 1)) survivors reported rank $victim through an RC completion (exit $rc, ${secs}s)"
    echo "$out" | tail -20 | sed 's/^/  | /'
    exit 1
fi
echo "PASS: every survivor got the failed completion within ${secs}s"
