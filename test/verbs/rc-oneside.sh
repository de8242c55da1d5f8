#!/bin/bash
# rc-oneside.sh BUILD [NP] -- inside the SoftRoCE guest: rank 0's RC queue
# pair to rank 1 fails at rank 0's end only (VCOLL_FAULT_RC_ERR). Rank 1,
# alive and only receiving, must fail its receive within seconds, naming
# rank 0 and saying it gave up on it; rank 0 names rank 1 and its failed
# completion; every other exchange still works (test/verbs/mp_oneside.c).
set -u
b=${1:?usage: rc-oneside.sh BUILD [NP]}
np=${2:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# a malformed fault specification is refused at vc_init, naming the variable
bad=$(timeout -k 10 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl '^openib' \
    -np 2 -x VCOLL_NET=rc -x 'VCOLL_FAULT_RC_ERR=0>0@1' "$b/test/verbs/mp_oneside" 2>&1 </dev/null)
if ! echo "$bad" | grep -q "VCOLL_FAULT_RC_ERR=0>0@1: expected A>B@N" ||
   ! echo "$bad" | grep -q "FAIL: vc_init"; then
    echo "FAIL: VCOLL_FAULT_RC_ERR=0>0@1 was not refused at vc_init with its name"
    echo "$bad" | tail -10 | sed 's/^/  | /'
    exit 1
fi
t0=$(date +%s)
out=$(timeout -k 10 120 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo \
    --mca btl '^openib' -np "$np" -x VCOLL_NET=rc -x 'VCOLL_FAULT_RC_ERR=0>1@10' \
    "$b/test/verbs/mp_oneside" 2>&1 </dev/null)
rc=$? secs=$(($(date +%s) - t0))
echo "$out" | grep -E "detected|failed:|gave up" | sed 's/^/  /'
fail=
[ $rc -eq 0 ] || fail="exit $rc"
echo "$out" | grep -q "mp_oneside: ok ($np ranks)" || fail="$fail; no ok line"
echo "$out" | grep -Eq "vcoll\[rank 1/.*rank 0 failed: it gave up on this rank" ||
    fail="$fail; rank 1 did not name rank 0's notice"
echo "$out" | grep -Eq "vcoll\[rank 0/.*rank 1 failed: rank 0 -> rank 1: .*failed" ||
    fail="$fail; rank 0 did not name its failed completion"
if [ -n "$fail" ]; then
    echo "FAIL: ${fail#; } (${secs}s)"
    echo "$out" | tail -20 | sed 's/^/  | /'
    exit 1
fi
echo "PASS: the one-sided failure reached both ends within ${secs}s, the rest ran on"
