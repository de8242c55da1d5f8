#!/bin/bash
# make check: a launcher whose PMIx leaves out keys vcoll reads. The real
# mpirun runs; an LD_PRELOAD shim (test/mp/pmix_hide.c) makes PMIx_Get
# answer "not found" for the keys named in VC_TEST_PMIX_HIDE. vc_init must
# then work or fail with a message -- never crash.
set -u
hello=./examples/hello
shim=./test/mp/.libs/pmix_hide.so
MPIRUN=${MPIRUN:-mpirun.openmpi}
if ! command -v "$MPIRUN" >/dev/null; then echo "SKIP: $MPIRUN not found"; exit 77; fi
[ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# an ASan build must accept a preloaded library ahead of its runtime
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
pass=0 fail=0
ok()  { echo "PASS: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; echo "$2" | sed 's/^/    | /' | tail -15; fail=$((fail + 1)); }
run() {   # keys, VCOLL_NET, np
    timeout -k 10 120 "$MPIRUN" --oversubscribe --mca oob_tcp_if_include lo --mca btl self,vader \
        -x LD_PRELOAD="$shim" -x VC_TEST_PMIX_HIDE="$1" -x VCOLL_NET="$2" -x ASAN_OPTIONS \
        -x VC_TEST_PMIX_SHORT="${VC_TEST_PMIX_SHORT:-}" \
        -np "$3" $hello 2>&1
}
crashed() { echo "$1" | grep -qiE "signal|segmentation|core dumped|AddressSanitizer|runtime error"; }

# no local peer list: the other ranks are reached as remote peers, over
# verbs -- which works where there is an RDMA device and otherwise fails
# vc_init saying so; both ranks warn about the missing key
for net in auto ud; do
    out=$(run pmix.lpeers $net 2); rc=$?
    if crashed "$out"; then bad "no PMIX_LOCAL_PEERS, VCOLL_NET=$net: crashed" "$out"
    elif [ "$(echo "$out" | grep -c "PMIX_LOCAL_PEERS")" -lt 2 ]; then
        bad "no PMIX_LOCAL_PEERS, VCOLL_NET=$net: the missing key is not named by every rank" "$out"
    elif [ $rc -eq 0 ] && echo "$out" | grep -q "rank 1 of 2"; then
        ok "no PMIX_LOCAL_PEERS, VCOLL_NET=$net: runs over verbs"
    elif [ $rc -ne 0 ] && echo "$out" | grep -q "vc_init failed"; then
        ok "no PMIX_LOCAL_PEERS, VCOLL_NET=$net: vc_init fails with a message (exit $rc)"
    else bad "no PMIX_LOCAL_PEERS, VCOLL_NET=$net" "$out"; fi
done

# no node count on top: the ranks not known to be local still get a transport
out=$(run pmix.lpeers,pmix.num.nodes auto 2); rc=$?
if crashed "$out"; then bad "no PMIX_LOCAL_PEERS nor PMIX_NUM_NODES: crashed" "$out"
elif { [ $rc -eq 0 ] && echo "$out" | grep -q "rank 1 of 2"; } ||
     { [ $rc -ne 0 ] && echo "$out" | grep -q "vc_init failed"; }; then
    ok "no PMIX_LOCAL_PEERS nor PMIX_NUM_NODES: runs or fails with a message (exit $rc)"
else bad "no PMIX_LOCAL_PEERS nor PMIX_NUM_NODES" "$out"; fi

# optional keys: vcoll runs without them over shared memory
out=$(run pmix.num.nodes,pmix.lrank,pmix.local.size,pmix.nodeid auto 3); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "rank 2 of 3" && ! crashed "$out"; then
    ok "no PMIX_NUM_NODES, PMIX_LOCAL_RANK, PMIX_LOCAL_SIZE, PMIX_NODEID: runs"
else bad "optional PMIx keys missing" "$out"; fi

# the job size is required: an error naming it
out=$(run pmix.job.size auto 2); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "PMIX_JOB_SIZE" && ! crashed "$out"; then
    ok "no PMIX_JOB_SIZE: vc_init fails naming it"
else bad "no PMIX_JOB_SIZE" "$out"; fi

# a rank of another vcoll version publishes node facts of another size:
# vc_init fails, the reader naming that rank (no hang: the job ends)
out=$(VC_TEST_PMIX_SHORT=vc.node run "" auto 2); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "rank 0 published 15 bytes of node facts" &&
   ! crashed "$out"; then
    ok "node facts of another size: vc_init fails naming the rank"
else bad "node facts of another size" "$out"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
