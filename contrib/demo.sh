#!/bin/bash
# demo.sh -- install dependencies, build vcoll, run the examples under mpirun.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${VCOLL_BUILD:-$top/_build}
"$top/contrib/deps.sh"
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j2 >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { echo "\$ $*"; timeout -k 10 300 "$@"; }
mpi="mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl self,vader"
run $mpi -np 4 ./examples/hello
run $mpi -np 2 ./examples/pingpong -m 4194304
if [ -x ./src/tools/vcoll_info ]; then run ./src/tools/vcoll_info --config; fi
