#!/usr/bin/env bash
# run-verbs-tests.sh - host-side driver for vcoll's verbs tests.
#
#   test/verbs/run-verbs-tests.sh BUILD_DIR [guest-suite options...]
#
# Boots the SoftRoCE guest twice (contrib/vm/vcoll-vm.sh):
#   -n 1: test/verbs/selftest, then the test/mp lists with np 2,3,4 on rxe0
#   -n 2: selftest on rxe1, a cross-device pingpong (rxe1 -> rxe0 over the
#         veth/bridge wire), then the lists with np 2,4 split over rxe0,rxe1,
#         whose MTUs differ (1024 and 4096: pairs agree on the smaller)
#   and at the end of boot 1 (the same one-device guest, so no third boot):
#         multi-node jobs on emulated nodes 2+2 and 1+2+3 (guest-nodes.sh:
#         test/verbs/nodes.list on auto, rc and ud, plus bad-input checks);
#         VCOLL_VERBS_NODES=0 skips them
# Extra arguments go to both guest-suite.sh runs (e.g. --only REGEX, --list F).
# Without a --list, boot 1 runs test/verbs/verbs.list and boot 2 the shorter
# test/verbs/verbs2.list (what a second device changes; boot 1 covered the rest).
# Boot 1 also runs the kill -9 check (test/mp/kill.sh) on each net, for rc
# test/verbs/rc-error.sh (a send to a dead rank: the failed completion) and
# for ud test/verbs/ud-timeout.sh (a SIGSTOPped rank, found by missing ACKs);
# test/verbs/rc-first-contact.sh: a first send (the handshake) to a stopped
# rank fails in bounded time, to a busy one waits.
# Env: VCOLL_VERBS_NETS (default "rc,ud"), VCOLL_VERBS_NP1
# (default 2,3,4), VCOLL_VERBS_NP2 (default 2,4), VCOLL_VERBS_HCA2 (default
# rxe0,rxe1), VCOLL_VERBS_MTU2 (default 1500,9000), VCOLL_VERBS_VM_TIMEOUT (per boot, default 2400 s),
# VCOLL_VERBS_TEST_TIMEOUT (per mpirun, default 300 s).
# Exit 0 only if both boots pass.
set -uo pipefail

PROG=${0##*/}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM=$SRC/contrib/vm/vcoll-vm.sh
SUITE=$SRC/test/verbs/guest-suite.sh

[[ $# -ge 1 && -d $1 ]] || { echo "usage: $PROG BUILD_DIR [guest-suite options...]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd); shift
NETS=${VCOLL_VERBS_NETS:-rc,ud}
NP1=${VCOLL_VERBS_NP1:-2,3,4}
NP2=${VCOLL_VERBS_NP2:-2,4}
HCA2=${VCOLL_VERBS_HCA2:-rxe0,rxe1}
# boot 2's link MTUs: rxe0 at RoCE MTU 1024, rxe1 at 4096, so every job
# split over them runs between ranks of different MTUs
MTU2=${VCOLL_VERBS_MTU2:-1500,9000}
VMT=${VCOLL_VERBS_VM_TIMEOUT:-2400}
TT=${VCOLL_VERBS_TEST_TIMEOUT:-300}

# The selftest binary must be on a path the guest sees (host / over 9p).
ST=$(mktemp -d /tmp/vcoll-verbs.XXXXXX)
trap 'rm -rf "$ST"' EXIT
gcc -O2 -Wall -o "$ST/selftest" "$SRC/test/verbs/selftest.c" -libverbs \
  || { echo "$PROG: cannot build selftest (libibverbs-dev missing?)" >&2; exit 2; }

# rxe1 (10.77.0.2) talks to a server on rxe0 (10.77.0.1): only works if the
# policy routing really puts the packets on the wire.
# The client retries while the server is still starting (slow TCG guest).
XDEV='ibv_rc_pingpong -d rxe0 -g 1 -n 200 >/run/pp.srv 2>&1 & s=$!
for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1
  ibv_rc_pingpong -d rxe1 -g 1 -n 200 10.77.0.1 && { wait $s; exit; }; done; kill $s; exit 1'

# a killed rank must be reported by every survivor, never hang them (kill.sh runs
# from the build tree and checks the time and the message)
KILLS=()
for net in ${NETS//,/ }; do
  KILLS+=(--pre "kill -9 of a rank, net $net=cd $BUILD && VCOLL_NET=$net KILL_QUICK=1 $SRC/test/mp/kill.sh")
done
# RC only: a send to a dead rank fails in the NIC; the failed completion
# must reach every survivor
# and a connection that fails at one end only (the other end alive and
# merely receiving) must be failed at both ends, through the DOWN notice
[[ ,$NETS, == *,rc,* ]] &&
  KILLS+=(--pre "dead rank found by a failed RC completion=$SRC/test/verbs/rc-error.sh $BUILD"
          --pre "RC connection failed at one end only, both ends told=$SRC/test/verbs/rc-oneside.sh $BUILD"
          --pre "RC first contact: stopped peer fails, busy peer waited for=$SRC/test/verbs/rc-first-contact.sh $BUILD"
          --pre "stale-registration check fails with invalidation off on purpose=$SRC/test/verbs/rcache-stale.sh $BUILD")
# UD only: a stopped (alive but silent) rank is found by the missing ACKs
[[ ,$NETS, == *,ud,* ]] &&
  KILLS+=(--pre "stopped rank found by UD timeout=$SRC/test/verbs/ud-timeout.sh $BUILD"
         --pre "computing rank kept alive by its heartbeats (UD)=$SRC/test/verbs/ud-busy.sh $BUILD"
         --pre "UD stream: at most 1 ACK per 8 fragments=$SRC/test/verbs/ud-acks.sh $BUILD")

# Boot 1 runs the suite, then the emulated-node jobs: a boot under TCG costs
# about a minute, and the node jobs need nothing but one rxe device
NODES_CMD=true
[[ ${VCOLL_VERBS_NODES:-1} != 0 ]] &&
  NODES_CMD="echo '=== boot 1, part 2: emulated nodes 2+2 and 1+2+3, one rxe device (net auto,rc,ud) ==='
$(printf '%q ' "$SRC/test/verbs/guest-nodes.sh" "$BUILD" --timeout "$TT")"
LIST1=() LIST2=()
[[ " $* " == *" --list "* ]] ||
  LIST1=(--list "$SRC/test/verbs/verbs.list") LIST2=(--list "$SRC/test/verbs/verbs2.list")
status=0
echo "=== boot 1: one rxe device (np $NP1, net $NETS) ==="
"$VM" -n 1 -t "$VMT" bash -c "\"\$0\" \"\$@\"; s=\$?
$NODES_CMD || s=1
exit \$s" "$SUITE" --build "$BUILD" --net "$NETS" --np "$NP1" --timeout "$TT" \
  --pre "selftest rxe0=$ST/selftest" "${KILLS[@]}" "${LIST1[@]}" "$@" || status=1
echo "=== boot 2: two rxe devices (link MTUs $MTU2), ranks split over $HCA2 (np $NP2, net $NETS) ==="
"$VM" -n 2 --mtu "$MTU2" -t "$VMT" "$SUITE" --build "$BUILD" --net "$NETS" --np "$NP2" --timeout "$TT" \
  --hca "$HCA2" --pre "selftest rxe1=VCOLL_SELFTEST_DEV=rxe1 $ST/selftest" \
  --pre "cross-device pingpong rxe1->rxe0=$XDEV" "${LIST2[@]}" "$@" || status=1
[[ $status == 0 ]] && echo "$PROG: all verbs tests passed" || echo "$PROG: FAILURES (see above)"
exit $status
