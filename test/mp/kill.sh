#!/bin/bash
# make check: kill -9 one rank while the others wait on it. Within 10 s the
# survivors must report VC_ERR_PEER_FAILED naming the rank, or the launcher
# must end the job naming it -- never a hang. No /dev/shm litter afterwards.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
prog=./test/mp/mp_kill
fail=0 pass=0
check() {  # label, np, command...
    local label=$1 np=$2; shift 2
    local before out t0 t1 rc
    before=$(ls /dev/shm | grep '^vcoll-' | sort)
    t0=$(date +%s)
    out=$("$@" 2>&1); rc=$?
    t1=$(date +%s)
    local victim=$((np - 1))
    if [ $((t1 - t0)) -le 10 ] && [ $rc -ne 124 ] &&
       echo "$out" | grep -Eq "(detected failure of rank $victim|rank $victim failed|rank $victim .*(exited|killed|Killed))"; then
        echo "PASS: $label ($((t1 - t0)) s)"; pass=$((pass + 1))
    else
        echo "FAIL: $label (exit $rc after $((t1 - t0)) s)"; echo "$out" | sed 's/^/    | /' | tail -20
        fail=$((fail + 1))
    fi
    # new names only, and only if they stay: a job running beside this one
    # (make -j check) owns its segment for a moment until its ranks mapped it
    local left
    left=$(ls /dev/shm | grep '^vcoll-' | sort | comm -13 <(echo "$before") -)
    [ -n "$left" ] && sleep 2 &&
        left=$(ls /dev/shm | grep '^vcoll-' | sort | comm -13 <(echo "$before") - | grep -Fx "$left")
    if [ -n "$left" ]; then
        echo "FAIL: $label left shared-memory segments: $left"; fail=$((fail + 1))
    fi
}
for np in 2 3 4; do
    check "mpirun np=$np kill -9 of the last rank" $np \
        timeout 30 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo -np $np $prog
done
if command -v srun >/dev/null && sinfo -h -o %T 2>/dev/null | grep -q idle; then
    check "srun np=3 kill -9 of the last rank" 3 timeout 30 srun --mpi=pmix --overcommit -n 3 $prog
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
