#!/usr/bin/env bash
# The interposition library's large-count paths (messages described by
# derived datatypes, local reductions and copies split, copies between
# different types through the MPI) on small buffers: GENCOLL_COUNT_LIMIT=3
# makes every message and local operation of more than 3 elements take them,
# and the integration matrix (every type, op, derived type, in place, every
# algorithm) must still be right on both MPIs. The same paths carry counts
# above 2^31 in earnest (make check-full: tests/mpi/large_count_full.sh).
set -u
builddir=${builddir:-$(pwd)}
ran=0
for mpi in mpich openmpi; do
  m="$builddir/tests/mpi/matrix-$mpi.sh"
  [ -x "$m" ] || continue
  echo "== $mpi"
  GENCOLL_MATRIX_FLAGS="--env GENCOLL_COUNT_LIMIT=3 --procs '5' --ks '3' --logdir $builddir/tests/mpi/large-count-$mpi" \
    "$m" || exit 1
  ran=1
done
[ "$ran" = 1 ] || { echo "SKIP: no MPI matrix was built"; exit 77; }

# MPI-4's _c entry points (MPICH 4; Open MPI 4.1 has none), served by gencoll:
# each result right and a debug line per collective, at the int limit and at 3.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$builddir/mpich/.libs/libgencoll-pmpi.so"
if [ -f "$lib" ] && command -v mpicc.mpich >/dev/null; then
  bin="$builddir/tests/mpi/count_c_check.mpich"
  mpicc.mpich -O1 -o "$bin" "$srcdir/tests/mpi/count_c_check.c" || { echo "FAIL: cannot build count_c_check"; exit 1; }
  # Preloaded before the library, the probe sees every count its transport
  # passes to the MPI: the limit must show there, not only in right results.
  probe="$builddir/tests/mpi/count_probe.mpich.so"
  mpicc.mpich -O1 -shared -fPIC -o "$probe" "$srcdir/tests/mpi/count_probe.c" -ldl ||
    { echo "FAIL: cannot build count_probe"; exit 1; }
  for limit in 2147483647 3; do
    args=()
    for e in GENCOLL_ALLREDUCE_INTRA_ALGORITHM=rabenseifner GENCOLL_ALLGATHER_INTRA_ALGORITHM=kbruck \
             GENCOLL_BCAST_INTRA_ALGORITHM=kring GENCOLL_REDUCE_INTRA_ALGORITHM=knomial \
             GENCOLL_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM=recursive_multiplying \
             GENCOLL_REDUCE_SCATTER_INTRA_ALGORITHM=kring GENCOLL_DEBUG=1 \
             GENCOLL_WAIT_POLICY=yield GENCOLL_COUNT_LIMIT=$limit LD_PRELOAD="$probe:$lib"; do
      args+=(-genv "${e%%=*}" "${e#*=}")
    done
    out=$(timeout -k 5 120 mpiexec.mpich -n 3 "${args[@]}" "$bin" 2>&1) ||
      { echo "FAIL: count_c_check (limit $limit) exited non-zero: $out"; exit 1; }
    echo "$out" | grep -q "^count_c_check: p=3 ok" || { echo "FAIL: count_c_check (limit $limit): $out"; exit 1; }
    for c in allreduce allgather bcast reduce reduce_scatter_block reduce_scatter; do
      echo "$out" | grep -q "^gencoll: $c count=.* algorithm=" ||
        { echo "FAIL: no gencoll line for MPI_${c}_c (limit $limit): $out"; exit 1; }
    done
    largest=$(echo "$out" | sed -n 's/^count_probe: rank [0-9]* [1-9][0-9]* calls, largest count \([0-9]*\)$/\1/p' | sort -n)
    [ "$(echo "$largest" | grep -c .)" = 3 ] || { echo "FAIL: not every rank's probe saw calls (limit $limit): $out"; exit 1; }
    most=$(echo "$largest" | tail -n 1)
    if [ "$limit" = 3 ]; then
      [ "$most" -le 3 ] || { echo "FAIL: a call carried $most elements under GENCOLL_COUNT_LIMIT=3"; exit 1; }
    else
      [ "$most" -gt 3 ] || { echo "FAIL: no call carried more than 3 elements without the limit ($most): the probe sees nothing"; exit 1; }
    fi
    echo "ok: the MPI-4 _c entry points, served by gencoll, right (count limit $limit; largest count a call carried: $most)"
  done
fi
echo "PASS: every collective right with at most 3 elements per MPI call"
