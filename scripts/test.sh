#!/usr/bin/env bash
# Sets everything up (packages, build) and runs every test: Catch2 unit and
# schedule-checker tests, the purity check of the generators, and the MPI
# integration matrix under MPICH and Open MPI through the interposition library.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/build.sh"
cd "$top/build"
start=$(date +%s)
status=0
make -j"$(nproc)" check || status=$?
for log in tests/unit/unit_tests.log tests/check_pure.sh.log tests/mpi/matrix-mpich.sh.log tests/mpi/matrix-openmpi.sh.log; do
  [ -f "$log" ] || continue
  echo "== $log"
  grep -E "All tests passed|test cases|assertions|check_pure:|run_matrix:|FAIL" "$log" | tail -n 5 || true
done
echo "test.sh: finished in $(( $(date +%s) - start )) s, status $status"
exit $status
