#!/usr/bin/env bash
# The GPU run (issue 7), in one go on a machine with an NVIDIA GPU and no
# package registry:
#
#   1. build libgencoll-cuda, its test and its benchmark in build-gpu/
#      (configure --with-cuda), unless they are there already and --no-build;
#      a carried build-gpu/ whose binaries exist is used if building fails;
#   2. run the GPU tests (every kernel against its CPU reference);
#   3. time the in-place permutation kernel against cudaMemcpy D2D of the same
#      bytes and against an out-of-place permutation (4 KiB .. --max), and the
#      reduction kernels against the memory-bandwidth floor;
#   4. run Allgather/Allreduce on device buffers (gencoll-bench -d cuda -c)
#      through the interposition library with --np ranks sharing the GPU,
#      messages staged through pinned memory and, where the MPI says it is
#      GPU-aware, as device pointers; then tests/mpi/device_check.c on the
#      real libgencoll-cuda (1-4 ranks); for each MPI whose launcher starts a
#      rank there (skipped, and said so, where none does);
#   5. with --main-job, run scripts/main-job.sh (profile, tune, measure) with
#      one rank per core, up to 16;
#   6. print a short table last.
#
# usage: gpu-run.sh [--build DIR] [--max BYTES] [--no-build] [--p P] [--k K] [--np N]
#                   [--bundle DIR] [--main-job] [--mpi-only] [--results DIR]
#   --build DIR   build directory (default build-gpu)
#   --max BYTES   largest permutation (default 1073741824)
#   --no-build    use the binaries in DIR as they are
#   --p P --k K   the permuted-recursive-multiplying permutation timed (64, 4)
#   --np N        ranks of the device-buffer collectives (default 4)
#   --bundle DIR  binaries, MPICH and libraries from scripts/device-bundle.sh
#                 (for a machine without autotools or an MPI; implies
#                 --no-build; MPICH's launcher comes from the bundle)
#   --main-job    also run the main job (step 5) into DIR/main-job
#   --mpi-only    leave out steps 2 and 3 (minutes of a device call) and run
#                 the MPI steps where nvidia-smi finds a device
#   --results DIR copy the log, the summary and the main job's results
#                 (one .tar.gz) there, e.g. the device tool's $OUT
# Output: the full log in DIR/gpu-run.log, the table on stdout.
#
# On the device tool, after `bash scripts/device-bundle.sh` here, as a part
# of scripts/device-session.sh (which packs each part's results into $OUT):
#   run(command="bash scripts/device-session.sh $OUT gpu np:16", carry=[".device"])
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-gpu max=1073741824 do_build=1 p=64 k=4 np=4 bundle= main_job=0 results= mpi_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    --max) max=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --p) p=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --bundle) bundle=$(cd "$2" && pwd); build=$bundle/build; do_build=0; shift 2 ;;
    --main-job) main_job=1; shift ;;
    --mpi-only) mpi_only=1; shift ;;
    --results) results=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "gpu-run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$build"
log=$build/gpu-run.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }

lib=$build/.libs/libgencoll-cuda.so.0
check_bin=$build/tests/gpu/.libs/gpu_check
bench_bin=$build/benchmarks/.libs/gpu_bench

build_it() {
  export PATH=$PATH:/usr/local/cuda/bin
  if [ ! -x "$top/configure" ]; then (cd "$top" && ./autogen.sh); fi
  cd "$build"
  # A build directory carried from another checkout names that checkout.
  if [ ! -f Makefile ] || ! grep -q "^abs_top_srcdir = $top\$" Makefile; then
    rm -f config.cache config.status Makefile
    "$top/configure" --with-cuda ${GENCOLL_CONFIGURE_FLAGS:-}
  fi
  make -j"$(nproc)" libgencoll-cuda.la tests/gpu/gpu_check benchmarks/gpu_bench
  # The interposition libraries and gencoll-bench for the MPI step; a machine
  # without an MPI still gets the kernel results.
  make -j"$(nproc)" || echo "gpu-run.sh: the MPI targets did not build; the device-buffer collectives are skipped"
}

if [ "$do_build" = 1 ]; then
  say "== build ($build)"
  if ! build_it >> "$log" 2>&1; then
    if [ -x "$check_bin" ] && [ -x "$bench_bin" ] && [ -f "$lib" ]; then
      say "build failed (see $log); using the binaries already in $build"
    else
      tail -n 30 "$log"; echo "gpu-run.sh: build failed, see $log" >&2; exit 1
    fi
  fi
fi
for f in "$lib" "$check_bin" "$bench_bin"; do
  [ -e "$f" ] || { echo "gpu-run.sh: $f missing (build first)" >&2; exit 1; }
done
if [ -n "$bundle" ]; then
  # shellcheck source=/dev/null
  source "$bundle/env.sh"
else
  export LD_LIBRARY_PATH=$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
command -v nvidia-smi > /dev/null && nvidia-smi -L | tee -a "$log" || true

if [ "$mpi_only" = 1 ]; then
  # An earlier run's outputs must not pass for this one's (--results copies them).
  rm -f "$build/gpu_check.out" "$build/gpu_bench.out"
  # Whether there is a device at all, without the minutes of the full test.
  check_rc=77
  nvidia-smi -L > /dev/null 2>&1 && check_rc=0
  tests="not run (--mpi-only)" bench_rc=skipped
else
  say "== GPU tests"
  set +e
  "$check_bin" "$lib" 2>&1 | tee "$build/gpu_check.out" | tee -a "$log"
  check_rc=${PIPESTATUS[0]}
  set -e
  case $check_rc in
    0) tests="PASS: $(tail -n 1 "$build/gpu_check.out")" ;;
    77) tests="SKIPPED (no CUDA device)" ;;
    *) tests="FAIL (exit $check_rc; first failures in $log)" ;;
  esac

  say "== kernel timings"
  set +e
  "$bench_bin" --max "$max" --p "$p" --k "$k" 2>&1 | tee "$build/gpu_bench.out" | tee -a "$log"
  bench_rc=${PIPESTATUS[0]}
  set -e
fi

say "== device-buffer collectives through the interposition library ($np ranks)"
# One line per MPI and staging mode for the table.
mpi_lines=()
launcher_works() { timeout 60 "$@" -n 1 true >> "$log" 2>&1; }  # LAUNCHER...
device_collectives() {  # MPI LAUNCHER...
  local mpi=$1; shift
  local bench=$build/benchmarks/gencoll-bench.$mpi pmpi=$build/$mpi/.libs/libgencoll-pmpi.so
  if [ ! -x "$bench" ] || [ ! -f "$pmpi" ]; then mpi_lines+=("$mpi: not built"); return; fi
  if ! launcher_works "$@"; then mpi_lines+=("$mpi: skipped (no working launcher: $1)"); return; fi
  local sweep=knomial:4,recursive_multiplying:4,permuted_recursive_multiplying:4,kring:4
  local mode
  for mode in always never; do
    # A short validated pass with GENCOLL_DEBUG=1 proves which path the calls
    # took; then the timed one.
    local tag="$mpi staging=$mode" out=$build/device-$mpi-$mode.out
    if ! timeout 300 "$@" -n "$np" env LD_PRELOAD="$pmpi" GENCOLL_DEBUG=1 GENCOLL_GPU_STAGING=$mode \
        "$bench" --coll allgather,allreduce -d cuda -c -m 4:65536 -i 1 -x 0 --sweep "$sweep" > "$out" 2>&1; then
      cat "$out" >> "$log"
      if [ "$mode" = never ]; then mpi_lines+=("$tag: not run (the MPI takes no device pointers)")
      else mpi_lines+=("$tag: FAIL (see $log)"); fi
      continue
    fi
    cat "$out" >> "$log"
    local dev host
    dev=$(grep -c 'device buffers, messages' "$out" || true)
    host=$(grep -c 'device buffers run on host copies' "$out" || true)
    if ! timeout 600 "$@" -n "$np" env LD_PRELOAD="$pmpi" GENCOLL_GPU_STAGING=$mode \
        "$bench" --coll allgather,allreduce -d cuda -c -m 4:16777216 -i 20 -x 5 --sweep "$sweep" \
        --csv "$build/device-$mpi-$mode.csv" > "$out" 2>&1; then
      cat "$out" >> "$log"; mpi_lines+=("$tag: FAIL in the timed pass (see $log)"); continue
    fi
    cat "$out" >> "$log"
    mpi_lines+=("$tag: PASS, validated; $dev calls on the device transport, $host on host copies; $build/device-$mpi-$mode.csv")
  done
}
# tests/mpi/device_check.c (make check runs it on a look-alike of the CUDA
# library) on the real libgencoll-cuda: every type and op the kernels cover,
# device against host buffers byte for byte, MPI_IN_PLACE, the host-copy
# cases; the GENCOLL_DEBUG lines must show which path each call took.
device_check() {  # MPI LAUNCHER...
  local mpi=$1; shift
  local bin=$build/tests/mpi/device_check.$mpi pmpi=$build/$mpi/.libs/libgencoll-pmpi.so
  # The bundle brings it built; a build tree makes it as device_check.sh does.
  if [ -z "$bundle" ] && [ -f "$pmpi" ] && ! [ "$bin" -nt "$top/tests/mpi/device_check.c" ] && command -v "mpicc.$mpi" > /dev/null; then
    mkdir -p "$(dirname "$bin")"
    "mpicc.$mpi" -O1 -Wall -Wextra -o "$bin" "$top/tests/mpi/device_check.c" -ldl >> "$log" 2>&1 || true
  fi
  if [ ! -x "$bin" ] || [ ! -f "$pmpi" ]; then mpi_lines+=("$mpi device_check: not built"); return; fi
  if ! launcher_works "$@"; then mpi_lines+=("$mpi device_check: skipped (no working launcher: $1)"); return; fi
  local runs=0 bad= algs a b c p staging out rc want why
  for algs in "kring recursive_multiplying knomial" "permuted_recursive_multiplying kring binomial"; do
    read -r a b c <<< "$algs"
    for p in 1 2 3 4; do
      # Debian's MPIs and the bundle's MPICH take no device pointers, so
      # auto must stage (tried at 4 ranks only: each run starts CUDA per rank).
      for staging in always $([ "$p" = 4 ] && echo auto); do
        out=$(timeout -k 5 60 "$@" -n "$p" env LD_PRELOAD="$pmpi" GENCOLL_DEBUG=1 GENCOLL_GPU_STAGING=$staging \
          GENCOLL_CUDA_LIBRARY="$lib" GENCOLL_ALLREDUCE_INTRA_ALGORITHM=$a GENCOLL_ALLGATHER_INTRA_ALGORITHM=$a \
          GENCOLL_BCAST_INTRA_ALGORITHM=$b GENCOLL_REDUCE_INTRA_ALGORITHM=$c \
          "GENCOLL_ALLREDUCE_${a^^}_KVAL=3" "GENCOLL_ALLGATHER_${a^^}_KVAL=3" "$bin" "$lib" < /dev/null 2>&1)
        rc=$?
        echo "-- device_check $mpi p=$p $algs staging=$staging: exit $rc" >> "$log"
        echo "$out" >> "$log"
        # A hang would hang the runs after it too, and a device call has
        # minutes: the rest are left out.
        [ $rc != 124 ] || { bad+=" p=$p/$a/$staging(hung; the rest not run)"; break 3; }
        want="device buffers, messages staged through pinned host memory"
        if [ $rc != 0 ] || ! grep -q "device_check: p=$p done" <<< "$out" || ! grep -q "$want" <<< "$out"; then
          bad+=" p=$p/$a/$staging"; continue
        fi
        for why in "no device kernel for this datatype and op" "host and device buffers mixed"; do
          grep -q "device buffers run on host copies ($why)" <<< "$out" || bad+=" p=$p/$a/$staging(no host copies: $why)"
        done
        runs=$((runs + 1))
      done
    done
  done
  if [ -z "$bad" ]; then mpi_lines+=("$mpi device_check: PASS, $runs runs on the real libgencoll-cuda")
  else mpi_lines+=("$mpi device_check: FAIL:$bad (see $log)"); fi
}

set +e
if [ "$check_rc" = 77 ]; then
  mpi_lines+=("skipped (no CUDA device)")
else
  if [ -n "$bundle" ]; then
    device_collectives mpich "$bundle/mpich/bin/mpiexec" -genv LD_LIBRARY_PATH "$LD_LIBRARY_PATH" \
      -genv UCX_MODULE_DIR "$UCX_MODULE_DIR"
    device_check mpich "$bundle/mpich/bin/mpiexec" -genv LD_LIBRARY_PATH "$LD_LIBRARY_PATH" \
      -genv UCX_MODULE_DIR "$UCX_MODULE_DIR"
  else
    device_collectives openmpi mpiexec.openmpi --oversubscribe --allow-run-as-root
    device_collectives mpich mpiexec.mpich
    device_check openmpi mpiexec.openmpi --oversubscribe --allow-run-as-root
    device_check mpich mpiexec.mpich
  fi
fi
set -e

main_line=
if [ "$main_job" = 1 ]; then
  say "== main job"
  cores=$(nproc)
  mj=(--np $(( cores > 16 ? 16 : cores )) --out "$build/main-job")
  if [ -n "$bundle" ]; then mj+=(--bundle "$bundle"); else mj+=(--no-build); fi
  set +e
  bash "$top/scripts/main-job.sh" "${mj[@]}" 2>&1 | tee -a "$log" | tail -n 8
  mj_rc=${PIPESTATUS[0]}
  set -e
  if [ "$mj_rc" = 0 ]; then main_line="$(grep -m1 'selection quality' "$build/main-job/report.md" | sed 's/^- //')"
  else main_line="FAIL (exit $mj_rc, see $log)"; fi
fi

# The table: permutations of >= 1 MiB against the copy (issue 7's target:
# >= 80%), reductions of the largest size against the floor (>= 80%).
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s%% .. %s%%", lo, hi; else printf "n/a" }'; }
perm= red= device=
if [ "$mpi_only" = 0 ] && [ -f "$build/gpu_bench.out" ]; then
  perm=$(awk '/^  [0-9]+(KiB|MiB|GiB)/ && ($1 ~ /MiB|GiB/) { sub("%", "", $5); print $5 }' "$build/gpu_bench.out" | range)
  red=$(awk '/^  [a-z]/ && $4 == "256MiB" { sub("%", "", $7); print $7 }' "$build/gpu_bench.out" | range)
  device=$(awk -F': ' '/^# device/ { print $2 }' "$build/gpu_bench.out")
fi
summary() {
  echo "== summary${device:+ ($device)}"
  printf '%-34s %s\n' "GPU tests (kernels vs CPU ref)" "$tests"
  if [ "$bench_rc" = 0 ]; then
    printf '%-34s %s\n' "in-place permutation >= 1 MiB" "$perm of cudaMemcpy D2D (target >= 80%)"
    printf '%-34s %s\n' "reductions, 256 MiB per input" "$red of the bandwidth floor (target >= 80%)"
  else
    printf '%-34s %s\n' "kernel timings" "not run ($([ "$bench_rc" = skipped ] && printf %s --mpi-only || echo "gpu_bench exit $bench_rc"))"
  fi
  for line in "${mpi_lines[@]}"; do printf '%-34s %s\n' "MPI on device buffers" "$line"; done
  [ -z "$main_line" ] || printf '%-34s %s\n' "main job ($build/main-job)" "$main_line"
}
echo
summary | tee "$build/summary.txt"
if [ -n "$results" ]; then
  cp "$log" "$build/summary.txt" "$results/"
  for f in gpu_check.out gpu_bench.out; do [ -f "$build/$f" ] && cp "$build/$f" "$results/"; done
  [ -d "$build/main-job" ] && tar -C "$build" -czf "$results/main-job.tar.gz" main-job
  cat "$build"/device-*.csv > "$results/device-collectives.csv" 2>/dev/null || true
fi
[ "$check_rc" = 0 ] || [ "$check_rc" = 77 ]
