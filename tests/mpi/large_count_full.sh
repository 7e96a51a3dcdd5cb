#!/usr/bin/env bash
# Counts above 2^31 in earnest (make check-full; about 10 GiB of memory, a few
# minutes on 2 cores): 3 ranks allgather 750,000,000 bytes each (2.25e9 in
# all, above the int counts of MPI-3 calls) through the interposition library
# on each MPI (k-nomial, recursive multiplying, k-ring), the MPICH module
# (k-ring) and the Open MPI component (radix-k Bruck), every byte checked,
# separate buffers and MPI_IN_PLACE, gencoll's debug line for every call.
# And 2 ranks broadcast one element of a type of 2^31 + 4096 bytes (more
# than MPI_Type_size's int can say), contiguous and with a gap, through the
# interposition library on each MPI (k-nomial, k-ring), the MPICH module and
# the Open MPI component. And 2 ranks reduce and allreduce 2^31 + 4096
# bytes with an op of MPI_Op_create, whose function takes an int count
# (about 9 GiB), through the MPICH module and the interposition library on
# MPICH (Open MPI 4.1 has no MPI_Reduce_c).
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
count=${BIG_ALLGATHER_BYTES:-750000000}
bbytes=${BIG_BCAST_BYTES:-2147487744}
ubytes=${BIG_USER_OP_BYTES:-2147487744}
# user_op_right OUT: the reduce at the root and the allreduce on both ranks
# right, and gencoll's debug line for each call. Both algorithms reduce
# whole vectors at p = 2: more than INT_MAX elements reach the op's pieces.
user_op_right() {
  [ "$(echo "$1" | grep -c ': ok ')" = 3 ] &&
    [ "$(echo "$1" | grep -c "^gencoll: reduce count=$ubytes .* algorithm=knomial k=2\$")" = 1 ] &&
    [ "$(echo "$1" | grep -c "^gencoll: allreduce count=$ubytes .* algorithm=recursive_multiplying k=2\$")" = 1 ]
}
fail() { echo "FAIL: $*"; exit 1; }
# preloaded MPI COLL ALG:K NP BIN ARG: BIN on NP ranks of MPI with the
# interposition library, COLL pinned to ALG at radix K; its output in $out,
# labelled on stdout.
preloaded() {
  local mpi=$1 coll=$2 alg=$3 np=$4 bin=$5 arg=$6 a=${3%%:*} k=${3#*:} e
  local -a env=("GENCOLL_${coll}_INTRA_ALGORITHM=$a" "GENCOLL_${coll}_$(echo "$a" | tr a-z A-Z)_KVAL=$k"
                GENCOLL_DEBUG=1 LD_PRELOAD="$builddir/$mpi/.libs/libgencoll-pmpi.so") args=()
  if [ "$mpi" = mpich ]; then
    for e in "${env[@]}" GENCOLL_WAIT_POLICY=yield; do args+=(-genv "${e%%=*}" "${e#*=}"); done
    out=$(timeout -k 5 900 mpiexec.mpich -n "$np" "${args[@]}" "$bin" "$arg" 2>&1)
  else
    for e in "${env[@]}"; do args+=(-x "$e"); done
    out=$(timeout -k 5 900 mpiexec.openmpi --oversubscribe --allow-run-as-root -n "$np" "${args[@]}" "$bin" "$arg" 2>&1)
  fi
  local rc=$?
  echo "$out" | sed "s/^/$mpi $coll $alg: /"
  return $rc
}
ran=0
for mpi in mpich openmpi; do
  cc=mpicc.$mpi
  [ -f "$builddir/$mpi/.libs/libgencoll-pmpi.so" ] && command -v "$cc" >/dev/null || continue
  bin="$builddir/tests/mpi/big_allgather.$mpi"
  "$cc" -O2 -o "$bin" "$srcdir/tests/mpi/big_allgather.c" || fail "cannot build big_allgather with $cc"
  for alg in knomial:2 recursive_multiplying:3 kring:3; do
    preloaded "$mpi" ALLGATHER "$alg" 3 "$bin" "$count" || fail "$mpi $alg: exit $?"
    [ "$(echo "$out" | grep -c ': ok ')" = 2 ] || fail "$mpi $alg: not both calls right"
    [ "$(echo "$out" | grep -c "^gencoll: allgather count=$count .* algorithm=${alg%%:*} k=${alg#*:}\$")" = 2 ] ||
      fail "$mpi $alg: gencoll did not serve both calls"
    ran=1
  done
  bin="$builddir/tests/mpi/big_bcast.$mpi"
  "$cc" -O2 -o "$bin" "$srcdir/tests/mpi/big_bcast.c" || fail "cannot build big_bcast with $cc"
  if [ "$mpi" = mpich ]; then
    bin="$builddir/tests/mpi/big_user_op.$mpi"
    "$cc" -O2 -o "$bin" "$srcdir/tests/mpi/big_user_op.c" || fail "cannot build big_user_op with $cc"
    out=$(timeout -k 5 900 mpiexec.mpich -n 2 -genv GENCOLL_REDUCE_INTRA_ALGORITHM knomial -genv GENCOLL_REDUCE_KNOMIAL_KVAL 2 \
      -genv GENCOLL_ALLREDUCE_INTRA_ALGORITHM recursive_multiplying -genv GENCOLL_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL 2 \
      -genv GENCOLL_DEBUG 1 \
      -genv GENCOLL_WAIT_POLICY yield -genv LD_PRELOAD "$builddir/$mpi/.libs/libgencoll-pmpi.so" "$bin" "$ubytes" 2>&1)
    echo "$out" | sed "s/^/$mpi user op: /"
    user_op_right "$out" || fail "$mpi user op: not every call right"
  fi
  for alg in knomial:2 kring:2; do
    preloaded "$mpi" BCAST "$alg" 2 "$bin" "$bbytes" && [ "$(echo "$out" | grep -c ': ok ')" = 2 ] ||
      fail "$mpi bcast $alg: not both calls right"
    # Beyond MPI_Pack's int counts the gapped type needs MPI_Pack_c, which
    # Open MPI 4.1 lacks: its own bcast then.
    served=$([ "$mpi" = mpich ] || [ "$bbytes" -le 2147483647 ] && echo 2 || echo 1)
    [ "$(echo "$out" | grep -c "^gencoll: bcast count=1 bytes=$bbytes .* algorithm=${alg%%:*} k=${alg#*:}\$")" = "$served" ] ||
      fail "$mpi bcast $alg: gencoll did not serve $served calls"
  done
done
# The MPICH module and the Open MPI component take the same program (built
# with Debian's mpicc.mpich / mpicc.openmpi) with no preload.
prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
if [ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] && [ -x "$builddir/tests/mpi/big_allgather.mpich" ]; then
  for alg in kring:3 knomial:2; do
    a=${alg%%:*} k=${alg#*:}
    out=$(timeout -k 5 900 "$prefix/bin/mpiexec" -n 3 -genv LD_LIBRARY_PATH "$prefix/lib" \
      -genv MPIR_CVAR_ALLGATHER_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM "$a" \
      -genv "MPIR_CVAR_ALLGATHER_$(echo "$a" | tr a-z A-Z)_KVAL" "$k" -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
      "$builddir/tests/mpi/big_allgather.mpich" "$count" 2>&1)
    rc=$?
    echo "$out" | sed "s/^/module $alg: /"
    [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c ': ok ')" = 2 ] || fail "module $alg: not both calls right"
    [ "$(echo "$out" | grep -c "^gencoll: allgather count=$count .* algorithm=$a k=$k\$")" = 2 ] ||
      fail "module $alg: gencoll did not serve both calls"
  done
  if [ -x "$builddir/tests/mpi/big_bcast.mpich" ]; then
    out=$(timeout -k 5 900 "$prefix/bin/mpiexec" -n 2 -genv LD_LIBRARY_PATH "$prefix/lib" \
      -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_BCAST_INTRA_ALGORITHM kring \
      -genv MPIR_CVAR_BCAST_KRING_KVAL 2 -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
      "$builddir/tests/mpi/big_bcast.mpich" "$bbytes" 2>&1)
    rc=$?
    echo "$out" | sed "s/^/module bcast kring:2: /"
    [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c ': ok ')" = 2 ] || fail "module bcast: not both calls right"
    [ "$(echo "$out" | grep -c "^gencoll: bcast .*algorithm=kring k=2\$")" = 2 ] || fail "module bcast: gencoll did not serve both calls"
  fi
  if [ -x "$builddir/tests/mpi/big_user_op.mpich" ]; then
    out=$(timeout -k 5 900 "$prefix/bin/mpiexec" -n 2 -genv LD_LIBRARY_PATH "$prefix/lib" \
      -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_REDUCE_INTRA_ALGORITHM knomial \
      -genv MPIR_CVAR_REDUCE_KNOMIAL_KVAL 2 -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 \
      -genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM recursive_multiplying \
      -genv MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL 2 \
      -genv MPIR_CVAR_GENCOLL_DEBUG 1 "$builddir/tests/mpi/big_user_op.mpich" "$ubytes" 2>&1)
    echo "$out" | sed "s/^/module user op: /"
    user_op_right "$out" || fail "module user op: not every call right"
  fi
fi
path=$(cat "$builddir/ompi-component/component-path" 2>/dev/null || true)
if [ -n "$path" ] && [ -x "$builddir/tests/mpi/big_allgather.openmpi" ]; then
  out=$(timeout -k 5 900 mpiexec.openmpi --oversubscribe --allow-run-as-root -n 3 \
    --mca mca_base_component_path "$path" --mca coll_gencoll_allgather_algorithm kbruck \
    --mca coll_gencoll_allgather_kbruck_kval 2 --mca coll_gencoll_verbose 1 \
    "$builddir/tests/mpi/big_allgather.openmpi" "$count" 2>&1)
  rc=$?
  echo "$out" | sed "s/^/component kbruck:2: /"
  [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c ': ok ')" = 2 ] || fail "component: not both calls right"
  [ "$(echo "$out" | grep -c "^gencoll: allgather count=$count .* algorithm=kbruck k=2\$")" = 2 ] ||
    fail "component: gencoll did not serve both calls"
  if [ -x "$builddir/tests/mpi/big_bcast.openmpi" ]; then
    out=$(timeout -k 5 900 mpiexec.openmpi --oversubscribe --allow-run-as-root -n 2 \
      --mca mca_base_component_path "$path" --mca coll_gencoll_bcast_algorithm kring \
      --mca coll_gencoll_bcast_kring_kval 2 --mca coll_gencoll_verbose 1 \
      "$builddir/tests/mpi/big_bcast.openmpi" "$bbytes" 2>&1)
    rc=$?
    echo "$out" | sed "s/^/component bcast kring:2: /"
    [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c ': ok ')" = 2 ] || fail "component bcast: not both calls right"
  fi
fi
[ "$ran" = 1 ] || { echo "SKIP: no interposition library built"; exit 77; }
echo "PASS: allgather above 2^31 elements, a bcast of a type above 2^31 bytes and reductions of 2^31 elements with a user op, every byte right"
