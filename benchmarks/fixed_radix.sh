#!/usr/bin/env bash
# The cost of generality through the MPICH module (issue 19): gencoll at the
# fixed radix against MPICH's hand-written algorithm of the same schedule, all
# four collectives, 8 B to 1 MiB, interleaved in one gencoll-bench run per
# collective (best median of 5 rounds), ranks bound to cores; then
# fixed_radix.py's ratio table. Needs the module's MPICH (scripts/build-mpich.sh
# writes BUILD/mpich-prefix); build it without --progress-yield for bound ranks.
#
# usage: benchmarks/fixed_radix.sh OUT_DIR [--np N] [--build BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: fixed_radix.sh OUT_DIR [--np N] [--build BUILD_DIR]}
shift
np=2 build=$top/build
while [ $# -gt 0 ]; do
  case $1 in
    --np) np=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    *) echo "fixed_radix.sh: unknown option '$1' (expected --np N, --build DIR)" >&2; exit 1 ;;
  esac
done
[ -f "$build/mpich-prefix" ] || { echo "fixed_radix.sh: no $build/mpich-prefix (run scripts/build-mpich.sh)" >&2; exit 1; }
prefix=$(cat "$build/mpich-prefix")
mkdir -p "$out"
run() {  # COLLECTIVE SWEEP
  "$prefix/bin/mpiexec" -n "$np" -bind-to core -genv LD_LIBRARY_PATH "$prefix/lib" \
    "$build/benchmarks/gencoll-bench.mpich" --coll "$1" -m 8:1048576 -i 200 -x 20 --max-time 0.05 --rounds 5 \
    --sweep "$2" --csv "$out/$1.csv" > "$out/$1.txt"
}
# k-ring with k = p is the ring.
run allgather "recursive_multiplying:2,mpich:recursive_doubling,kring:$np,mpich:ring,kbruck:2,mpich:brucks"
run allreduce "recursive_multiplying:2,mpich:recursive_doubling,rabenseifner:2,mpich:reduce_scatter_allgather"
run bcast "knomial:2,mpich:binomial"
run reduce "knomial:2,mpich:binomial,rabenseifner:2,mpich:reduce_scatter_gather"
{ head -n 1 "$out/allgather.csv"
  for c in allgather allreduce bcast reduce; do tail -n +2 "$out/$c.csv"; done; } > "$out/bench.csv"
rm -f "$out"/{allgather,allreduce,bcast,reduce}.csv
python3 "$top/benchmarks/fixed_radix.py" "$out/bench.csv" | tee "$out/ratios.md"
