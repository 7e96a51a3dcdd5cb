#!/usr/bin/env bash
# Sets everything up (packages, build, MPICH with the gencoll module) and runs
# every test: Catch2 unit and schedule-checker tests (also under AddressSanitizer
# + UBSan), the purity check of the generators, the MPI integration matrix under
# MPICH and Open MPI through the interposition library, and the MPICH module's
# tests (Debian-built binary on its libmpich, bad settings, a selection file,
# the matrix through the MPICH-internal transport, MPICH's own coll tests),
# the device-buffer path on a fake device, the GPU kernels (skipped without a
# device), the LogGP profiler and the benchmark's configuration switching.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
bash "$top/scripts/build.sh"
# Built with the progress-yield option: the tests run many ranks on few cores.
# Cached: unchanged inputs skip the build.
bash "$top/scripts/build-mpich.sh" --progress-yield --gencoll-build "$top/build" >/dev/null
setup=$(( $(date +%s) - start ))
echo "test.sh: set up in $setup s"
status=0

# Sanitizer build of the MPI-free core and its unit tests.
asan_start=$(date +%s)
mkdir -p "$top/build-asan"
cd "$top/build-asan"
[ -f Makefile ] && [ Makefile -nt ../Makefile.in ] || ../configure --enable-sanitizers >/dev/null
make -j"$(nproc)" tests/unit/unit_tests
# The exhaustive schedule sweeps run in the plain build below; under the
# sanitizers they would take many minutes; the executor, checker and pattern
# tests below run the same generators and checker under them.
./tests/unit/unit_tests "~[schedules]" 2>&1 | tee tests/unit/unit_tests.log | tail -n 3 || status=$?  # pipefail: the tests decide
asan=$(( $(date +%s) - asan_start ))
echo "test.sh: sanitizer build and unit tests in $asan s"

cd "$top/build"
make -j"$(nproc)" check || status=$?
summary() {
  for log in "$@"; do
    [ -f "$log" ] || continue
    echo "== $log"
    grep -E "All tests passed|test cases|check_pure:|run_matrix:|mpich_suite:|cluster_check:|^(PASS|FAIL|SKIP)" "$log" | tail -n 5 || true
  done
}
echo "== summary"
summary "$top"/build-asan/tests/unit/unit_tests.log
summary tests/unit/unit_tests.log tests/unit/sim_tests.log tests/unit/loggp_tests.log tests/check_pure.sh.log \
  tests/mpi/matrix-mpich.sh.log tests/mpi/matrix-openmpi.sh.log tests/mpi/device_check.sh.log \
  tests/gpu/gpu_check.log tests/profiler/loggp_run.sh.log tests/bench/bench_check.sh.log tests/cluster/cluster_check.sh.log tests/mpich/*.log
echo "== wall time of each test (side by side under make -j; the slowest first)"
grep -rh --include='*.log' '^timed: ' "$top/build/tests" | sort -k3,3nr | head -n 15 || true
# What a failed test printed, last so that a CI excerpt of the output's end
# holds it (the logs themselves stay on the machine that ran them).
for trs in $(grep -rlE --include='*.trs' '^:test-result: (FAIL|XPASS|ERROR)' "$top/build" "$top/build-asan" 2>/dev/null); do
  echo "== failed: ${trs%.trs}.log (its FAIL lines, then its last 30 lines)"
  grep -m 5 -E '^(FAIL|ERROR)' "${trs%.trs}.log" | cut -c1-400 || true
  tail -n 30 "${trs%.trs}.log" | cut -c1-400 || true
done
echo "test.sh: finished in $(( $(date +%s) - start )) s (set up $setup s, sanitizer build and unit tests $asan s), status $status"
exit $status
