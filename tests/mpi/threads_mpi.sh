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
each_binding_or_exit thread_check "-O1 -lpthread" run

# The same under a selection file that switches algorithm and radix with the
# message size, so threads choose from the file at once (the interposition
# library and the component on Open MPI: one reader of the file each).
if command -v mpiexec.openmpi >/dev/null && [ -x "$builddir/tests/mpi/thread_check.openmpi" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cat > "$tmp/threads.json" <<'EOF'
{"collective=allreduce": {"avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_recursive_multiplying": {"k=3": {}}},
                          "avg_msg_size<=1024": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
                          "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {"k=2": {}}}},
 "collective=allgather": {"avg_msg_size<=256": {"algorithm=MPIR_Allgather_intra_kring": {"k=3": {}}},
                          "avg_msg_size=any": {"algorithm=MPIR_Allgather_intra_recursive_multiplying": {"k=2": {}}}},
 "collective=bcast": {"avg_msg_size<=128": {"algorithm=MPIR_Bcast_intra_knomial": {"k=3": {}}},
                      "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_binomial": {}}},
 "collective=reduce": {"avg_msg_size=any": {"algorithm=MPIR_Reduce_intra_knomial": {"k=4": {}}}}}
EOF
  ompi=(timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n 3)
  lib=$builddir/openmpi/.libs/libgencoll-pmpi.so
  if [ -f "$lib" ]; then
    out=$("${ompi[@]}" -x LD_PRELOAD="$lib" -x GENCOLL_SELECTION_FILE="$tmp/threads.json" -x GENCOLL_WAIT_POLICY=yield \
      "$builddir/tests/mpi/thread_check.openmpi" -q 2>&1) ||
      { echo "FAIL: thread_check under a selection file through the library: $out"; exit 1; }
    echo "the library, a selection file: $out"
  fi
  if [ -f "$builddir/ompi-component/component-path" ]; then
    out=$("${ompi[@]}" --mca mca_base_component_path "$(cat "$builddir/ompi-component/component-path")" \
      --mca coll_gencoll_selection_file "$tmp/threads.json" --mca mpi_yield_when_idle 1 \
      "$builddir/tests/mpi/thread_check.openmpi" -q 2>&1) ||
      { echo "FAIL: thread_check under a selection file through the component: $out"; exit 1; }
    echo "the component, a selection file: $out"
  fi
fi
echo "PASS: collectives from 4 threads at once under MPI_THREAD_MULTIPLE in every binding, and under a selection file on Open MPI"
