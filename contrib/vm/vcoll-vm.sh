#!/usr/bin/env bash
# vcoll-vm.sh - run one command inside a throw-away QEMU guest that has
# SoftRoCE (rdma_rxe) devices, so vcoll's verbs transport can be exercised on
# hosts whose kernel has no RDMA support.  The guest's root is the host's /
# (virtio-9p), so the command runs at the same path with the same binaries.
#
#   vcoll-vm.sh [-n NRXE] [-t SECS] [-m MEM] [-s VCPUS] [-v] [--] CMD [ARG...]
#   vcoll-vm.sh --prepare      # install packages, build kernel/initramfs cache
#   vcoll-vm.sh --selftest     # ibv_devinfo, test/verbs/selftest, perftest
#
# Exit status: CMD's status (128+N if killed by signal N); 124 timeout;
# 125 setup failure (the guest console tail is printed); 129/130/143 when we
# are hung up / interrupted / terminated.  Our QEMU is killed in every case.
# See contrib/vm/README.md.
set -euo pipefail

PROG=${0##*/}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF_HASH=$(sha1sum "${BASH_SOURCE[0]}" | cut -c1-10)

CACHE=${VCOLL_VM_DIR:-/var/tmp/vcoll-vm}
LOCK=${VCOLL_VM_LOCK:-/tmp/vcoll-vm.lock}   # "none": do not serialize VMs
NRXE=${VCOLL_VM_NRXE:-1}
TIMEOUT=${VCOLL_VM_TIMEOUT:-900}
MEM=${VCOLL_VM_MEM:-1G}
SMP=${VCOLL_VM_SMP:-2}
LMTU=${VCOLL_VM_MTU:-1500}
VERBOSE=0
MODE=run
QPID= ; PIDS=() ; RUNDIR=     # our QEMU, helper processes, per-run dir
# Guest-internal addresses; there is no NIC, nothing can leave the guest.
NETPFX=10.77.0

die()  { echo "$PROG: $*" >&2; exit 125; }
say()  { [[ $VERBOSE == 0 ]] || echo "$PROG: $*" >&2; }

usage() {
  cat <<EOF
usage: $PROG [options] [--] CMD [ARG...]      run CMD in \$PWD inside the guest
       $PROG --prepare | --selftest [options]
  -n NRXE    rxe devices rxe0..rxe(N-1), 1..4 (default $NRXE)
  -t SECS    timeout for the whole run, exit 124 when hit (default $TIMEOUT)
  -m MEM     guest memory (default $MEM)
  -s VCPUS   guest vCPUs (default $SMP)
  --mtu N[,N...]  link MTU of the rxe netdevs (default $LMTU; 9000 gives rxe
             the 4096-byte RoCE MTU of a jumbo-frame fabric); a list gives
             rxe0, rxe1, ... their own (the last entry for the rest), e.g.
             1500,9000: rxe0 at RoCE MTU 1024, rxe1 at 4096 (mixed fabric)
  -v         progress messages and the guest console on stderr
  --prepare  one-time setup (packages, kernel, initramfs), no boot
  --selftest ibv_devinfo + test/verbs/selftest + ib_send_lat + ib_write_bw
env: VCOLL_VM_DIR (cache, default /var/tmp/vcoll-vm), VCOLL_VM_LOCK
     (default /tmp/vcoll-vm.lock, "none" disables), VCOLL_VM_NRXE,
     VCOLL_VM_TIMEOUT, VCOLL_VM_MEM, VCOLL_VM_SMP, VCOLL_VM_MTU
EOF
}

while (($#)); do
  case $1 in
    -n) NRXE=${2-}; shift 2 || die "-n needs a value" ;;
    -t) TIMEOUT=${2-}; shift 2 || die "-t needs a value" ;;
    -m) MEM=${2-}; shift 2 || die "-m needs a value" ;;
    -s) SMP=${2-}; shift 2 || die "-s needs a value" ;;
    --mtu) LMTU=${2-}; shift 2 || die "--mtu needs a value" ;;
    -v) VERBOSE=1; shift ;;
    --prepare) MODE=prepare; shift ;;
    --selftest) MODE=selftest; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) usage >&2; die "unknown option: $1" ;;
    *) break ;;
  esac
done
[[ $MODE != run || $# -gt 0 ]] || { usage >&2; exit 125; }
[[ $NRXE =~ ^[1-4]$ ]] || die "-n must be 1..4"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "-t must be a positive integer"
for m in ${LMTU//,/ }; do
  [[ $m =~ ^[0-9]+$ ]] && ((m >= 1280 && m <= 65535)) || die "--mtu must be 1280..65535 (each entry of a list)"
done
[[ $LMTU =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--mtu takes N or N,N,..."
[[ $SMP =~ ^[1-9][0-9]*$ ]] || die "-s must be a positive integer"
[[ $(id -u) == 0 ]] || die "must run as root (apt, and 9p passthrough as root)"

# ---------------------------------------------------------------- packages
# Each entry: a file that must exist -> the package that provides it.
ensure_packages() {
  local -A need=(
    [/usr/bin/qemu-system-x86_64]=qemu-system-x86
    [/bin/busybox]=busybox-static
    [/usr/sbin/depmod]=kmod [/usr/bin/cpio]=cpio [/usr/bin/xz]=xz-utils
    [/usr/bin/readelf]=binutils [/usr/sbin/ip]=iproute2 [/usr/bin/rdma]=iproute2
    [/usr/bin/ibv_devinfo]=ibverbs-utils [/usr/bin/ib_write_bw]=perftest
    [/usr/sbin/rdma-ndd]=rdma-core
  )
  local f missing=()
  for f in "${!need[@]}"; do
    [[ -e $f || -e /usr$f ]] || missing+=("${need[$f]}")
  done
  # The initramfs has no libc: busybox must be the static build.
  if [[ -e /bin/busybox ]] && ldd /bin/busybox >/dev/null 2>&1; then missing+=(busybox-static); fi
  compgen -G '/usr/lib/*/libibverbs/librxe-rdmav*.so' >/dev/null || missing+=(ibverbs-providers)
  ((${#missing[@]})) || return 0
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "$PROG: installing ${missing[*]}" >&2
  local apt=(apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends)
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have empty package lists: update once, then retry.
  "${apt[@]}" "${missing[@]}" >&2 </dev/null || {
    apt-get -o DPkg::Lock::Timeout=600 update >&2 </dev/null || true
    "${apt[@]}" "${missing[@]}" >&2 </dev/null || die "apt-get install ${missing[*]} failed"
  }
}

# ---------------------------------------------------------------- kernel
# Guest modules; their dependencies come from modprobe --show-depends.
# crc32_generic: rdma_rxe needs the "crc32" shash for the ICRC and the guest
# cannot autoload it, so without it `rdma link add` fails with ENOENT.
MODULES="virtio_pci virtio_console 9pnet_virtio 9p veth dummy bridge \
crc32_generic ib_core ib_uverbs rdma_ucm rdma_rxe"

kernel_pkg() {
  local p
  p=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  if [[ -z $p ]]; then
    apt-get -o DPkg::Lock::Timeout=600 update >&2 </dev/null || true
    p=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  fi
  [[ -n $p ]] || die "cannot find the Debian kernel package behind linux-image-amd64"
  echo "$p"
}

# Sets KDIR (holds vmlinux, mods/*.ko, mods/order); built once per package.
prepare_kernel() {
  local pkg; pkg=$(kernel_pkg)
  KDIR=$CACHE/$pkg
  [[ -f $KDIR/done ]] && return 0
  echo "$PROG: preparing $pkg in $KDIR (one time)" >&2
  rm -rf "$KDIR"; mkdir -p "$KDIR/deb" "$KDIR/mods"
  # Downloaded, never installed: the host kernel stays untouched.
  (cd "$KDIR/deb" && apt-get -o APT::Sandbox::User=root download "$pkg" >&2 </dev/null) \
    || die "apt-get download $pkg failed"
  local x=$KDIR/x; dpkg-deb -x "$KDIR"/deb/*.deb "$x" || die "dpkg-deb -x failed"
  [[ -d $x/lib/modules ]] || { mkdir -p "$x/lib"; ln -s ../usr/lib/modules "$x/lib/modules"; }
  local kver; kver=$(ls "$x/lib/modules" | head -1)
  grep -q '^CONFIG_RDMA_RXE=[ym]' "$x/boot/config-$kver" || die "$pkg lacks CONFIG_RDMA_RXE"
  # TCG spends ~7 s decompressing an xz bzImage; the ELF vmlinux inside it
  # has a PVH entry note, which QEMU's -kernel boots directly.
  local off ok=0
  for off in $(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$x/boot/vmlinuz-$kver" | cut -d: -f1); do
    tail -c +$((off + 1)) "$x/boot/vmlinuz-$kver" | xz -dc --single-stream > "$KDIR/vmlinux" 2>/dev/null || true
    if readelf -n "$KDIR/vmlinux" 2>/dev/null | grep -q 'Xen.*0x00000012'; then ok=1; break; fi
  done
  if [[ $ok == 0 ]]; then
    echo "$PROG: warning: no PVH vmlinux found, booting the bzImage (slower)" >&2
    cp "$x/boot/vmlinuz-$kver" "$KDIR/vmlinux"
  fi
  # Debian's package carries no modules.dep (postinst makes it): build it here.
  depmod -b "$x" "$kver" || die "depmod failed"
  local want m f deps order=()
  for want in $MODULES; do
    # prints "insmod PATH" lines in load order (dependencies first)
    deps=$(modprobe -d "$x" -S "$kver" --show-depends "$want") || die "module $want missing in $kver"
    for f in $(awk '$1=="insmod" {print $2}' <<<"$deps"); do
      m=${f##*/}; m=${m%%.ko*}
      [[ " ${order[*]} " == *" $m "* ]] && continue
      case $f in
        *.xz) xz -dc "$f" ;; *.gz) gzip -dc "$f" ;; *.zst) zstd -dc "$f" ;; *) cat "$f" ;;
      esac > "$KDIR/mods/$m.ko" || die "cannot unpack module $f"
      order+=("$m")
    done
  done
  printf '%s\n' "${order[@]}" > "$KDIR/mods/order"
  echo "$kver" > "$KDIR/kver"
  rm -rf "$x"
  touch "$KDIR/done"
}

# ---------------------------------------------------------------- guest /init
guest_init() {
cat <<'EOF'
#!/bin/busybox sh
# vcoll guest /init: modules, host / over 9p, rxe devices, run the command.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc none /proc; mount -t sysfs none /sys; mount -t devtmpfs none /dev
exec </dev/null >/dev/console 2>&1
arg() { sed -n "s/.*vcoll\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
RUN=$(arg run); NRXE=$(arg nrxe); PFX=$(arg pfx); LMTU=$(arg mtu)
ST=/dev/null
msg() { echo "vcoll-init [$(cut -d' ' -f1 /proc/uptime)] $*"; }
bail() { msg "SETUP FAILED: $*"; echo "setup $*" > $ST; echo "rc 125" > $ST; poweroff -f; }
for m in $(cat /mods/order); do
  insmod /mods/$m.ko || bail "insmod $m"
done
msg "modules loaded"
# virtio-serial ports appear asynchronously; find ours by name
n=0
while [ $n -lt 250 ]; do
  for p in /sys/class/virtio-ports/*; do
    [ -r $p/name ] && ln -sf /dev/${p##*/} /dev/vc-$(cat $p/name) 2>/dev/null
  done
  [ -e /dev/vc-st ] && [ -e /dev/vc-out ] && [ -e /dev/vc-err ] && break
  n=$((n+1)); usleep 20000
done
[ -e /dev/vc-st ] && ST=/dev/vc-st
[ -e /dev/vc-out ] && [ -e /dev/vc-err ] || bail "virtio-serial ports missing"
R=/root
mkdir -p $R
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose host $R || bail "9p mount"
mount -t proc none $R/proc; mount -t sysfs none $R/sys; mount -t devtmpfs none $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o ptmxmode=666 none $R/dev/pts
mount -t tmpfs -o mode=1777 none $R/dev/shm
mount -t tmpfs -o mode=755 none $R/run
# busybox's chroot would run its own applets for bare names (its ip cannot
# make veths/bridges), so host tools are always called by absolute path.
ip() { chroot $R /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin ip "$@" || bail "ip $*"; }
rxe() { chroot $R /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin rdma link add $1 type rxe netdev $2 || bail "rdma link add $1"; }
sys() { echo $2 > /proc/sys/net/ipv4/conf/$1; }
# Open MPI rejects the kernel's default node name "(none)"
hostname vcoll-vm
ip link set lo up
# device k's link MTU: entry k of vcoll.mtu, else its last entry
mtu_of() {
  m=$(echo "$LMTU" | cut -s -d, -f$(($1+1)))
  [ -n "$m" ] || m=${LMTU##*,}
  echo ${m:-1500}
}
MAXMTU=0
for m in $(echo "$LMTU" | tr , ' '); do [ "$m" -gt $MAXMTU ] && MAXMTU=$m; done
if [ "$NRXE" = 1 ]; then
  # one device: a dummy netdev; every packet is rxe-internal loopback
  ip link add rxe0d type dummy
  ip link set rxe0d mtu $(mtu_of 0)
  ip addr add $PFX.1/24 dev rxe0d
  ip link set rxe0d up
  rxe rxe0 rxe0d
else
  # rxeK sits on veth rxeKd ($PFX.K+1); the peers are bridged.  The kernel
  # would route traffic between two local addresses through lo, where rxe
  # drops it silently, so policy routing sends locally generated packets
  # from address K out of rxeKd (tables 100+K), while traffic from an
  # address to itself (same device) still uses the local table.
  for c in all default; do
    sys $c/accept_local 1; sys $c/rp_filter 0; sys $c/arp_ignore 1; sys $c/arp_announce 2
  done
  # RoCE assumes a lossless fabric (PFC). A veth hands every packet to the
  # per-CPU backlog, which drops past netdev_max_backlog (1000): an 8 MiB
  # RDMA READ burst to 3 peers overflowed it (softnet_stat: 7..179 drops a
  # run), rxe 6.1 logged "Failed sending ACK", and 1 run in 8 ended in a
  # completer WARN and a flushed QP. With room for any burst: 0 drops in 22.
  echo 100000 > /proc/sys/net/core/netdev_max_backlog
  ip link add rxebr type bridge
  # the bridge takes any frame; each port then forwards only what fits its
  # link, as on a fabric of mixed MTUs
  ip link set rxebr mtu $MAXMTU
  ip link set rxebr up
  ip rule add pref 100 table local
  ip rule del pref 0
  k=0
  while [ $k -lt $NRXE ]; do
    a=$PFX.$((k+1))
    ip link add rxe${k}d type veth peer name rxe${k}p
    ip link set rxe${k}d mtu $(mtu_of $k)
    ip link set rxe${k}p mtu $(mtu_of $k)
    ip link set rxe${k}p master rxebr
    ip link set rxe${k}p up
    ip addr add $a/24 dev rxe${k}d
    ip link set rxe${k}d up
    ip rule add pref 5 from $a to $a table local
    ip route add $PFX.0/24 dev rxe${k}d src $a table $((100+k))
    ip rule add pref $((10+k)) iif lo from $a table $((100+k))
    rxe rxe$k rxe${k}d
    k=$((k+1))
  done
fi
msg "ready: $(ls /sys/class/infiniband | tr '\n' ' ')"
echo "ready" > $ST
ulimit -l unlimited; ulimit -n 65536
chroot $R /bin/bash $RUN/cmd.sh </dev/null >/dev/vc-out 2>/dev/vc-err
rc=$?
msg "command exit status $rc"
echo "rc $rc" > $ST
sync
poweroff -f
EOF
}

# Sets INITRD; rebuilt when the kernel, module set or this script changes.
build_initramfs() {
  INITRD=$CACHE/initramfs-$(cat "$KDIR/kver")-$SELF_HASH.cpio.gz
  [[ -s $INITRD ]] && return 0
  say "building $INITRD"
  local d; d=$(mktemp -d "$CACHE/initrd.XXXXXX")
  mkdir -p "$d"/{bin,dev,proc,sys,run,mods}
  cp /bin/busybox "$d/bin/busybox"
  cp "$KDIR"/mods/*.ko "$KDIR/mods/order" "$d/mods/"
  guest_init > "$d/init"; chmod 755 "$d/init"
  (cd "$d" && find . | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$INITRD.tmp" || die "cpio failed"
  mv "$INITRD.tmp" "$INITRD"
  rm -rf "$d"
  find "$CACHE" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -path "$INITRD" -delete
}

# ---------------------------------------------------------------- VM lock
# One VM at a time on the box.  Callers may already hold the lock through
# `flock $LOCK vcoll-vm.sh ...`; taking it again here would deadlock, so if
# the holder is one of our ancestors we proceed.
take_lock() {
  [[ $LOCK == none ]] && return 0
  exec {LOCKFD}>>"$LOCK"
  flock -n "$LOCKFD" && return 0
  local ino holders p
  ino=$(stat -c %i "$LOCK")
  holders=" $(awk -v i="$ino" '$2=="FLOCK" { split($6, a, ":"); if (a[3]==i) print $5 }' /proc/locks | tr '\n' ' ') "
  p=$$
  while [[ $p -gt 1 ]]; do
    [[ $holders == *" $p "* ]] && { exec {LOCKFD}>&-; return 0; }
    p=$(awk '/^PPid:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 1)
  done
  echo "$PROG: waiting for $LOCK (another VM is running)" >&2
  # in the background so that signals are handled while we wait; the lock
  # belongs to the shared open file, so it stays ours after flock exits
  flock "$LOCKFD" & PIDS+=($!)
  wait $! || die "flock $LOCK failed"
}

# ---------------------------------------------------------------- selftest
selftest_script() {
  local st=$1
  cat <<EOF
set -e
t() { local s=\$EPOCHREALTIME; echo "+ \$*"; "\$@"; echo "  [\$* took \$(awk -v a=\$s -v b=\$EPOCHREALTIME 'BEGIN{printf "%.2f", b-a}') s]"; }
t ibv_devinfo -d rxe0
EOF
  if [[ -n $st ]]; then echo "t $st"; else echo 'echo "selftest binary not built (need gcc + libibverbs-dev): skipped"'; fi
  cat <<'EOF'
# perftest: -F because cpufreq checks fail under TCG; GID index 1 = ::ffff:IPv4.
# The client retries while a slow (loaded, TCG) server is still starting.
retry() { local i; for i in 1 2 3 4 5 6 7 8 9 10; do "$@" && return 0; sleep 1; done; return 1; }
ib_send_lat -d rxe0 -x 1 -F -n 1000 >/run/lat.srv 2>&1 & sleep 1
t retry ib_send_lat -d rxe0 -x 1 -F -n 1000 127.0.0.1; wait $!
ib_write_bw -d rxe0 -x 1 -F -D 3 >/run/bw.srv 2>&1 & sleep 1
t retry ib_write_bw -d rxe0 -x 1 -F -D 3 127.0.0.1; wait $!
echo "vcoll-vm selftest: OK"
EOF
}

build_selftest() { # prints the binary path, or nothing
  local src=$HERE/../../test/verbs/selftest.c bin=$CACHE/selftest
  [[ -f $src ]] || return 0
  if [[ ! -x $bin || $src -nt $bin ]]; then
    gcc -O2 -Wall -o "$bin" "$src" -libverbs >&2 || { echo "$PROG: warning: cannot build $src" >&2; return 0; }
  fi
  echo "$bin"
}

# ---------------------------------------------------------------- run
cleanup() {
  local rc=$?
  if [[ -n $QPID ]]; then kill "$QPID" 2>/dev/null || true; sleep 0.3; kill -9 "$QPID" 2>/dev/null || true; fi
  local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n $RUNDIR ]] && rm -rf "$RUNDIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The guest runs cmd.sh with the host's bash: caller's environment and cwd.
write_cmd() {
  local v
  {
    for v in $(compgen -e); do
      case $v in PWD|OLDPWD|SHLVL|_|BASH_*|SHELLOPTS|BASHOPTS|HOSTNAME|SSH_*|TERMCAP) continue ;; esac
      printf 'export %s=%q\n' "$v" "${!v}"
    done
    printf 'cd %q || exit 125\n' "$PWD"
    printf 'exec'; printf ' %q' "$@"; echo
  } > "$RUNDIR/cmd.sh"
}

setup_failed() {
  echo "$PROG: guest setup failed${1:+: $1}" >&2
  echo "---- guest console (tail) ----" >&2
  tail -n 25 "$RUNDIR/console" >&2 2>/dev/null || true
  [[ -s $RUNDIR/qemu.err ]] && { echo "---- qemu ----" >&2; cat "$RUNDIR/qemu.err" >&2; }
  exit 125
}

main() {
  ensure_packages
  mkdir -p "$CACHE"
  # concurrent first runs must not build the cache twice
  exec {CFD}>>"$CACHE/.lock"; flock "$CFD"
  prepare_kernel
  build_initramfs
  exec {CFD}>&-
  if [[ $MODE == prepare ]]; then
    echo "$PROG: ready ($(cat "$KDIR/kver"), $INITRD)" >&2
    build_selftest >/dev/null
    return 0
  fi
  if [[ $MODE == selftest ]]; then
    local st; st=$(build_selftest)
    set -- /bin/bash -c "$(selftest_script "$st")"
  fi
  take_lock
  mkdir -p "$CACHE/run"
  RUNDIR=$(mktemp -d "$CACHE/run/XXXXXX")
  write_cmd "$@"
  mkfifo "$RUNDIR/out" "$RUNDIR/err"
  : > "$RUNDIR/st"
  # Readers first: QEMU's file chardev opens the fifos for writing at start.
  cat "$RUNDIR/out" & PIDS+=($!)
  cat "$RUNDIR/err" >&2 & PIDS+=($!)
  local append="console=ttyS0 quiet loglevel=3 panic=-1 vcoll.run=$RUNDIR vcoll.nrxe=$NRXE vcoll.pfx=$NETPFX vcoll.mtu=$LMTU"
  # shellcheck disable=SC2054  # commas belong to QEMU's option syntax
  local q=(qemu-system-x86_64 -name vcoll-vm -machine pc -accel tcg -cpu max
    -m "$MEM" -smp "$SMP" -nodefaults -no-user-config -display none -no-reboot
    -kernel "$KDIR/vmlinux" -initrd "$INITRD" -append "$append"
    -serial "file:$RUNDIR/console"
    -fsdev local,id=host,path=/,security_model=none,multidevs=remap
    -device virtio-9p-pci,fsdev=host,mount_tag=host
    -device virtio-serial-pci,id=vs
    -chardev "file,id=out,path=$RUNDIR/out" -device virtserialport,bus=vs.0,chardev=out,name=out
    -chardev "file,id=err,path=$RUNDIR/err" -device virtserialport,bus=vs.0,chardev=err,name=err
    -chardev "file,id=st,path=$RUNDIR/st" -device virtserialport,bus=vs.0,chardev=st,name=st)
  # deliberately no -netdev: the guest has no NIC at all
  say "${q[*]}"
  local t0=$SECONDS
  "${q[@]}" </dev/null >"$RUNDIR/qemu.err" 2>&1 & QPID=$!
  if [[ $VERBOSE == 1 ]]; then
    tail -n +1 -F --pid="$QPID" "$RUNDIR/console" 2>/dev/null | sed -u 's/^/[guest] /' >&2 & PIDS+=($!)
  fi
  local timedout=0
  while kill -0 "$QPID" 2>/dev/null; do
    if ((SECONDS - t0 >= TIMEOUT)); then timedout=1; break; fi
    sleep 0.2
  done
  if [[ $timedout == 1 ]]; then
    kill "$QPID" 2>/dev/null || true; sleep 0.5; kill -9 "$QPID" 2>/dev/null || true
  fi
  local qrc=0; wait "$QPID" 2>/dev/null || qrc=$?
  QPID=
  # the readers see EOF once QEMU closed the fifos; give them time to drain
  local p _
  for p in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  say "VM ran $((SECONDS - t0)) s"
  if [[ $timedout == 1 ]]; then
    echo "$PROG: timeout after ${TIMEOUT}s; VM killed" >&2
    echo "---- guest console (tail) ----" >&2; tail -n 10 "$RUNDIR/console" >&2 2>/dev/null || true
    return 124
  fi
  grep -q '^setup ' "$RUNDIR/st" && setup_failed "$(sed -n 's/^setup //p' "$RUNDIR/st" | head -1)"
  local rc; rc=$(sed -n 's/^rc \([0-9]*\)$/\1/p' "$RUNDIR/st" | tail -1)
  [[ -n $rc ]] || setup_failed "the VM stopped without reporting a status (qemu status $qrc)"
  return "$rc"
}

rc=0; main "$@" || rc=$?
exit "$rc"
