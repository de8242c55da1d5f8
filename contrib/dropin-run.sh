# dropin-run.sh -- sourced by the scripts that run third-party MPI programs
# plain and with the drop-in preloaded (mpich-suite.sh, npb-dropin.sh): one
# set-up and one launch for both, so that the only difference between the
# two runs is the preload. The caller defines die MESSAGE.
#   dropin_setup NAME: after the options, with mpi, lib, builddir, work and
#     out set (the last three may be empty): the launcher is there, lib is
#     the drop-in's absolute path, work (default ./NAME-MPI) an existing
#     absolute directory, out (default ./NAME-MPI.txt) absolute
#   dropin_run NP PRE TIMEOUT OUT ENVS... -- PROG ARGS... (after
#     dropin_setup: the MPI and drop-in it checked)
# mpi: openmpi (mpirun, shared memory; DROPIN_BTL names its components,
# default self,vader) or mpich (hydra); PRE 1 preloads lib
# with VCOLL_MPI_STATS=1, so the output names the calls vcoll took. The
# output goes to OUT; returns the launcher's exit status (124: timed out).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_psec=native

dropin_setup() {
    case $mpi in openmpi | mpich) ;; *) die "-M takes openmpi or mpich" ;; esac
    [ "$mpi" = openmpi ] && ! command -v mpirun.openmpi >/dev/null &&
        die "mpirun.openmpi missing (apt-get install openmpi-bin)"
    [ "$mpi" = mpich ] && ! command -v mpiexec.mpich >/dev/null &&
        die "mpiexec.mpich missing (apt-get install mpich)"
    : "${lib:=$builddir/.libs/libvcoll_mpi_$mpi.so}"
    [ -f "$lib" ] || die "no drop-in $lib (build vcoll with $mpi's headers, or pass -D)"
    lib=$(realpath "$lib")
    : "${work:=$PWD/$1-$mpi}" "${out:=$PWD/$1-$mpi.txt}"
    mkdir -p "$work" || die "cannot make $work"
    work=$(realpath "$work")
    out=$(realpath -m "$out")   # (the callers' loops change directory)
}

dropin_run() {
    local np=$1 pre=$2 t=$3 out=$4 envs=() x
    shift 4
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    if [ "$mpi" = openmpi ]; then
        x=(--oversubscribe --mca oob_tcp_if_include lo --mca btl "${DROPIN_BTL:-self,vader}"
           --mca btl_tcp_if_include lo -np "$np")
        [ "$pre" = 1 ] && x+=(-x LD_PRELOAD="$lib" -x VCOLL_MPI_STATS=1)
        env "${envs[@]}" timeout -k 10 "$t" mpirun.openmpi "${x[@]}" "$@" > "$out" 2>&1 < /dev/null
    else
        x=(-np "$np")
        [ "$pre" = 1 ] && x+=(-genv LD_PRELOAD "$lib" -genv VCOLL_MPI_STATS 1)
        env "${envs[@]}" timeout -k 10 "$t" mpiexec.mpich "${x[@]}" "$@" > "$out" 2>&1 < /dev/null
    fi
}
