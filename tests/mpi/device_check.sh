#!/usr/bin/env bash
# Device buffers through the interposition library, without a GPU: the
# fake libgencoll-cuda (tests/gpu/fake_cuda.cpp) reports its own allocations
# as device memory, and loaded as .../libcuda.so.1 it makes the process look
# as if CUDA had started. tests/mpi/device_check.c then runs allreduce,
# allgather, bcast and reduce on "device" buffers under Open MPI and MPICH
# with several algorithms, p and staging modes, and the GENCOLL_DEBUG lines
# must show the device transport (staged or direct) and the host-copy path
# where the kernels do not apply.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "FAIL: $*"; exit 1; }
fake=$builddir/tests/gpu/.libs/libfake-gencoll-cuda.so
[ -f "$fake" ] || { echo "SKIP: $fake not built"; exit 77; }
# The file name is what makes the process look as if it had loaded the driver.
mkdir -p "$builddir/tests/gpu/fake-driver"
driver=$builddir/tests/gpu/fake-driver/libcuda.so.1
ln -sf "$fake" "$driver"

ran=0
for mpi in openmpi mpich; do
  mpicc=mpicc.$mpi mpiexec=mpiexec.$mpi lib=$builddir/$mpi/.libs/libgencoll-pmpi.so
  command -v "$mpicc" > /dev/null && command -v "$mpiexec" > /dev/null && [ -f "$lib" ] || continue
  bin=$builddir/tests/mpi/device_check.$mpi
  src=$srcdir/tests/mpi/device_check.c
  mkdir -p "$(dirname "$bin")"
  [ "$bin" -nt "$src" ] || "$mpicc" -O1 -Wall -Wextra -o "$bin" "$src" -ldl || fail "cannot build device_check with $mpicc"
  # ALLREDUCE/ALLGATHER BCAST REDUCE
  for algs in "recursive_multiplying knomial knomial" "permuted_recursive_multiplying kring binomial" \
      "kring recursive_multiplying knomial"; do
    set -- $algs
    for p in 1 2 3 5; do
      for staging in always never; do
        vars=(GENCOLL_ALLREDUCE_INTRA_ALGORITHM=$1 GENCOLL_ALLGATHER_INTRA_ALGORITHM=$1
              GENCOLL_BCAST_INTRA_ALGORITHM=$2 GENCOLL_REDUCE_INTRA_ALGORITHM=$3
              GENCOLL_ALLREDUCE_${1^^}_KVAL=3 GENCOLL_ALLGATHER_${1^^}_KVAL=3
              GENCOLL_GPU_STAGING=$staging GENCOLL_CUDA_LIBRARY=$driver GENCOLL_DEBUG=1 LD_PRELOAD=$lib)
        if [ "$mpi" = openmpi ]; then
          args=(--oversubscribe --allow-run-as-root --mca btl self,vader -n "$p")
          for v in "${vars[@]}"; do args+=(-x "$v"); done
        else
          args=(-n "$p")
          for v in "${vars[@]}"; do args+=(-genv "${v%%=*}" "${v#*=}"); done
        fi
        what="$mpi p=$p $algs staging=$staging"
        out=$(timeout -k 5 120 "$mpiexec" "${args[@]}" "$bin" "$driver" < /dev/null 2>&1) || fail "$what: $out"
        echo "$out" | grep -q "device_check: p=$p done" || fail "$what: no summary: $out"
        case $staging in
          always) want="device buffers, messages staged through pinned host memory" ;;
          never) want="device buffers, messages as device pointers" ;;
        esac
        echo "$out" | grep -q "$want" || fail "$what: no line \"$want\": $out"
        for why in "no device kernel for this datatype and op" "host and device buffers mixed"; do
          echo "$out" | grep -q "device buffers run on host copies ($why)" || fail "$what: the $why case did not run on host copies: $out"
        done
        others=$(echo "$out" | grep "device buffers run on host copies (" | grep -v -e "no device kernel" -e "mixed")
        [ -z "$others" ] || fail "$what: other calls ran on host copies: $others"
        ran=$((ran + 1))
      done
    done
  done
  # Without the helper library the buffers are taken for host memory (here
  # they are), and rank 0 says why once, GENCOLL_DEBUG or not.
  if [ "$mpi" = openmpi ]; then
    args=(--oversubscribe --allow-run-as-root --mca btl self,vader -n 2 -x LD_PRELOAD="$lib"
          -x GENCOLL_CUDA_LIBRARY=/nonexistent/libgencoll-cuda.so.0 -x GENCOLL_ALLREDUCE_INTRA_ALGORITHM=knomial)
  else
    args=(-n 2 -genv LD_PRELOAD "$lib" -genv GENCOLL_CUDA_LIBRARY /nonexistent/libgencoll-cuda.so.0
          -genv GENCOLL_ALLREDUCE_INTRA_ALGORITHM knomial)
  fi
  out=$(timeout -k 5 120 "$mpiexec" "${args[@]}" "$bin" "$driver" < /dev/null 2>&1) || fail "$mpi without the library: $out"
  [ "$(echo "$out" | grep -c "the CUDA driver is loaded but libgencoll-cuda is not")" = 1 ] ||
    fail "$mpi without the library: expected one line saying so: $out"
  # CUDA unable to say what a buffer is (a sticky error of an earlier
  # kernel): a clear error through the communicator's handler, where taking
  # the buffer for host memory would have memcpy read device memory.
  if [ "$mpi" = openmpi ]; then
    args=(--oversubscribe --allow-run-as-root --mca btl self,vader -n 2 -x LD_PRELOAD="$lib"
          -x GENCOLL_CUDA_LIBRARY="$driver" -x FAKE_CUDA_STICKY=1 -x GENCOLL_ALLREDUCE_INTRA_ALGORITHM=knomial)
  else
    args=(-n 2 -genv LD_PRELOAD "$lib" -genv GENCOLL_CUDA_LIBRARY "$driver" -genv FAKE_CUDA_STICKY 1
          -genv GENCOLL_ALLREDUCE_INTRA_ALGORITHM knomial)
  fi
  if out=$(timeout -k 5 120 "$mpiexec" "${args[@]}" "$bin" "$driver" < /dev/null 2>&1); then
    fail "$mpi with CUDA unable to classify buffers: the program ran to the end: $out"
  fi
  echo "$out" | grep -q "gencoll_cuda_memory_type: cudaPointerGetAttributes: an illegal memory access" ||
    fail "$mpi with CUDA unable to classify buffers: no message naming it: $out"
  # Buffers on another GPU than the calling thread's current one: copied to
  # the host and back (the kernels and scratch would be on the current GPU).
  if [ "$mpi" = openmpi ]; then
    args=(--oversubscribe --allow-run-as-root --mca btl self,vader -n 3 -x LD_PRELOAD="$lib"
          -x GENCOLL_CUDA_LIBRARY="$driver" -x FAKE_CUDA_ELSEWHERE=1 -x GENCOLL_DEBUG=1)
    for c in ALLREDUCE ALLGATHER BCAST REDUCE; do args+=(-x GENCOLL_${c}_INTRA_ALGORITHM=knomial); done
  else
    args=(-n 3 -genv LD_PRELOAD "$lib" -genv GENCOLL_CUDA_LIBRARY "$driver" -genv FAKE_CUDA_ELSEWHERE 1
          -genv GENCOLL_DEBUG 1)
    for c in ALLREDUCE ALLGATHER BCAST REDUCE; do args+=(-genv GENCOLL_${c}_INTRA_ALGORITHM knomial); done
  fi
  out=$(timeout -k 5 120 "$mpiexec" "${args[@]}" "$bin" "$driver" < /dev/null 2>&1) ||
    fail "$mpi with buffers on another GPU: $out"
  echo "$out" | grep -q "device_check: p=3 done" || fail "$mpi with buffers on another GPU: no summary: $out"
  echo "$out" | grep -q "device buffers run on host copies (a buffer on another GPU than the calling thread's current one)" ||
    fail "$mpi with buffers on another GPU: no line saying they ran on host copies: $out"
  ! echo "$out" | grep -q "device buffers, messages" || fail "$mpi with buffers on another GPU: the device transport ran: $out"
  echo "PASS: $mpi device buffers"
done
[ "$ran" -gt 0 ] || { echo "SKIP: no MPI with a built interposition library"; exit 77; }
echo "device_check: $ran runs passed"
