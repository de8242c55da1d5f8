#!/bin/bash
# hier-ratios.sh OUTDIR - the table of test/verbs/guest-hier-ratios.sh's
# runs: per layout, net, collective and size the median over repetitions
# (us) of flat, hier and shm, and the ratios hier/flat and shm/flat (< 1:
# faster than flat). Markdown on stdout.
set -u
d=${1:?usage: $0 OUTDIR}
for f in "$d"/*.txt; do
  [ -s "$f" ] || continue
  b=$(basename "$f" .txt); layout=${b%.*}; net=${b##*.}
  printf '\n### %s ranks per node, %s between nodes\n\n' "$layout" "$net"
  echo "| collective | size | flat us | hier us | shm us | hier/flat | shm/flat |"
  echo "|---|---|---|---|---|---|---|"
  awk '!/ERROR/ { v[$1" "$3" "$2] = v[$1" "$3" "$2] " " $5; k[$1" "$3] = 1; order[$1" "$3] = NR }
       function med(s,   n, a, i, j, t) { n = split(s, a, " "); if (!n) return "-";
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
         return a[int((n + 1) / 2)] }
       END { for (key in k) {
               f = med(v[key" flat"]); h = med(v[key" hier"]); s = med(v[key" shm"]);
               printf "%d|%s|%s|%s|%s|%s|%.2f|%.2f\n", order[key], key, "", f, h, s, h / f, s / f } }' "$f" |
    sort -t'|' -k1,1n | awk -F'|' '{ split($2, ks, " "); printf "| %s | %s | %s | %s | %s | %s | %s |\n", ks[1], ks[2], $4, $5, $6, $7, $8 }'
done
