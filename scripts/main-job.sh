#!/usr/bin/env bash
# The main job: set everything up, profile this machine, tune, and measure.
#
#   1. build gencoll and MPICH 4.0.2 with the gencoll module (cached);
#   2. measure this machine's LogGP parameters (gencoll-loggp) into a profile;
#   3. simulate every algorithm x radix x size on it and write the selection
#      file (gencoll-tune);
#   4. measure, with gencoll-bench on the module, MPICH's default, every fixed
#      algorithm/k (MPICH's and gencoll's) and the tuned file, for the four
#      collectives over a size sweep;
#   5. print the table (benchmarks/analyze.py: speedup of the tuned file over
#      MPICH's default, selection quality, rank correlation, generalization
#      cost) and plot the measured speedup per size.
#
# usage: main-job.sh [--np N] [--max BYTES] [--iters N] [--out DIR]
#   --np N       ranks (default: the cores, at least 4 and at most 16)
#   --max BYTES  largest message (default 1048576)
#   --iters N    timed iterations per point (default 50)
#   --out DIR    results directory (default benchmarks/results/DATE-CORESc-Nr)
#   --no-build   use the existing build/ and its MPICH prefix as they are
#   --bundle DIR use the binaries, MPICH and libraries packed by
#                scripts/device-bundle.sh (a machine with no compiler or MPI)
# With more ranks than cores, MPICH is built with the progress-yield option and
# ranks are not bound (DESIGN.md, oversubscription); otherwise ranks are bound
# to cores. The directory keeps every input and output with the machine, the
# date and the command (machine.txt).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cores=$(nproc)
np=$(( cores < 4 ? 4 : (cores > 16 ? 16 : cores) ))
max=1048576 iters=50 out= build_it=1 bundle=
cmdline="scripts/main-job.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --np) np=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build_it=0; shift ;;
    --bundle) bundle=$(cd "$2" && pwd); build_it=0; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "main-job.sh: unknown option $1 (expected --np, --max, --iters, --out, --no-build, --bundle; see --help)" >&2; exit 2 ;;
  esac
done
for v in np max iters; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "main-job.sh: --$v ${!v}: expected a positive integer" >&2; exit 2; }
done
[ "$max" -ge 8 ] || { echo "main-job.sh: --max $max: expected at least 8 bytes" >&2; exit 2; }
out=${out:-$top/benchmarks/results/$(date +%F)-${cores}c-${np}r}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "main-job: $*" >&2; }

start=$(date +%s)
build=$top/build
if [ "$build_it" = 1 ]; then
  log "building gencoll"
  bash "$top/scripts/build.sh" >/dev/null
  yield=()
  if [ "$np" -gt "$cores" ]; then yield=(--progress-yield); fi
  log "building MPICH 4.0.2 with the gencoll module ${yield[*]} (cached after the first run)"
  bash "$top/scripts/build-mpich.sh" "${yield[@]}" --gencoll-build "$build" >/dev/null
fi
if [ -n "$bundle" ]; then
  [ -f "$bundle/env.sh" ] || { echo "main-job.sh: $bundle is not a bundle of scripts/device-bundle.sh" >&2; exit 1; }
  # shellcheck source=/dev/null
  source "$bundle/env.sh"
  build=$bundle/build prefix=$bundle/mpich ldpath=$LD_LIBRARY_PATH
else
  [ -f "$build/mpich-prefix" ] || { echo "main-job.sh: no MPICH prefix in $build (run without --no-build)" >&2; exit 1; }
  prefix=$(cat "$build/mpich-prefix") ldpath=$prefix/lib
fi
bind=(-bind-to core)
[ "$np" -gt "$cores" ] && bind=()
launch() { "$prefix/bin/mpiexec" -n "$np" "${bind[@]}" -genv LD_LIBRARY_PATH "$ldpath" "$@"; }

{
  echo "date: $(date -u '+%F %T UTC')"
  echo "command: $cmdline"
  echo "host: $(uname -n), $(uname -sr)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $cores cores"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  command -v nvidia-smi >/dev/null && echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd,)"
  echo "ranks: $np$([ "$np" -gt "$cores" ] && echo " (oversubscribed: MPICH built with --progress-yield, ranks not bound)" || echo " (bound to cores)")"
  echo "mpich: $prefix"
  echo "gencoll: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet 2>/dev/null || echo ' (modified)')"
} > "$out/machine.txt"

log "profiling this machine (gencoll-loggp)"
launch "$build/profiler/gencoll-loggp" --quick --out "$out/profile.json" --csv "$out/profile-raw.csv" \
  > "$out/profile.log" 2>&1 || { cat "$out/profile.log" >&2; exit 1; }

log "tuning (gencoll-tune on the measured profile)"
"$build/selection/gencoll-tune" --profile "$out/profile.json" --comm-sizes "$np" --min-size 8 --max-size "$max" \
  --out "$out" --name tuned --no-plot > "$out/tune.log"

bench=("$build/benchmarks/gencoll-bench.mpich" --coll all -m "8:$max" -i "$iters" -x $(( iters / 10 + 2 )))
log "measuring MPICH's default and every fixed algorithm and radix"
launch "${bench[@]}" -c --rounds 3 --sweep all --csv "$out/sweep.csv" --label sweep > "$out/sweep.txt"
log "measuring the tuned selection file"
launch -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$out/tuned.json" \
  -genv MPIR_CVAR_ALLGATHER_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 \
  -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0 \
  "${bench[@]}" -c --rounds 3 --sweep native --csv "$out/tuned-run.csv" --label tuned > "$out/tuned-run.txt"

python3 "$top/benchmarks/analyze.py" --sweep "$out/sweep.csv" --tuned "$out/tuned-run.csv" \
  --picks "$out/tuned-picks.csv" --predicted "$out/tuned.csv" --out "$out" \
  --title "gencoll on $(uname -n): $np ranks, $cores cores, $(date +%F)"
log "done in $(( $(date +%s) - start )) s; results in $out (report.md, speedup.png)"
