#!/bin/bash
# make check: the same suite under Slurm's srun --mpi=pmix. contrib/test.sh
# starts a single-node Slurm first (contrib/slurm-local.sh); without one
# this test is skipped (exit 77), never faked.
if ! command -v srun >/dev/null || ! sinfo -h -o %T 2>/dev/null | grep -q idle; then
    echo "SKIP: no Slurm controller is up (run contrib/slurm-local.sh start)"
    exit 77
fi
# srun changes the launch (Slurm's PMIx server, its environment and
# binding), not what the programs compute, whose np ranges run under
# mpirun: every list line once here, at its largest np <= 4 (run-mp.sh's
# MP_SMOKE=lines). MP_SRUN_SMOKE=1: each program once; 0: every np.
MP_SMOKE=${MP_SRUN_SMOKE:-${MP_SMOKE:-lines}} \
    exec "${srcdir:-.}/test/mp/run-mp.sh" --launcher srun --builddir . --srcdir "${srcdir:-.}" --np-max $(( ${MP_NP_MAX:-4} < 4 ? ${MP_NP_MAX:-4} : 4 ))
