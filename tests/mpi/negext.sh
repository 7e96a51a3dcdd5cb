#!/usr/bin/env bash
# Collectives on a datatype with a negative extent (tests/mpi/negext_check.c)
# in all four bindings: every element right and no byte written outside a
# buffer, with the algorithms that take scratch (recursive multiplying,
# k-ring, Rabenseifner), rotate through a spare unit (k-Bruck) or copy
# (k-nomial), p = 3 and 5, k = 3.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/mpi/each_binding.sh"
# Each algorithm on the collectives it serves: the others would run the MPI's
# own algorithms, which break on such a type (MPICH's allreduce writes below
# its scratch, Open MPI's allgather corrupts the heap).
run() {
  local algs
  for algs in "recursive_multiplying kring knomial:" "rabenseifner:allreduce reduce" "kbruck:allgather"; do
    "$srcdir/tests/mpi/run_matrix.sh" "$@" --bin "$bin" --algs "${algs%%:*}" --args "${algs#*:}" \
      --procs "3 5" --ks 3 --timeout 60 || return 1
  done
}
each_binding_or_exit negext_check "-O1 -Wall -Wextra" run
echo "PASS: a negative extent's elements right and its buffers' neighbours untouched, in every binding"
