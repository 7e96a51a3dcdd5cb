#!/usr/bin/env bash
# What an application sees of gencoll's own communicators and of errors, in
# all four bindings (the interposition library on MPICH and on Open MPI, the
# MPICH module, the Open MPI component): errors_check's attributes are never
# copied, a root outside the communicator is MPI_ERR_ROOT, and a handler set
# after a communicator's first collective sees a later error once, and
# nonblocking collectives in flight around gencoll's calls keep their own
# messages. p = 2 and
# 3; k-ring, k-nomial and recursive multiplying (bcast, allreduce, allgather;
# reduce runs k-nomial where an algorithm has no reduce) and the MPI's own.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/mpi/each_binding.sh"
run() {
  "$srcdir/tests/mpi/run_matrix.sh" "$@" --bin "$bin" --algs "kring knomial recursive_multiplying native" \
    --procs "2 3" --ks 3 --timeout 60
}
each_binding_or_exit errors_check "-O1 -Wall -Wextra" run
echo "PASS: no attribute copied, roots checked, errors raised once on the caller's communicator, in every binding"
