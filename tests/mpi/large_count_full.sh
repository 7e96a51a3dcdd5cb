#!/usr/bin/env bash
# Counts above 2^31 in earnest (make check-full; about 10 GiB of memory, a few
# minutes on 2 cores): 3 ranks allgather 750,000,000 bytes each (2.25e9 in
# all, above the int counts of MPI-3 calls) through the interposition library
# on each MPI (k-nomial, recursive multiplying, k-ring), the MPICH module
# (k-ring) and the Open MPI component (radix-k Bruck), every byte checked,
# separate buffers and MPI_IN_PLACE, gencoll's debug line for every call.
# And 2 ranks broadcast one element of a type of 2^31 + 4096 bytes (more
# than MPI_Type_size's int can say), contiguous, with a gap, and each at the
# root with the other elsewhere, through the interposition library on each
# MPI (k-nomial, k-ring), the MPICH module and the Open MPI component. And 2
# ranks reduce and allreduce 2^31 + 4096 bytes with an op of MPI_Op_create,
# whose function takes an int count (about 9 GiB), through the MPICH module
# and the interposition library on MPICH (Open MPI 4.1 has no MPI_Reduce_c).
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
count=${BIG_ALLGATHER_BYTES:-750000000}
bbytes=${BIG_BCAST_BYTES:-2147487744}
ubytes=${BIG_USER_OP_BYTES:-2147487744}
fail() { echo "FAIL: $*"; exit 1; }
# pinned MPI LABEL NP BIN ARG COLL=ALG:K...: BIN ARG on NP ranks, each COLL
# (upper case) pinned to ALG at radix K, with gencoll's debug lines; its
# output in $out, labelled on stdout. MPI: mpich or openmpi (Debian's, with
# the interposition library preloaded), module (the MPICH module) or
# component (Open MPI with the gencoll component).
pinned() {
  local mpi=$1 label=$2 np=$3 bin=$4 arg=$5 c a k
  shift 5
  local -a args=() env=()
  for c in "$@"; do
    a=${c#*=} c=${c%%=*}
    k=${a#*:} a=${a%%:*}
    case $mpi in
      module) args+=(-genv "MPIR_CVAR_${c}_DEVICE_COLLECTIVE" 0 -genv "MPIR_CVAR_${c}_INTRA_ALGORITHM" "$a"
        -genv "MPIR_CVAR_${c}_$(echo "$a" | tr a-z A-Z)_KVAL" "$k") ;;
      component) c=$(echo "$c" | tr A-Z a-z)
        args+=(--mca "coll_gencoll_${c}_algorithm" "$a" --mca "coll_gencoll_${c}_${a}_kval" "$k") ;;
      *) env+=("GENCOLL_${c}_INTRA_ALGORITHM=$a" "GENCOLL_${c}_$(echo "$a" | tr a-z A-Z)_KVAL=$k") ;;
    esac
  done
  env+=(GENCOLL_DEBUG=1 LD_PRELOAD="$builddir/$mpi/.libs/libgencoll-pmpi.so")
  case $mpi in
    module) out=$(timeout -k 5 900 "$prefix/bin/mpiexec" -n "$np" -genv LD_LIBRARY_PATH "$prefix/lib" "${args[@]}" \
        -genv MPIR_CVAR_GENCOLL_DEBUG 1 "$bin" "$arg" 2>&1) ;;
    component) out=$(timeout -k 5 900 mpiexec.openmpi --oversubscribe --allow-run-as-root -n "$np" \
        --mca mca_base_component_path "$path" "${args[@]}" --mca coll_gencoll_verbose 1 "$bin" "$arg" 2>&1) ;;
    mpich) for c in "${env[@]}" GENCOLL_WAIT_POLICY=yield; do args+=(-genv "${c%%=*}" "${c#*=}"); done
      out=$(timeout -k 5 900 mpiexec.mpich -n "$np" "${args[@]}" "$bin" "$arg" 2>&1) ;;
    *) for c in "${env[@]}"; do args+=(-x "$c"); done
      out=$(timeout -k 5 900 mpiexec.openmpi --oversubscribe --allow-run-as-root -n "$np" "${args[@]}" "$bin" "$arg" 2>&1) ;;
  esac
  local rc=$?
  echo "$out" | sed "s/^/$mpi $label: /"
  return $rc
}
# oks N: N calls in $out right; served N LINE: gencoll's debug line for N calls.
oks() { [ "$(echo "$out" | grep -c ': ok ')" = "$1" ]; }
served() { [ "$(echo "$out" | grep -c "^gencoll: $2\$")" = "$1" ]; }
# The reduce at the root and the allreduce on both ranks right, one debug
# line each. Both algorithms reduce whole vectors at p = 2: more than
# INT_MAX elements reach the op's pieces.
user_op_right() {
  oks 3 && served 1 "reduce count=$ubytes .* algorithm=knomial k=2" &&
    served 1 "allreduce count=$ubytes .* algorithm=recursive_multiplying k=2"
}
ran=0
for mpi in mpich openmpi; do
  cc=mpicc.$mpi
  [ -f "$builddir/$mpi/.libs/libgencoll-pmpi.so" ] && command -v "$cc" >/dev/null || continue
  for prog in big_allgather big_bcast big_user_op; do
    bin=$builddir/tests/mpi/$prog.$mpi
    if ! err=$("$cc" -O2 -o "$bin" "$srcdir/tests/mpi/$prog.c" 2>&1); then
      rm -f "$bin"
      # Open MPI 4.1 has no MPI_Reduce_c.
      [ "$prog.$mpi" = big_user_op.openmpi ] || { echo "$err"; fail "cannot build $prog with $cc"; }
    fi
  done
  for alg in knomial:2 recursive_multiplying:3 kring:3; do
    pinned "$mpi" "$alg" 3 "$builddir/tests/mpi/big_allgather.$mpi" "$count" ALLGATHER="$alg" || fail "$mpi $alg: exit $?"
    oks 2 || fail "$mpi $alg: not both calls right"
    served 2 "allgather count=$count .* algorithm=${alg%%:*} k=${alg#*:}" || fail "$mpi $alg: gencoll did not serve both calls"
    ran=1
  done
  for alg in knomial:2 kring:2; do
    pinned "$mpi" "bcast $alg" 2 "$builddir/tests/mpi/big_bcast.$mpi" "$bbytes" BCAST="$alg" && oks 4 ||
      fail "$mpi bcast $alg: not all four calls right"
    # Beyond MPI_Pack's int counts the gapped type needs MPI_Pack_c, which
    # Open MPI 4.1 lacks: its own bcast then, on every rank of the calls
    # where any rank has the gapped type (a rank left in gencoll hangs).
    n=$([ "$mpi" = mpich ] || [ "$bbytes" -le 2147483647 ] && echo 4 || echo 1)
    served "$n" "bcast count=1 bytes=$bbytes .* algorithm=${alg%%:*} k=${alg#*:}" ||
      fail "$mpi bcast $alg: gencoll did not serve $n calls"
  done
  if [ -x "$builddir/tests/mpi/big_user_op.$mpi" ]; then
    pinned "$mpi" "user op" 2 "$builddir/tests/mpi/big_user_op.$mpi" "$ubytes" REDUCE=knomial:2 \
      ALLREDUCE=recursive_multiplying:2 && user_op_right || fail "$mpi user op: not every call right"
  fi
done
# The MPICH module and the Open MPI component take the same programs (built
# with Debian's mpicc.mpich / mpicc.openmpi) with no preload.
prefix=$(cat "$builddir/mpich-prefix" 2>/dev/null || true)
if [ -n "$prefix" ] && [ -x "$prefix/bin/mpiexec" ] && [ -x "$builddir/tests/mpi/big_allgather.mpich" ]; then
  for alg in kring:3 knomial:2; do
    pinned module "$alg" 3 "$builddir/tests/mpi/big_allgather.mpich" "$count" ALLGATHER="$alg" && oks 2 ||
      fail "module $alg: not both calls right"
    served 2 "allgather count=$count .* algorithm=${alg%%:*} k=${alg#*:}" || fail "module $alg: gencoll did not serve both calls"
  done
  pinned module "bcast kring:2" 2 "$builddir/tests/mpi/big_bcast.mpich" "$bbytes" BCAST=kring:2 && oks 4 ||
    fail "module bcast: not all four calls right"
  served 4 "bcast .*algorithm=kring k=2" || fail "module bcast: gencoll did not serve all four calls"
  pinned module "user op" 2 "$builddir/tests/mpi/big_user_op.mpich" "$ubytes" REDUCE=knomial:2 \
    ALLREDUCE=recursive_multiplying:2 && user_op_right || fail "module user op: not every call right"
fi
path=$(cat "$builddir/ompi-component/component-path" 2>/dev/null || true)
if [ -n "$path" ] && [ -x "$builddir/tests/mpi/big_allgather.openmpi" ]; then
  pinned component kbruck:2 3 "$builddir/tests/mpi/big_allgather.openmpi" "$count" ALLGATHER=kbruck:2 && oks 2 ||
    fail "component: not both calls right"
  served 2 "allgather count=$count .* algorithm=kbruck k=2" || fail "component: gencoll did not serve both calls"
  pinned component "bcast kring:2" 2 "$builddir/tests/mpi/big_bcast.openmpi" "$bbytes" BCAST=kring:2 && oks 4 ||
    fail "component bcast: not all four calls right"
fi
[ "$ran" = 1 ] || { echo "SKIP: no interposition library built"; exit 77; }
echo "PASS: allgather above 2^31 elements, a bcast of a type above 2^31 bytes and reductions of 2^31 elements with a user op, every byte right"
