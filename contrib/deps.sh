#!/bin/bash
# deps.sh -- install what building and testing vcoll needs on Debian 12.
# Runs apt-get update only when a package is missing.
set -eu
pkgs=(build-essential autoconf automake libtool pkg-config bc
      libibverbs-dev rdma-core ibverbs-providers ibverbs-utils perftest
      libhwloc-dev hwloc libpmix-dev openmpi-bin libopenmpi-dev libcunit1-dev
      ${VCOLL_EXTRA_PKGS:-})
need=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "deps: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${need[@]}"
fi
