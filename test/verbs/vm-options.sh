#!/bin/bash
# make check (host, no guest boot): contrib/vm/vcoll-vm.sh refuses a bad
# option with exit 125 and a message naming it, before it takes the VM lock
# or touches anything -- a typo in a CI script must fail at once, not boot a
# guest with a link MTU rxe cannot use.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
vm=$top_srcdir/contrib/vm/vcoll-vm.sh
fail=0

# expect STATUS MESSAGE [ENV=V...] -- ARGS...
expect() {
    local want=$1 msg=$2 envs=()
    shift 2
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    local err rc
    err=$(env "${envs[@]}" VCOLL_VM_LOCK=none timeout -k 10 20 "$vm" "$@" 2>&1 >/dev/null)
    rc=$?
    if [[ $rc != "$want" || $err != *"$msg"* ]]; then
        echo "FAIL: vcoll-vm.sh $* (${envs[*]}): exit $rc, wanted $want and '$msg'; stderr:"
        printf '%s\n' "$err" | tail -3
        fail=1
    else
        echo "ok: vcoll-vm.sh $* ${envs[*]} -> $rc ($msg)"
    fi
}

expect 125 "--mtu must be 1280..65535" -- --mtu 1000 true
expect 125 "--mtu must be 1280..65535" -- --mtu 65536 true
expect 125 "--mtu must be 1280..65535" -- --mtu 9k true
expect 125 "--mtu must be 1280..65535" VCOLL_VM_MTU=576 -- true
expect 125 "--mtu must be 1280..65535" -- --mtu 1500,1000 true
expect 125 "--mtu takes N or N,N,..." -- --mtu 1500,,9000 true
expect 125 "--mtu needs a value" -- --mtu
expect 125 "-n must be 1..4" -- -n 5 true
expect 125 "-t must be a positive integer" -- -t 0 true
expect 125 "-s must be a positive integer" -- -s x true
expect 125 "unknown option: --bogus" -- --bogus true
# a jumbo MTU passes its check: the next check (-s) is what refuses
expect 125 "-s must be a positive integer" -- --mtu 9000 -s 0 true
out=$(VCOLL_VM_LOCK=none timeout -k 10 20 "$vm" --help 2>/dev/null)
if [[ $? != 0 || $out != *"--mtu N"* ]]; then
    echo "FAIL: vcoll-vm.sh --help: no usage naming --mtu on stdout"
    fail=1
fi
exit $fail
