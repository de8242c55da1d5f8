#!/bin/bash
# make check: wrong or missing launchers. A lone process is a 1-rank job;
# processes started by a launcher without PMIx must all fail vc_init with
# VC_ERR_BOOTSTRAP and a message naming mpirun / srun --mpi=pmix -- never
# run as N silent singletons.
set -u
hello=./examples/hello
pass=0 fail=0
ok()  { echo "PASS: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; echo "$2" | sed 's/^/    | /' | tail -10; fail=$((fail + 1)); }
clean_env() { env -u PMIX_NAMESPACE -u PMIX_SERVER_URI41 -u PMIX_SERVER_URI4 -u PMIX_SERVER_URI3 \
                  -u PMIX_SERVER_URI2 -u PMIX_SERVER_URI21 -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE \
                  -u SLURM_STEP_NUM_TASKS -u SLURM_NTASKS -u SLURM_NPROCS -u SLURM_JOB_ID \
                  -u SLURM_STEP_ID -u SLURM_PROCID "$@"; }

out=$(clean_env timeout -k 10 20 $hello 2>&1)
if [ $? -eq 0 ] && echo "$out" | grep -q "rank 0 of 1"; then ok "no launcher: singleton"; else bad "no launcher: singleton" "$out"; fi

out=$(clean_env PMI_SIZE=4 PMI_RANK=1 timeout -k 10 20 $hello 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "mpirun" && echo "$out" | grep -q "srun --mpi=pmix"; then
    ok "PMI-2 style environment (hydra / srun --mpi=pmi2) refused"; else bad "PMI env refused" "$out"; fi

out=$(clean_env SLURM_STEP_NUM_TASKS=4 SLURM_NTASKS=4 SLURM_STEP_ID=0 SLURM_PROCID=1 timeout -k 10 20 $hello 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "srun --mpi=pmix"; then
    ok "srun without --mpi=pmix environment refused"; else bad "srun none env refused" "$out"; fi

# what a plain ./hello sees inside salloc -n 4 or an sbatch -n 4 script: the
# allocation's variables, no step's
out=$(clean_env SLURM_JOB_ID=42 SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_JOB_NUM_NODES=1 \
      SLURM_TASKS_PER_NODE=4 timeout -k 10 20 $hello 2>&1)
if [ $? -eq 0 ] && echo "$out" | grep -q "rank 0 of 1"; then
    ok "plain program inside a Slurm allocation: singleton"
else bad "singleton inside an allocation" "$out"; fi

if command -v mpiexec.hydra >/dev/null; then
    out=$(clean_env timeout -k 10 30 mpiexec.hydra -n 2 $hello 2>&1); rc=$?
    n=$(echo "$out" | grep -c "srun --mpi=pmix")
    if [ $rc -ne 0 ] && [ "$n" -ge 2 ]; then ok "mpiexec.hydra -n 2: every process refuses"
    else bad "mpiexec.hydra -n 2" "$out"; fi
fi
if command -v srun >/dev/null && sinfo -h -o %T 2>/dev/null | grep -q idle; then
    out=$(timeout -k 10 60 srun --mpi=pmi2 -n 2 $hello 2>&1); rc=$?
    if [ $rc -ne 0 ] && echo "$out" | grep -q "srun --mpi=pmix"; then ok "srun --mpi=pmi2 refused"
    else bad "srun --mpi=pmi2" "$out"; fi
    out=$(timeout -k 10 60 srun --mpi=pmix -n 3 $hello 2>&1)
    if [ $? -eq 0 ] && echo "$out" | grep -q "rank 2 of 3"; then ok "srun --mpi=pmix -n 3 hello"
    else bad "srun --mpi=pmix hello" "$out"; fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(timeout -k 10 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo -np 3 $hello 2>&1)
if [ $? -eq 0 ] && echo "$out" | grep -q "rank 2 of 3"; then ok "mpirun -np 3 hello"; else bad "mpirun hello" "$out"; fi
# ranks bound together to fewer CPUs than they are wait for each other by
# yielding at once (lifecycle find_near); ranks with a CPU each do not
if [ "$(getconf _NPROCESSORS_ONLN)" -gt 1 ] && command -v taskset >/dev/null; then
    near="rank(s) of this node bound to CPUs of mine"
    out=$(VCOLL_LOG=debug timeout -k 10 60 taskset -c 0 mpirun.openmpi --oversubscribe --bind-to none \
          --mca oob_tcp_if_include lo -x VCOLL_LOG -np 3 $hello 2>&1)
    if [ $? -eq 0 ] && [ "$(echo "$out" | grep -c "2 $near")" = 3 ]; then
        ok "3 ranks bound to one CPU: each yields at once to the other two"
    else bad "3 ranks on one CPU" "$out"; fi
    out=$(VCOLL_LOG=debug timeout -k 10 60 taskset -c 0,1 mpirun.openmpi --oversubscribe --bind-to none \
          --mca oob_tcp_if_include lo -x VCOLL_LOG -np 2 $hello 2>&1)
    if [ $? -eq 0 ] && echo "$out" | grep -q "rank 1 of 2" && ! echo "$out" | grep -q "$near"; then
        ok "2 ranks on 2 CPUs: nobody is near"
    else bad "2 ranks on 2 CPUs" "$out"; fi
fi
out=$(VCOLL_NET=bogus timeout -k 10 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo -x VCOLL_NET -np 2 $hello 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "VCOLL_NET"; then ok "bad VCOLL_NET value named at vc_init"
else bad "bad VCOLL_NET" "$out"; fi
# no RDMA device on this host: forcing rc must fail vc_init and say why
if ! ls /sys/class/infiniband/ >/dev/null 2>&1 || [ -z "$(ls /sys/class/infiniband/ 2>/dev/null)" ]; then
    out=$(VCOLL_NET=rc timeout -k 10 60 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo -x VCOLL_NET -np 2 $hello 2>&1)
    if [ $? -ne 0 ] && echo "$out" | grep -q "no usable verbs device" && echo "$out" | grep -q "transport failure"; then
        ok "VCOLL_NET=rc without an RDMA device: vc_init fails, naming the cause"
    else bad "VCOLL_NET=rc without a device" "$out"; fi
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
