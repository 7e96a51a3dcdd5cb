#!/usr/bin/env bash
# Failures injected inside every binding (issue 18, item 3): fault_check with
# GENCOLL_INJECT_FAULT=1 walks a failure through every transport call of rank
# 1's schedule, for each collective, in all four bindings (the interposition
# library on MPICH and on Open MPI, the MPICH module, the Open MPI component):
# every rank returns, the error goes through the communicator's error
# handler, and the next call is right. p = 3 and 4, k = 3, one algorithm per
# collective chosen to cover every step kind on host buffers (permutation
# moves, the dual reduce-scatter, Rabenseifner's halving, blocking sends of a
# lone message).
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/mpi/each_binding.sh"
# collective:algorithm
cases="allgather:permuted_recursive_multiplying allreduce:kring bcast:knomial reduce:rabenseifner
       reduce_scatter_block:permuted_recursive_multiplying reduce_scatter:recursive_multiplying"
run() {
  local c
  for c in $cases; do
    "$srcdir/tests/mpi/run_matrix.sh" "$@" --bin "$bin" --algs "${c#*:}" --args "-c ${c%%:*}" --procs "3 4" --ks 3 \
      --native-max-p 0 --env GENCOLL_INJECT_FAULT=1 --timeout 60 || return 1
  done
}
each_binding_or_exit fault_check "-O1 -Wall -Wextra" run
echo "PASS: failures injected at every step of every collective in every binding"
