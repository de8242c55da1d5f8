#!/bin/bash
# ud-timeout.sh BUILD -- inside the SoftRoCE guest: a rank that is alive but
# silent (SIGSTOP) must be declared dead by its UD peers once it has
# acknowledged nothing for VCOLL_UD_TIMEOUT seconds, and every survivor must
# get VC_ERR_PEER_FAILED (test/mp/mp_kill.c, MP_KILL_MODE=stop). When all
# survivors have reported (or after 30 s), the stopped rank is killed here so
# the launcher can end the job.
set -u
b=${1:?usage: ud-timeout.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=3 victim=2 log=$(mktemp "${TMPDIR:-/tmp}/ud-timeout.XXXXXX")
t0=$(date +%s)
timeout -k 10 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl '^openib' \
    -np $np -x VCOLL_NET=ud -x VCOLL_UD_TIMEOUT=2 -x VCOLL_PEER_TIMEOUT=2 -x MP_KILL_MODE=stop \
    "$b/test/mp/mp_kill" >"$log" 2>&1 </dev/null &
launcher=$!
n=0
for _ in $(seq 300); do
    n=$(grep -c "detected failure of rank $victim" "$log")
    [ "$n" -ge $((np - 1)) ] && break
    kill -0 $launcher 2>/dev/null || break
    sleep 0.1
done
secs=$(($(date +%s) - t0))
# the victim is the mp_kill process in state T (stopped)
ps -eo pid=,stat=,args= | awk '$2 ~ /^T/ && /mp_kill/ { print $1 }' | xargs -r kill -KILL
wait $launcher
rc=$?
grep -E "detected|acknowledgement" "$log" | sed 's/^/  /'
# Which of the two reports first is a race, not a property: UD's resend timer
# declares the peer dead only once the liveness detector finds it silent too
# (ud_progress.c: busy is not dead), and that detector may fail it first on
# its own ("answered no heartbeat": seen once in three guest runs on a Xeon
# TCG host). Either names the stopped rank; no report at all is the failure.
if [ $rc -eq 124 ] || [ "$n" -ne $((np - 1)) ] ||
   ! grep -qE "no acknowledgement for|answered no heartbeat for" "$log"; then
    echo "FAIL: $n of $((np - 1)) survivors reported the stopped rank (launcher exit $rc, ${secs}s)"
    tail -20 "$log" | sed 's/^/  | /'
    rm -f "$log"
    exit 1
fi
rm -f "$log"
echo "PASS: every survivor reported the stopped rank within ${secs}s"
