#!/bin/bash
# npb-dropin.sh -- the NAS Parallel Benchmarks (NPB 3.4, MPI: BT, CG, EP,
# FT, IS, LU, MG, SP), built outside this tree with the chosen MPI's
# compilers and run twice per benchmark, class and rank count: plain and
# with the drop-in preloaded. They are whole applications, in Fortran but
# IS (C), and each checks its own answer against its class's reference
# values ("Verification = SUCCESSFUL"); what counts is the difference, so a
# run that verifies plain and not preloaded is the drop-in's bug.
#
# Nothing of NPB is copied into vcoll: point -S at an NPB3.4-MPI directory
# (of the NPB 3.4 release, or a `git archive` of a repository holding it).
set -u

usage() {
    cat <<EOF
Usage: $0 -S NPB_MPI_DIR [options]
  -S DIR        an NPB3.4-MPI directory (config/make.def.template, sys/setparams.c)
  -M MPI        openmpi (default) or mpich: compilers, launcher and drop-in
  -D LIB        the drop-in (default: BUILD/.libs/libvcoll_mpi_MPI.so)
  -B DIR        vcoll build tree for the default -D (default: .)
  -w DIR        work directory: NPB's build (default ./npb-MPI); kept between runs
  -b LIST       benchmarks, comma separated (default: $default_benches)
  -c LIST       problem classes (default: S; W is a few seconds a run here)
  -n LIST       rank counts (default: 1,2,4; BT and SP run on squares only)
  -t SECONDS    timeout of one run (default 300)
  -o FILE       the per-run results (default npb-MPI.txt)
  -h            this help
Exit status: 0 when no run verifies plain and fails preloaded, 1 when one
does, 2 when NPB could not be built or run.
EOF
}

die() { echo "$0: $*" >&2; exit 2; }
default_benches="bt,cg,ep,ft,is,lu,mg,sp"
src="" mpi=openmpi lib="" builddir=. work="" benches=$default_benches classes=S nps=1,2,4
tmo=300 out=""
while [ $# -gt 0 ]; do
    case $1 in -[SMDBwbcnto]) [ $# -ge 2 ] || die "$1 needs an argument" ;; esac
    case $1 in
    -S) src=$2; shift ;;
    -M) mpi=$2; shift ;;
    -D) lib=$2; shift ;;
    -B) builddir=$2; shift ;;
    -w) work=$2; shift ;;
    -b) benches=$2; shift ;;
    -c) classes=$2; shift ;;
    -n) nps=$2; shift ;;
    -t) tmo=$2; shift ;;
    -o) out=$2; shift ;;
    -h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done
[ -n "$src" ] || { usage >&2; exit 2; }
. "$(dirname "$0")/dropin-run.sh"
dropin_setup npb
case $tmo${nps//,/} in *[!0-9]*) die "-n takes numbers, comma separated, and -t a number" ;; esac
[ -f "$src/config/make.def.template" ] && [ -f "$src/sys/setparams.c" ] ||
    die "$src is not an NPB3.4-MPI directory (config/make.def.template, sys/setparams.c)"
for t in mpicc.$mpi mpif90.$mpi make; do
    command -v $t >/dev/null || die "$t missing (apt-get install lib$mpi-dev gfortran make)"
done

# ---- NPB's build with this MPI's wrappers: a copy of the tree, once ----
if [ ! -f "$work/npb/config/make.def" ]; then
    rm -rf "$work/npb"
    cp -r "$src" "$work/npb" || die "cannot copy $src"
    # the Fortran codes pass one buffer as several types, which gfortran
    # from 10 on refuses without -fallow-argument-mismatch
    sed -e "s/^MPIFC *=.*/MPIFC = mpif90.$mpi/" -e "s/^MPICC *=.*/MPICC = mpicc.$mpi/" \
        -e 's/^FFLAGS\([[:space:]]*\)=.*/FFLAGS\1= -O2 -fallow-argument-mismatch/' \
        "$work/npb/config/make.def.template" > "$work/npb/config/make.def" ||
        die "cannot write make.def"
    mkdir -p "$work/npb/bin"
    # (its make runs these; an archive may have lost their mode)
    chmod +x "$work/npb/sys/print_header" "$work/npb/sys/print_instructions" 2>/dev/null
fi
IFS=, read -r -a blist <<< "$benches"
IFS=, read -r -a clist <<< "$classes"
IFS=, read -r -a nlist <<< "$nps"
for b in "${blist[@]}"; do
    case $b in bt | cg | ep | ft | is | lu | mg | sp) ;; *) die "no NPB benchmark '$b'" ;; esac
    for c in "${clist[@]}"; do
        case $c in S | W | A | B | C) ;; *) die "class $c: S, W, A, B or C" ;; esac
        [ -x "$work/npb/bin/$b.$c.x" ] && continue
        echo "building $b class $c" >&2
        make -C "$work/npb" "$b" CLASS="$c" > "$work/make-$b.$c.log" 2>&1 &&
            [ -x "$work/npb/bin/$b.$c.x" ] || die "building $b class $c failed: $work/make-$b.$c.log"
    done
done

# one run: "SUCCESSFUL t=SECONDS", "UNSUCCESSFUL ...", "hang" or "fail(RC)"
run() {
    local np=$1 pre=$2 x=$3 o=$4 rc v t
    dropin_run "$np" "$pre" "$tmo" "$o" -- "$x"
    rc=$?
    v=$(sed -n 's/^ *Verification *= *\([A-Z]*\).*/\1/p' "$o" | head -1)
    t=$(sed -n 's/^ *Time in seconds *= *\([0-9.]*\).*/\1/p' "$o" | head -1)
    if [ $rc -eq 124 ]; then echo hang
    elif [ $rc -ne 0 ] || [ -z "$v" ]; then echo "fail($rc)"
    else echo "$v t=$t"; fi
}

: > "$out"
nok=0 nsame=0 nworse=0 nbetter=0 taken=0 worse=()
for b in "${blist[@]}"; do
    for c in "${clist[@]}"; do
        for np in "${nlist[@]}"; do
            case $b in bt | sp)     # square process grids only
                r=1; while [ $((r * r)) -lt "$np" ]; do r=$((r + 1)); done
                [ $((r * r)) -eq "$np" ] || continue ;;
            esac
            x=$work/npb/bin/$b.$c.x line="$b.$c np=$np"
            p=$(run "$np" 0 "$x" "$work/last-plain.out")
            v=$(run "$np" 1 "$x" "$work/last.out")
            calls=$(grep -c "^vcoll_mpi: .* taken=[1-9]" "$work/last.out")
            [ "$calls" -gt 0 ] && taken=$((taken + 1))
            case $p/$v in
            SUCCESSFUL*/SUCCESSFUL*) r=OK; nok=$((nok + 1)) ;;
            */SUCCESSFUL*) r=BETTER; nbetter=$((nbetter + 1)) ;;
            SUCCESSFUL*/*) r=WORSE; nworse=$((nworse + 1)); worse+=("$line: plain $p, preloaded $v") ;;
            *) r=SAME; nsame=$((nsame + 1)) ;;
            esac
            printf '%-6s %-14s plain=%-24s vcoll=%-24s calls taken by vcoll: %s\n' \
                "$r" "$line" "$p" "$v" "$calls" >> "$out"
            grep "^vcoll_mpi: " "$work/last.out" | sed 's/^/    /' >> "$out"
            [ "$r" = WORSE ] && sed 's/^/    | /' "$work/last.out" | tail -20 >> "$out"
            printf '%-6s %s\n' "$r" "$line" >&2
        done
    done
done
cat <<EOF
NPB ($benches; classes $classes; np $nps) under $mpi, plain and with $(basename "$lib") preloaded:
  verified both ways:                 $nok
  verified preloaded only:            $nbetter
  failed alike:                       $nsame
  verified plain, failed preloaded:   $nworse
  runs where vcoll took at least one kind of call: $taken
Per run: $out
EOF
for w in "${worse[@]}"; do echo "  WORSE: $w"; done
[ "$nworse" -eq 0 ]
