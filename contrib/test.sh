#!/bin/bash
# test.sh -- install dependencies, build, and run every vcoll test:
#   1. build + make check (CUnit units, mpirun np 1..8 on shm, kill -9,
#      launcher checks, srun --mpi=pmix on a local single-node Slurm, OSU)
#   2. the same unit + mpirun suites under ASan+UBSan, then the libFuzzer
#      harnesses of the wire parsers (contrib/fuzz.sh, clang); mp_threads
#      under TSan
#   3. install, then build the examples against the installed vcoll (pkg-config)
#   4. make distcheck: the tarball builds out of tree from read-only sources,
#      its tests pass, install/uninstall and distclean leave nothing behind
#   5. configure without CUnit: the library builds, make check names the package
#   6. verbs: the multi-process suite on VCOLL_NET=rc and ud inside a QEMU guest
#      with SoftRoCE (contrib/vm/vcoll-vm.sh), one rxe device and two, and on
#      emulated nodes (2+2, 1+2+3) with shm+rc, shm+ud, rc and ud
# Options: --quick (skip sanitizers, the CUnit-less build and VM), --no-vm,
#          --no-san, --no-slurm
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0 vm=1 san=1 slurm=1
for a in "$@"; do
    case $a in
    --quick) quick=1; vm=0; san=0 ;;
    --no-vm) vm=0 ;;
    --no-san) san=0 ;;
    --no-slurm) slurm=0 ;;
    *) echo "test.sh: unknown option $a" >&2; exit 2 ;;
    esac
done
build=${VCOLL_BUILD:-$top/_build}
sbuild=${VCOLL_SAN_BUILD:-$top/_build-san}
tbuild=${VCOLL_TSAN_BUILD:-$top/_build-tsan}
pass=0 fail=0 failed=()
T0=$(date +%s)
stage() {   # name, command...
    local name=$1 t0 rc
    shift
    echo; echo "=== $name"
    t0=$(date +%s)
    "$@"
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); echo "=== $name: PASS ($(( $(date +%s) - t0 )) s)"
    else
        fail=$((fail + 1)); failed+=("$name"); echo "=== $name: FAIL (exit $rc, $(( $(date +%s) - t0 )) s)"
    fi
    return $rc
}
show_logs() {  # print the logs of failed automake tests
    local d=$1
    for t in $(find "$d" -name '*.trs' -exec grep -l ':test-result: FAIL\|:test-result: ERROR' {} +); do
        echo "----- ${t%.trs}.log"; tail -60 "${t%.trs}.log"
    done
}
check_in() {   # builddir, configure flags...
    local d=$1; shift
    mkdir -p "$d" && cd "$d" || return 1
    "$top/configure" -q "$@" || return 1
    make -j2 >/dev/null || make || return 1
    make -j2 check || { show_logs "$d"; return 1; }   # tests still one at a time (Makefile.am)
}
install_check() {
    # DESTDIR, not "make install prefix=...": libtool relinks the drop-in
    # libraries against the installed libvcoll and refuses a libdir that
    # differs from the one they were linked for.
    local dest prefix
    dest=$(mktemp -d /tmp/vcoll-inst.XXXXXX)
    cd "$build" && make install DESTDIR="$dest" > "$dest.log" 2>&1 || { cat "$dest.log"; return 1; }
    prefix=$dest$(sed -n 's/^prefix = //p' Makefile)
    # the drop-in libraries are installed beside libvcoll for every MPI configure found
    local so
    for so in .libs/libvcoll_mpi_*.so; do
        [ -e "$so" ] || continue
        [ -e "$prefix/lib/${so#.libs/}" ] || { echo "install: ${so#.libs/} missing from $prefix/lib"; return 1; }
    done
    local ex
    ex=$(mktemp -d /tmp/vcoll-ex.XXXXXX)
    cp "$top"/examples/*.c "$top"/examples/Makefile.example "$ex"/
    (cd "$ex" && make -f Makefile.example \
        PKG_CONFIG="pkg-config --define-variable=prefix=$prefix" PKG_CONFIG_PATH="$prefix/lib/pkgconfig") || return 1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    LD_LIBRARY_PATH="$prefix/lib" timeout -k 10 120 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo \
        -x LD_LIBRARY_PATH -np 3 "$ex/hello" | grep -q "rank 2 of 3" || return 1
    # the installed drop-in serves an unmodified MPI program, as the README says
    if [ -e "$prefix/lib/libvcoll_mpi_openmpi.so" ]; then
        mpicc.openmpi -O2 -DTRANSPOSE_MPI -o "$ex/transpose_mpi" "$ex/transpose.c" -lm || return 1
        LD_LIBRARY_PATH="$prefix/lib" VCOLL_MPI_STATS=1 timeout -k 10 120 mpirun.openmpi --oversubscribe \
            --mca oob_tcp_if_include lo -x LD_LIBRARY_PATH -x VCOLL_MPI_STATS \
            -x LD_PRELOAD="$prefix/lib/libvcoll_mpi_openmpi.so" -np 2 "$ex/transpose_mpi" > "$ex/dropin.log" 2>&1
        grep -q "vcoll_mpi: MPI_Alltoall taken=[1-9]" "$ex/dropin.log" ||
            { cat "$ex/dropin.log"; echo "install: the installed drop-in did not serve MPI_Alltoall"; return 1; }
    fi
    # the static library links too
    cc -o "$ex/hello_static" "$ex/hello.c" -I"$prefix/include" "$prefix/lib/libvcoll.a" \
        $(pkg-config --libs pmix hwloc libibverbs) -lpthread -lm || return 1
    rm -rf "$dest" "$dest.log" "$ex"
}

dist_check() {
    cd "$build" || return 1
    # Every test runs once from the tarball (what distcheck is for: files
    # missing from EXTRA_DIST, paths that assume srcdir = builddir); the np
    # 1..8 range already ran in the first stage, so np <= 2 here, and each
    # multi-process program runs once (MP_SMOKE: its first line).
    # -j2 compiles in parallel; the tests still run one at a time (Makefile.am).
    MP_NP_MAX=2 MP_SMOKE=1 MEMHOOK_TRIALS=100 make -j2 distcheck > "$build/distcheck.log" 2>&1 && return 0
    tail -40 "$build/distcheck.log"
    local d
    for d in "$build"/vcoll-*/_build; do [ -d "$d" ] && show_logs "$d"; done
    return 1
}

# CUnit hidden through configure's cache variable: the library must still
# build, and make check must stop naming the package to install.
no_cunit_check() {
    local d=$top/_build-nocunit out
    mkdir -p "$d" && cd "$d" || return 1
    # -O0: this build is never run, only built (a quarter faster)
    "$top/configure" -q ac_cv_header_CUnit_Basic_h=no CFLAGS=-O0 > configure.out 2>&1 || { cat configure.out; return 1; }
    grep -q "libcunit1-dev" configure.out || { echo "configure did not warn about CUnit"; return 1; }
    make -j2 >/dev/null || return 1
    [ -f .libs/libvcoll.so ] || { echo "libvcoll.so not built"; return 1; }
    if out=$(make check 2>&1); then echo "make check passed without CUnit"; return 1; fi
    echo "$out" | grep "libcunit1-dev" || { echo "$out" | tail -20; return 1; }
}

san_check() (   # a subshell, so the sanitizer settings stay here
    export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export MP_NP_MAX=4   # np 8 under ASan on 2 cores adds minutes, not coverage
    # memory errors are in the code paths, which the settings choose: every
    # list line once under mpirun, at its largest np <= 4 (the np ranges
    # ran in the first stage); srun adds a launcher: each program once
    export MP_SMOKE=lines MP_SRUN_SMOKE=1
    check_in "$sbuild" --enable-sanitizers
)

# VC_THREAD_MULTIPLE under ThreadSanitizer: 4 threads per rank on np 2 and 3.
# Only this program (the rest is single-threaded; TSan slows it 5-15x).
tsan_check() (
    export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
    mkdir -p "$tbuild" && cd "$tbuild" || exit 1
    "$top/configure" -q --enable-tsan || exit 1
    make -j2 test/mp/mp_threads >/dev/null || make test/mp/mp_threads || exit 1
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    for np in 2 3; do
        timeout -k 10 300 mpirun.openmpi --oversubscribe --mca oob_tcp_if_include lo \
            --mca btl self,vader -x TSAN_OPTIONS -np $np test/mp/mp_threads || exit 1
    done
)

stage "dependencies" env VCOLL_EXTRA_PKGS="mpich libmpich-dev gfortran qemu-system-x86 busybox-static kmod cpio xz-utils binutils iproute2 clang" "$top/contrib/deps.sh" || exit 1
[ $slurm -eq 1 ] && stage "single-node Slurm" "$top/contrib/slurm-local.sh" start
(cd "$top" && ./autogen.sh >/dev/null 2>&1) || { echo "autogen.sh failed"; exit 1; }
stage "build + make check" check_in "$build"
stage "install + pkg-config build of the examples" install_check
stage "make distcheck" dist_check
[ $quick -eq 0 ] && stage "configure without CUnit" no_cunit_check
if [ $san -eq 1 ]; then
    stage "ASan+UBSan build + make check" san_check
    # every parser of wire data under libFuzzer (+ASan/UBSan), from its seed
    # corpus: a short run per harness catches what a change broke
    stage "fuzzers (10 s per wire parser)" "$top/contrib/fuzz.sh" -t 10 "${VCOLL_FUZZ_BUILD:-$top/_build-fuzz}"
    stage "TSan build + mp_threads (VC_THREAD_MULTIPLE)" tsan_check
fi
if [ $vm -eq 1 ]; then
    if [ -x "$top/test/verbs/run-verbs-tests.sh" ]; then
        # the test binaries must exist before the guest looks for them
        (cd "$build" && make -j2 check TESTS= >/dev/null)
        stage "verbs (SoftRoCE guest): rc + ud" "$top/test/verbs/run-verbs-tests.sh" "$build"
    else
        echo "verbs tests: test/verbs/run-verbs-tests.sh missing"; fail=$((fail + 1))
    fi
fi
echo
echo "=== total $(( $(date +%s) - T0 )) s; failed stages: ${failed[*]:-none}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
