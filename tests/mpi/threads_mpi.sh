#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE on the real MPIs: thread_check (4 threads per rank, each
# on its own communicator, all six collectives at once, every element checked)
# through the integration matrix in all four bindings: the interposition
# library on MPICH and on Open MPI, the MPICH module, the Open MPI component.
# p in {2, 3, 4}, k = 3, three algorithm families (about a minute).
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/mpi/each_binding.sh"
run() {
  "$srcdir/tests/mpi/run_matrix.sh" "$@" --bin "$bin" --procs "2 3 4" --ks 3 \
    --algs "kring recursive_multiplying knomial" --native-max-p 0
}
each_binding thread_check "-O1 -lpthread" run
rc=$?
[ $rc = 77 ] && { echo "SKIP: no MPI binding built"; exit 77; }
[ $rc = 0 ] || exit 1
echo "PASS: collectives from 4 threads at once under MPI_THREAD_MULTIPLE in every binding"
