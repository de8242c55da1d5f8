#!/bin/bash
# rcache-stale.sh BUILD -- inside the SoftRoCE guest: the stale-registration
# check of mp_verbs_rndv (a send buffer unmapped and mapped again at the same
# address with new contents) must FAIL when the cache is told to ignore
# memory releases on purpose (VCOLL_FAULT_RCACHE_STALE=on): otherwise its
# passing proves nothing about the hooks. Over RC, where the cache lives.
set -u
b=${1:?usage: rcache-stale.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(timeout -k 10 180 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo \
    --mca btl '^openib' -np 2 -x VCOLL_NET=rc -x VCOLL_FAULT_RCACHE_STALE=on \
    -x VCOLL_LOG=info "$b/test/mp/mp_verbs_rndv" 2>&1 </dev/null)
rc=$?
echo "$out" | grep -E "registration cache|FAIL" | head -4 | sed 's/^/  /'
if [ $rc -eq 124 ] || [ $rc -eq 0 ] || ! echo "$out" | grep -q "FAIL: rank"; then
    echo "FAIL: with invalidation off on purpose mp_verbs_rndv must fail on the data (exit $rc)"
    echo "$out" | tail -10 | sed 's/^/  | /'
    exit 1
fi
echo "PASS: stale registrations on purpose are caught by mp_verbs_rndv"
