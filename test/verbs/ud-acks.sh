#!/bin/bash
# ud-acks.sh BUILD -- inside the SoftRoCE guest: a UD stream is acknowledged
# per quarter window (or on the sender's request), not per lull. Every ACK is
# a datagram, and each costs the device as much as a data fragment; the
# rule until 0.2 (ACK whenever the CQ was empty for 16 polls) sent one ACK
# per 2-3 fragments of a 64 KiB stream. Passes when the receiving rank's
# close log shows at most one standalone ACK per 8 fragments received.
set -u
b=${1:?usage: ud-acks.sh BUILD}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp "${TMPDIR:-/tmp}/ud-acks.XXXXXX")
timeout -k 10 300 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl '^openib' \
    -np 2 -x VCOLL_NET=ud -x VCOLL_LOG=debug \
    "$b/src/tools/osu/vcoll_osu_bw" -m 65536:65536 -i 5 -x 1 >"$log" 2>&1 </dev/null
rc=$?
# "ud: S fragments sent, R received, ..., A ACKs, ..." from rank 1 (the receiver)
line=$(grep 'rank 1/2.*ud: .* fragments sent' "$log" | head -1)
# (no process substitution: the guest has no /dev/fd)
recvd=$(sed -nE 's/.* sent, ([0-9]+) received, .*/\1/p' <<<"$line")
acks=$(sed -nE 's/.* ([0-9]+) ACKs, .*/\1/p' <<<"$line")
rm -f "$log"
if [ $rc -ne 0 ] || ! [[ ${recvd-} =~ ^[0-9]+$ && ${acks-} =~ ^[0-9]+$ ]] || ((recvd < 1000)); then
    echo "FAIL: no UD counters from the receiving rank (exit $rc): ${line:-none}"
    exit 1
fi
if ((acks * 8 > recvd)); then
    echo "FAIL: $acks ACKs for $recvd fragments received (more than 1 per 8)"
    exit 1
fi
echo "PASS: $acks ACKs for $recvd fragments received"
