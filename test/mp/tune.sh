#!/bin/bash
# make check: selection as data under a launcher. Forced algorithms and the
# rules table in force must be the same on every rank (else vc_init ends
# the job naming what differs); a malformed rules file is refused at
# vc_init with its file, line and reason; vcoll_tune writes a file that
# vc_init takes, and collectives under it give right results.
set -u
pass=0 fail=0
ok()  { echo "PASS: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; echo "$2" | sed 's/^/    | /' | tail -12; fail=$((fail + 1)); }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 VCOLL_TUNE_FILE=builtin
RUN=(timeout -k 10 120 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo --mca btl self,vader)
tmp=$(mktemp -d /tmp/vcoll-tune.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
hello=$PWD/examples/hello

# -k: after a rank ends the job (boot_abort), Open MPI 4.1's mpirun now and
# then deadlocks in PMIx_server_finalize with every rank gone; the message
# was printed, only mpirun must be killed.
# rank 1 alone sets $1=$2: a wrapper, since mpirun -x sets every rank alike
cat > "$tmp/rank1" <<'W'
#!/bin/sh
[ "$OMPI_COMM_WORLD_RANK" = 1 ] && export "$VAR=$VAL"
exec "$@"
W
chmod +x "$tmp/rank1"

out=$(VAR=VCOLL_REDUCE_SCATTER_ALG VAL=ring "${RUN[@]}" -x VAR -x VAL -np 3 "$tmp/rank1" $hello 2>&1)
if [ $? -ne 0 ] && grep -q "VCOLL_<COLL>_ALG must be the same on every rank, but it is reduce_scatter=ring on rank 1 and auto everywhere on rank 0" <<<"$out"; then
    ok "VCOLL_REDUCE_SCATTER_ALG on one rank only: refused, naming it"
else bad "forced algorithm on one rank" "$out"; fi

printf 'bcast ranks=3 : scatter_allgather\n' > "$tmp/a.rules"
out=$(VAR=VCOLL_TUNE_FILE VAL=$tmp/a.rules "${RUN[@]}" -x VAR -x VAL -np 3 "$tmp/rank1" $hello 2>&1)
if [ $? -ne 0 ] && grep -q "the collective rules table (VCOLL_TUNE_FILE; digest) must be the same on every rank" <<<"$out"; then
    ok "a rules file on one rank only: refused"
else bad "rules file on one rank" "$out"; fi

printf 'bcast ranks=3 : scatter_allgather\nreduce bytes=4-2 : binomial\n' > "$tmp/bad.rules"
out=$(VCOLL_TUNE_FILE=$tmp/bad.rules "${RUN[@]}" -x VCOLL_TUNE_FILE -np 2 $hello 2>&1)
n=$(grep -c "bad.rules:2: bytes=4-2 is not a number or range" <<<"$out")
if [ "$n" -ge 2 ]; then ok "malformed rules file: every rank says file, line, reason"
else bad "malformed rules file" "$out"; fi

out=$(VCOLL_TUNE_FILE=optional:$tmp/none.rules "${RUN[@]}" -x VCOLL_TUNE_FILE -np 2 $hello 2>&1)
if [ $? -eq 0 ] && grep -q "ignored, the built-in rules apply" <<<"$out"; then
    ok "optional rules file missing: a warning, the job runs"
else bad "optional rules file" "$out"; fi

# vcoll_tune: a small run writes a file vc_init accepts
out=$("${RUN[@]}" -np 3 ./src/tools/vcoll_tune -c barrier,allreduce,bcast -m 8:512 -t 0.001 -o "$tmp/t.rules" 2>&1)
if [ $? -eq 0 ] && grep -q "^allreduce ranks=3 " "$tmp/t.rules" && grep -q "^barrier ranks=3 " "$tmp/t.rules" &&
   grep -q "vcoll_tune: allreduce" <<<"$out"; then
    ok "vcoll_tune writes rules for this job's shape ($(grep -vc '^#' "$tmp/t.rules") rules)"
else bad "vcoll_tune" "$out$(cat "$tmp/t.rules" 2>/dev/null)"; fi
out=$(VCOLL_TUNE_FILE=$tmp/t.rules ./src/tools/vcoll_info --algorithms 2>&1)
if grep -q "Collective selection rules: $tmp/t.rules, then built-in" <<<"$out" && grep -q "# file line" <<<"$out"; then
    ok "vcoll_info names the table in force"
else bad "vcoll_info --algorithms" "$out"; fi
out=$(VCOLL_TUNE_FILE=$tmp/t.rules "${RUN[@]}" -x VCOLL_TUNE_FILE -np 3 ./test/mp/mp_coll 2>&1)
if [ $? -eq 0 ] && grep -q "mp_coll: OK" <<<"$out"; then ok "collectives under the tuned table"
else bad "mp_coll under the tuned table" "$out"; fi

# -k: the table in force's choice stays unless another is that much faster
# (a factor no measurement reaches: every row must be the table's)
printf 'allreduce : ring\n' > "$tmp/ring.rules"
out=$(VCOLL_TUNE_FILE=$tmp/ring.rules "${RUN[@]}" -x VCOLL_TUNE_FILE -np 3 ./src/tools/vcoll_tune -c allreduce -m 8:4096 -t 0.001 -k 1000 -o "$tmp/k.rules" 2>&1)
rows=$(grep -c "^allreduce ranks=3 " "$tmp/k.rules" 2>/dev/null)
if [ "${rows:-0}" -ge 1 ] && ! grep "^allreduce " "$tmp/k.rules" | grep -vq ": ring$"; then
    ok "vcoll_tune -k keeps the table's choice ($rows rule(s), all ring)"
else bad "vcoll_tune -k" "$out$(cat "$tmp/k.rules" 2>/dev/null)"; fi

# without -t, rounds are 0.2 s where a node has more ranks than cores (a
# round must span many scheduler time slices), else 0.02 s; np 3 here.
# 8-9 s of rounds for one line of shell logic: once, in the full run (not
# again from distcheck's tarball or under the sanitizers, MP_SMOKE)
if [ "${MP_SMOKE:-0}" = 0 ]; then
    if [ "$(getconf _NPROCESSORS_ONLN)" -lt 3 ]; then want="1 node (more ranks than cores); .* 0.200 s per candidate"
    else want="1 node; .* 0.020 s per candidate"; fi
    out=$("${RUN[@]}" -np 3 ./src/tools/vcoll_tune -c barrier -m 8:8 -o "$tmp/d.rules" 2>&1)
    if [ $? -eq 0 ] && head -1 "$tmp/d.rules" | grep -q "$want"; then
        ok "vcoll_tune's default round: $(head -1 "$tmp/d.rules" | grep -o '[0-9.]* s per candidate')"
    else bad "vcoll_tune default -t (want: $want)" "$out$(head -1 "$tmp/d.rules" 2>/dev/null)"; fi
fi

out=$(./src/tools/vcoll_tune -k 0.5 2>&1)
if [ $? -eq 2 ] && grep -q "vcoll_tune: -k wants a factor >= 1" <<<"$out"; then
    ok "vcoll_tune -k below 1: refused with a message"
else bad "vcoll_tune -k 0.5" "$out"; fi

out=$(./src/tools/vcoll_tune -c bcast,alltoal -o "$tmp/typo.rules" 2>&1)
if [ $? -eq 2 ] && grep -q 'vcoll_tune: -c names "alltoal", which it does not tune; it tunes barrier,bcast' <<<"$out" &&
    [ ! -e "$tmp/typo.rules" ]; then
    ok "vcoll_tune -c with a name it does not tune: refused with the list, no file"
else bad "vcoll_tune -c alltoal" "$out"; fi

echo "tune.sh: $pass passed, $fail failed"
[ $fail -eq 0 ]
