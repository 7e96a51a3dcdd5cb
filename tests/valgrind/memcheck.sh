#!/usr/bin/env bash
# The MPI integration matrix under Valgrind's memcheck: every rank of
# coll_check, root_check and rsb_check runs inside valgrind, which fails the
# run (exit 3) on an invalid read or write, a use of uninitialised memory in
# a branch or a system call, or a bad free, in gencoll or in the MPI below
# it. Suppressed: only the MPIs' own reports, Open MPI's shipped file and
# tests/valgrind/mpi.supp (each entry explained there). Leaks are left to
# LeakSanitizer on the core's tests (the MPIs keep memory until exit). Then
# fault_check (tests/mpi/fault_inject.sh) the same way: a failure injected at
# every step leaves nothing touching freed memory.
#
#   make check:      p = 3, k = 3, k-ring and permuted recursive multiplying,
#                    through the interposition library on MPICH and the coll
#                    component on Open MPI; fault_check's allreduce with k-ring
#                    (about a minute and a half)
#   MEMCHECK_FULL=1  (make check-full) every generalized algorithm through
#                    all four bindings: the library on both MPIs, the MPICH
#                    module, the Open MPI component; fault_check's six cases
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
sim="$builddir/selection/gencoll-sim"
[ -x "$sim" ] || { echo "FAIL: no $sim (build first)"; exit 1; }

supp=(--suppressions="$srcdir/tests/valgrind/mpi.supp")
[ -f /usr/share/openmpi/openmpi-valgrind.supp ] && supp+=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp)
# run_matrix places --mpiexec-args right before the program: valgrind runs it.
vg="valgrind -q --error-exitcode=3 --leak-check=no ${supp[*]}"
if [ "${MEMCHECK_FULL:-0}" = 1 ]; then
  algs=$(comm -23 <("$sim" --list-algorithms | sort) <("$sim" --list-algorithms fixed | sort) | tr '\n' ' ')
  bindings="mpich openmpi gencoll-mpich gencoll-openmpi"
  faults="allgather:permuted_recursive_multiplying allreduce:kring bcast:knomial reduce:rabenseifner
          reduce_scatter_block:permuted_recursive_multiplying reduce_scatter:recursive_multiplying"
else
  algs="kring permuted_recursive_multiplying"
  bindings="mpich gencoll-openmpi"
  faults="allreduce:kring"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The harness can fail: the same valgrind command on a planted use of
# uninitialised memory must exit 3.
printf '#include <stdlib.h>\nint main(void) { int *x = malloc(sizeof *x); int r = *x > 0; free(x); return r ? 0 : 1; }\n' \
  > "$work/planted.c"
cc -O0 -o "$work/planted" "$work/planted.c" || { echo "FAIL: cannot build the planted error"; exit 1; }
# shellcheck disable=SC2086  # $vg is a command line
$vg "$work/planted" 2>/dev/null
[ $? = 3 ] || { echo "FAIL: memcheck does not report a planted uninitialised read with these options"; exit 1; }

ran=0
for b in $bindings; do
  case "$b" in
  mpich|openmpi)
    lib="$builddir/$b/.libs/libgencoll-pmpi.so"
    [ -f "$lib" ] && [ -x "$builddir/tests/mpi/coll_check.$b" ] || { echo "skip $b: not built"; continue; }
    args=(--mpi "$b" --lib "$lib" --native-max-p 0)
    suffix=$b ;;
  gencoll-mpich)
    prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
    [ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] || { echo "skip $b: no MPICH with the module"; continue; }
    args=(--mpi "$b" --mpich-prefix "$prefix" --lib none)
    suffix=mpich ;;
  gencoll-openmpi)
    [ -f "$builddir/ompi-component/component-path" ] || { echo "skip $b: no component"; continue; }
    args=(--mpi "$b" --component-path "$(cat "$builddir/ompi-component/component-path")" --lib none)
    suffix=openmpi ;;
  esac
  echo "== $b under memcheck: $algs"
  "$srcdir/tests/mpi/run_matrix.sh" "${args[@]}" --procs 3 --ks 3 --algs "$algs" --timeout 600 \
    --mpiexec-args "$vg" --logdir "$work/$b" --bin "$builddir/tests/mpi/coll_check.$suffix" \
    --bin "$builddir/tests/mpi/root_check.$suffix" --bin "$builddir/tests/mpi/rsb_check.$suffix" || exit 1
  fault_bin="$builddir/tests/mpi/fault_check.$suffix"
  [ "$fault_bin" -nt "$srcdir/tests/mpi/fault_check.c" ] ||
    "mpicc.$suffix" -O1 -o "$fault_bin" "$srcdir/tests/mpi/fault_check.c" || { echo "FAIL: cannot build $fault_bin"; exit 1; }
  for c in $faults; do
    "$srcdir/tests/mpi/run_matrix.sh" "${args[@]}" --procs 3 --ks 3 --algs "${c#*:}" --timeout 600 \
      --mpiexec-args "$vg" --logdir "$work/$b-fault-${c%%:*}" --bin "$fault_bin" --args "-c ${c%%:*}" \
      --env GENCOLL_INJECT_FAULT=1 || exit 1
  done
  # Every rank of every program really ran under valgrind (hwloc says so
  # once per process).
  for log in "$work/$b"*/*.log; do
    programs=$(grep -c '^[a-z_]*: p=3 [0-9]* cases' "$log")
    [ "$programs" -gt 0 ] && [ "$(grep -c 'cannot work under Valgrind' "$log")" -ge $((3 * programs)) ] ||
      { echo "FAIL: $log: not every rank ran under valgrind"; exit 1; }
  done
  ran=1
done
[ "$ran" = 1 ] || { echo "SKIP: no MPI binding built"; exit 77; }
echo "PASS: no memcheck report in gencoll's collectives"
