#!/bin/sh
# emulated-nodes.sh - one machine as several nodes, for multi-node vcoll jobs.
#
#   contrib/vm/emulated-nodes.sh --run LAYOUT [mpirun options...] PROGRAM [ARGS...]
#       LAYOUT is the ranks per node, e.g. 2+2 or 1+2+3 (nodes vnode0, vnode1,
#       ...); runs mpirun.openmpi with a hostfile of those slots, this script
#       as its launch agent and -np = the sum. Needs root (unshare).
#   contrib/vm/emulated-nodes.sh [rsh options] HOST COMMAND...
#       the launch agent itself (mpirun --mca plm_rsh_agent calls it like
#       ssh): runs COMMAND, Open MPI's daemon, in a new UTS namespace whose
#       host name is HOST.
#
# Why this is enough for a real multi-node job: mpirun starts one daemon per
# host, and that daemon is the PMIx server of the ranks on it; each daemon
# sees a different host name, so PMIx reports separate nodes (local peers,
# host names, node list) exactly as on a cluster. Everything else (pids,
# /dev/shm, network) stays shared, which vcoll must and does tolerate: its
# shm segment names carry the node id, and verbs traffic between the nodes
# goes through the (SoftRoCE) device as it would between machines.
# Inside the SoftRoCE guest (contrib/vm/vcoll-vm.sh) the ranks on different
# nodes therefore use rc or ud; on a host without RDMA vc_init says so.
set -eu
me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

if [ "${1-}" = --run ]; then
    [ $# -ge 3 ] || { echo "usage: $0 --run LAYOUT [mpirun options] PROGRAM [ARGS]" >&2; exit 2; }
    layout=$2; shift 2
    case $layout in *[!0-9+]*|+*|*+|*++*|'') echo "$0: bad layout '$layout' (e.g. 2+2, 1+2+3)" >&2; exit 2 ;; esac
    hosts=$(mktemp "${TMPDIR:-/tmp}/vcoll-hosts.XXXXXX")
    trap 'rm -f "$hosts"' EXIT
    np=0 i=0
    for n in $(echo "$layout" | tr + ' '); do
        [ "$n" -ge 1 ] || { echo "$0: a node needs at least one rank ($layout)" >&2; exit 2; }
        echo "vnode$i slots=$n" >>"$hosts"
        np=$((np + n)) i=$((i + 1))
    done
    # no exec: the trap removes the hostfile after mpirun
    mpirun.openmpi --allow-run-as-root --hostfile "$hosts" --mca plm_rsh_agent "$me" \
        --mca oob_tcp_if_include lo --mca btl '^openib' -np "$np" "$@"
    exit $?
fi

# launch agent: skip rsh-style options (-x, -o ...); Open MPI passes none
# with arguments, but be tolerant of "-o X" all the same
while [ $# -gt 0 ]; do
    case $1 in
        -o|-l|-p) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "usage: $0 HOST COMMAND..." >&2; exit 2; }
host=$1; shift
case $host in *[!A-Za-z0-9.-]*|'') echo "$0: bad host name '$host'" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "$0: needs root (a UTS namespace per emulated node)" >&2; exit 2; }
# the command is a shell line (Open MPI sends "VAR=..; export VAR; orted ...")
exec unshare --uts -- /bin/sh -c 'hostname "$0" || exit 125; exec /bin/sh -c "$*"' "$host" "$@"
