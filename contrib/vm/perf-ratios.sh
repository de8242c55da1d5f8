#!/usr/bin/env bash
# perf-ratios.sh - vcoll's verbs data path against perftest, in ONE SoftRoCE
# guest boot: ib_send_lat / ib_write_bw (-x 1 -F, over rxe0) and
# vcoll_osu_latency / vcoll_osu_bw on VCOLL_NET=rc and ud, interleaved
# round by round, each number the median of the rounds. Prints issue 12's
# three ratios: RC 8 B latency / ib_send_lat, RC bandwidth / ib_write_bw
# (per size, 64 KiB singled out), UD bandwidth / RC bandwidth.
#
#   contrib/vm/perf-ratios.sh [--build DIR[=LABEL]]... [--rounds N]
#                             [--sizes "8 512 ..."] [--quick] [--here]
#                             [--mtu N]
#
# --build (default: ./_build of this tree) may be given twice to compare two
# builds (e.g. before/after a change) in the same boot; each adds its own
# columns. On the host the script boots the guest with contrib/vm/vcoll-vm.sh
# and runs itself there; --here runs on this machine's verbs devices.
# --mtu sets the guest's link MTU (vcoll-vm.sh --mtu; default 1500, rxe's
# RoCE MTU is then 1024; 9000 gives 4096, as on a jumbo-frame fabric).
# Bandwidths are in MB/s with MB = 10^6 bytes (perftest's MB = 2^20 is
# converted). TCG makes absolute numbers meaningless: read the ratios.
set -uo pipefail

PROG=${0##*/}
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$PROG
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILDS=() LABELS=() ROUNDS=3 HERE=0 QUICK=0 LMTU=
SIZES="8 64 512 4096 32768 65536 262144 1048576"

die() { echo "$PROG: $*" >&2; exit 2; }
usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while (($#)); do
  case $1 in
    --build) [[ -n ${2-} ]] || die "--build needs a directory"
             BUILDS+=("${2%%=*}"); [[ $2 == *=* ]] && LABELS+=("${2#*=}") || LABELS+=(""); shift 2 ;;
    --rounds) ROUNDS=${2-}; shift 2 ;;
    --sizes) SIZES=${2-}; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --mtu) LMTU=${2-}; shift 2 ;;
    --here) HERE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
((${#BUILDS[@]})) || { BUILDS=("$SRC/_build"); LABELS=(""); }
((${#BUILDS[@]} <= 2)) || die "at most two --build"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive integer"
for i in "${!BUILDS[@]}"; do
  [[ -x ${BUILDS[i]}/src/tools/osu/vcoll_osu_bw ]] ||
    die "${BUILDS[i]}: no src/tools/osu/vcoll_osu_bw (build it first)"
  BUILDS[i]=$(cd "${BUILDS[i]}" && pwd)
  [[ -n ${LABELS[i]} ]] || LABELS[i]=$(basename "$(dirname "${BUILDS[i]}")")/$(basename "${BUILDS[i]}")
done

if ((!HERE)); then
  # on the host: the same command line, inside one guest boot
  args=(--here --rounds "$ROUNDS" --sizes "$SIZES")
  ((QUICK)) && args+=(--quick)
  for i in "${!BUILDS[@]}"; do args+=(--build "${BUILDS[i]}=${LABELS[i]}"); done
  vm=("$SRC/contrib/vm/vcoll-vm.sh" -n 1 -t "${VCOLL_PERF_TIMEOUT:-3000}")
  [[ -n $LMTU ]] && vm+=(--mtu "$LMTU")
  exec "${vm[@]}" -- "$SELF" "${args[@]}"
fi

# ------------------------------------------------------------ in the guest
export TMPDIR=/run        # Open MPI's session directory must not be on 9p
for t in ib_send_lat ib_write_bw mpirun.openmpi; do
  command -v $t >/dev/null || die "$t not found (apt-get install perftest openmpi-bin)"
done
DEV=${VCOLL_PERF_DEV:-rxe0}
GIDX=${VCOLL_PERF_GID:-1}
# vcoll_osu_bw keeps 64 messages in flight per iteration: the large sizes
# get few iterations, or one run of UD at 1 MiB takes minutes under TCG
# 20000 round trips (about 1 s under TCG): with 2000, one run was 60 ms and
# a host hiccup moved the latency ratio by 0.3 between identical builds
LAT_ITERS=20000 BW_SECS=2 BW_SMALL="-i 20 -x 2" BW_LARGE="-i 2 -x 1" BW_SPLIT=65536
((QUICK)) && { LAT_ITERS=500; BW_SECS=1; BW_SMALL="-i 5 -x 1"; BW_LARGE="-i 2 -x 1"; }
MPIRUN=(timeout -k 10 600 mpirun.openmpi --allow-run-as-root --oversubscribe
        --mca oob_tcp_if_include lo --mca btl '^openib' -np 2)
OUT=$(mktemp -d "$TMPDIR/perf-ratios.XXXXXX")
declare -A R                # R[key] = "v1 v2 ..." (one value per round)
# every value also goes to stderr at once: a run cut short still shows them
add() { R[$1]="${R[$1]-} $2"; echo "  $1 $2" >&2; }

# perftest: server in the background, client retries while it starts
perf_pair() { # tool size extra-args...
  local tool=$1 size=$2; shift 2
  local srv=$OUT/srv.log cli=$OUT/cli.log
  $tool -d "$DEV" -x "$GIDX" -F -s "$size" "$@" >"$srv" 2>&1 &
  local spid=$! try
  for try in 1 2 3 4 5 6 7 8 9 10; do
    sleep 1
    $tool -d "$DEV" -x "$GIDX" -F -s "$size" "$@" 127.0.0.1 >"$cli" 2>&1 && break
  done
  wait $spid
  cat "$cli"
}

perftest_lat() { # t_avg[usec] of ib_send_lat
  perf_pair ib_send_lat 8 -n "$LAT_ITERS" | awk '$1 == 8 && NF >= 6 { print $6 }'
}

perftest_bw() { # size -> BW average in MB/s (10^6)
  # perftest's default send queue (128 writes) holds 128 MiB at 1 MiB; rxe
  # then drops and retries whole bursts and ib_write_bw completed nothing in
  # 2 s (it printed 0 iterations). So at most 16 MiB in flight: the default
  # up to 128 KiB writes, 16 writes at 1 MiB (vcoll keeps 4 READ chunks of
  # 64 KiB in flight per peer for the same reason, rc.h).
  local depth=$(( (16 << 20) / $1 ))
  ((depth > 128)) && depth=128
  perf_pair ib_write_bw "$1" -D "$BW_SECS" -t "$depth" |
    awk -v s="$1" '$1 == s && NF >= 4 { printf "%.2f\n", $4 * 1.048576 }'
}

# vcoll_osu_*: one table row per size, "size value"
vcoll_run() { # build net prog args...
  local b=$1 net=$2 prog=$3; shift 3
  "${MPIRUN[@]}" -x VCOLL_NET="$net" "$b/src/tools/osu/$prog" "$@" 2>"$OUT/vcoll.err" |
    awk '/^[0-9]/ { print $1, $2 }'
}

# "lo:hi" of the sizes in a band (small: <= BW_SPLIT), empty when none
band() {
  printf '%s\n' $SIZES | awk -v b="$1" -v k="$BW_SPLIT" \
    '(b == "small") == ($1 <= k) { if (!lo) lo = $1; hi = $1 } END { if (lo) print lo ":" hi }'
}

# UD's ceiling on this device: perftest's own UD stream (ib_send_bw -c UD)
# of datagrams one path MTU long, the largest UD can carry, posted as vcoll
# posts them: lists of 32 work requests, one completion per 16 (-l 32 -Q 16;
# without them perftest rang a doorbell and took a completion per datagram
# and reached half of that). Every UD byte, vcoll's included, goes in such
# datagrams, one work request each; what rxe spends per work request is the
# same for both. The same stream on RC (sends one MTU long, so again one
# work request per MTU) shows that cost is per work request, not UD's own:
# an RC write of 64 KiB is one work request for 64 KiB.
AMTU=$(ibv_devinfo -d "$DEV" 2>/dev/null | awk '/active_mtu/ { print $2; exit }')
perftest_mtu_bw() { # UD|RC -> MB/s of MTU-sized sends
  # 0.00 (seen in one round of one boot) means the run moved nothing, as
  # ib_write_bw's 1 MiB runs did before the depth cap: a failed run, not
  # the device's rate, so it must not pull the median down
  perf_pair ib_send_bw "$AMTU" -c "$1" -l 32 -Q 16 -D "$BW_SECS" |
    awk -v s="$AMTU" '$1 == s && NF >= 4 { if ($4 > 0) printf "%.2f\n", $4 * 1.048576; else print "nan" }'
}

round() {
  local r=$1 i v line
  echo "round $r/$ROUNDS" >&2
  v=$(perftest_lat); add lat.ib "$v"
  if [[ $AMTU =~ ^[0-9]+$ ]]; then
    v=$(perftest_mtu_bw UD); add bw.ibud "${v:-nan}"
    v=$(perftest_mtu_bw RC); add bw.ibrcm "${v:-nan}"
  fi
  for i in "${!BUILDS[@]}"; do
    for net in rc ud; do
      v=$(vcoll_run "${BUILDS[i]}" $net vcoll_osu_latency -m 8:8 -i "$LAT_ITERS" -x 100 | awk '{ print $2 }')
      add "lat.$i.$net" "${v:-nan}"
    done
  done
  for s in $SIZES; do
    v=$(perftest_bw "$s"); add "bw.ib.$s" "${v:-nan}"
  done
  for i in "${!BUILDS[@]}"; do
    for net in rc ud; do
      # one run per band covers its sizes (the tool doubles from min to max)
      : >"$OUT/bw"
      for b in small large; do
        local m it=$BW_SMALL
        m=$(band $b); [[ -n $m ]] || continue
        [[ $b == large ]] && it=$BW_LARGE
        vcoll_run "${BUILDS[i]}" $net vcoll_osu_bw -m "$m" $it >>"$OUT/bw"
      done
      for s in $SIZES; do
        v=$(awk -v s="$s" '$1 == s { print $2 }' "$OUT/bw")
        add "bw.$i.$net.$s" "${v:-nan}"
      done
    done
  done
}

med() { # median of the values of key $1
  printf '%s\n' ${R[$1]-} | grep -v -e '^nan$' -e '^$' | sort -g |
    awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }
hsize() { awk -v s="$1" 'BEGIN { if (s >= 1048576) printf "%dM", s / 1048576; else if (s >= 1024) printf "%dK", s / 1024; else print s }'; }

for ((r = 1; r <= ROUNDS; r++)); do round $r; done

echo "# perf-ratios: $(uname -r), $DEV (active MTU ${AMTU:-?}), $ROUNDS rounds interleaved, medians; MB = 10^6 B"
for i in "${!BUILDS[@]}"; do echo "# build $((i + 1)): ${LABELS[i]} (${BUILDS[i]})"; done
echo
echo "## 8 B latency (us)          target: rc / ib_send_lat <= 1.2"
ib=$(med lat.ib)
printf '%-22s %10s\n' "ib_send_lat (t_avg)" "$ib"
for i in "${!BUILDS[@]}"; do
  rc=$(med "lat.$i.rc") ud=$(med "lat.$i.ud")
  printf '%-22s %10s   rc/ib_send_lat %s   (ud %s)\n' "vcoll rc [$((i + 1))]" "$rc" "$(ratio "$rc" "$ib")" "$ud"
done
echo
echo "## bandwidth (MB/s)          targets: rc / ib_write_bw >= 0.95 at 64K, ud / rc >= 0.8"
hdr=$(printf '%-6s %11s' size ib_write_bw)
for i in "${!BUILDS[@]}"; do hdr+=$(printf ' %9s %9s %8s %6s' "rc[$((i + 1))]" "ud[$((i + 1))]" "rc/ib" "ud/rc"); done
echo "$hdr"
for s in $SIZES; do
  ib=$(med "bw.ib.$s")
  line=$(printf '%-6s %11s' "$(hsize "$s")" "$ib")
  for i in "${!BUILDS[@]}"; do
    rc=$(med "bw.$i.rc.$s") ud=$(med "bw.$i.ud.$s")
    line+=$(printf ' %9s %9s %8s %6s' "$rc" "$ud" "$(ratio "$rc" "$ib")" "$(ratio "$ud" "$rc")")
  done
  echo "$line"
done
echo
# Per-round ratios: the two runs of a ratio are minutes apart at most, so
# a slow spell of the host (TCG shares it) hits both; the median of the
# per-round ratios is steadier than the ratio of the medians above.
rmed() { # key-a key-b: median over rounds of a[r] / b[r]
  # (no process substitution: the guest has no /dev/fd)
  local -a a=(${R[$1]-}) b=(${R[$2]-})
  local k
  for k in "${!a[@]}"; do echo "${a[k]} ${b[k]-nan}"; done |
    awk '$1 != "nan" && $2 != "nan" && $2 > 0 { print $1 / $2 }' | sort -g |
    awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
if [[ -n ${R[bw.ibud]-} ]]; then
  echo "## UD ceiling: ib_send_bw -c UD -l 32 -Q 16, ${AMTU}-byte datagrams: $(med bw.ibud) MB/s"
  echo "same on RC (ib_send_bw -c RC, ${AMTU}-byte sends): $(med bw.ibrcm) MB/s"
  if [[ -n ${R[bw.ib.65536]-} ]]; then
    printf 'device: UD stream / ib_write_bw 64K: %s (%s)   RC %s-byte sends / ib_write_bw 64K: %s (%s)\n' \
      "$(ratio "$(med bw.ibud)" "$(med bw.ib.65536)")" "$(rmed bw.ibud bw.ib.65536)" "$AMTU" \
      "$(ratio "$(med bw.ibrcm)" "$(med bw.ib.65536)")" "$(rmed bw.ibrcm bw.ib.65536)"
  fi
  for i in "${!BUILDS[@]}"; do
    printf '[%d] vcoll UD 64K / ib_send_bw UD: %s (%s)   vcoll UD 1M / ib_send_bw UD: %s (%s)\n' $((i + 1)) \
      "$(ratio "$(med "bw.$i.ud.65536")" "$(med bw.ibud)")" "$(rmed "bw.$i.ud.65536" bw.ibud)" \
      "$(ratio "$(med "bw.$i.ud.1048576")" "$(med bw.ibud)")" "$(rmed "bw.$i.ud.1048576" bw.ibud)"
  done
  echo
fi
echo "## issue 12 ratios (ratio of medians; median of per-round ratios in brackets)"
for i in "${!BUILDS[@]}"; do
  printf '[%d] RC 8 B latency / ib_send_lat: %s (%s)   RC 64K bw / ib_write_bw: %s (%s)   UD 64K bw / RC 64K bw: %s (%s)\n' \
    $((i + 1)) "$(ratio "$(med "lat.$i.rc")" "$(med lat.ib)")" "$(rmed "lat.$i.rc" lat.ib)" \
    "$(ratio "$(med "bw.$i.rc.65536")" "$(med bw.ib.65536)")" "$(rmed "bw.$i.rc.65536" bw.ib.65536)" \
    "$(ratio "$(med "bw.$i.ud.65536")" "$(med "bw.$i.rc.65536")")" "$(rmed "bw.$i.ud.65536" "bw.$i.rc.65536")"
done
echo
echo "## every round's values"
for k in "${!R[@]}"; do echo "$k:${R[$k]}"; done | sort
rm -rf "$OUT"
