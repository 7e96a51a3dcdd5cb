#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE on the real MPIs: thread_check (4 threads per rank, each
# on its own communicator, all six collectives at once, every element checked)
# through the integration matrix in all four bindings: the interposition
# library on MPICH and on Open MPI, the MPICH module, the Open MPI component.
# p in {2, 3, 4}, k = 3, three algorithm families (about a minute).
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
matrix="$srcdir/tests/mpi/run_matrix.sh"
common=(--procs "2 3 4" --ks 3 --algs "kring recursive_multiplying knomial" --native-max-p 0)
ran=0
build() {  # build MPI: thread_check for that MPI's mpicc, path in $bin
  bin="$builddir/tests/mpi/thread_check.$1"
  [ "$bin" -nt "$srcdir/tests/mpi/thread_check.c" ] ||
    "mpicc.$1" -O1 -o "$bin" "$srcdir/tests/mpi/thread_check.c" -lpthread || { echo "FAIL: cannot build thread_check.$1"; exit 1; }
}
for mpi in mpich openmpi; do
  command -v "mpicc.$mpi" >/dev/null && [ -f "$builddir/$mpi/.libs/libgencoll-pmpi.so" ] || continue
  build "$mpi"
  echo "== $mpi, the interposition library"
  "$matrix" --mpi "$mpi" --lib "$builddir/$mpi/.libs/libgencoll-pmpi.so" --bin "$bin" "${common[@]}" || exit 1
  ran=1
done
prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
if [ -x "$prefix/bin/mpiexec" ] && command -v mpicc.mpich >/dev/null; then
  build mpich
  echo "== the MPICH module"
  "$matrix" --mpi gencoll-mpich --mpich-prefix "$prefix" --lib none --bin "$bin" "${common[@]}" || exit 1
fi
if [ -f "$builddir/ompi-component/component-path" ] && command -v mpicc.openmpi >/dev/null; then
  build openmpi
  echo "== the Open MPI component"
  "$matrix" --mpi gencoll-openmpi --component-path "$(cat "$builddir/ompi-component/component-path")" --lib none \
    --bin "$bin" "${common[@]}" || exit 1
fi
[ "$ran" = 1 ] || { echo "SKIP: no MPI binding built"; exit 77; }
echo "PASS: collectives from 4 threads at once under MPI_THREAD_MULTIPLE in every binding"
