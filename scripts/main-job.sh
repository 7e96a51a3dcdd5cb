#!/usr/bin/env bash
# The main job: set everything up, profile this machine, tune, and measure.
#
#   1. build gencoll and MPICH 4.0.2 with the gencoll module (cached);
#   2. measure this machine's LogGP parameters (gencoll-loggp) into a profile;
#   3. simulate every algorithm x radix x size on it and write the selection
#      file (gencoll-tune);
#   4. measure, with gencoll-bench on the module, MPICH's default, every fixed
#      algorithm/k (MPICH's and gencoll's), the node-aware compositions the
#      tuned file chose (smp+ALG:K) and the tuned file, for the four
#      collectives over a size sweep;
#   5. run three unchanged applications (benchmarks/app_proxy.c: data-parallel
#      training, a CG-like solver, master and workers) with MPICH's default
#      and with the tuned file, their collectives sized by --max;
#   6. print the table (benchmarks/analyze.py: speedup of the tuned file over
#      MPICH's default, selection quality, rank correlation, generalization
#      cost, the applications' time per step) and plot the measured speedup
#      per size.
#
# usage: main-job.sh [--np N] [--min BYTES] [--max BYTES] [--iters N] [--out DIR] [--merge DIR]
#                    [--apps LIST] [--app-rounds N] [--app-compute US] [--apps-only]
#                    [--hostfile FILE | --emulate N[xR] [--rate R] [--mtu M] | --single-node]
#   --np N        ranks (default: the host file's or allocation's slots, the
#                 emulated cluster's N x R, else the cores, 4 to 16)
#   --max BYTES   largest message (default 1048576; 16777216 across hosts);
#                 allgather's blocks go up to BYTES / ranks
#   --min BYTES   smallest message measured (default 8; allgather's blocks from
#                 the first power of two whose buffers reach BYTES)
#   --merge DIR   continue the run in DIR (a results directory of this
#                 script, same shape): reuse its profile (no profiling),
#                 measure --min to --max, and score DIR's measurements
#                 outside that range with these as one run, so a sweep too
#                 long for one sitting (a device call's 10 minutes) runs in
#                 two: first --max M, then --merge DIR --min 2M --max M2;
#                 sizes DIR skipped are filled in the same way
#   --iters N     timed iterations per point (default 50; fewer where one call
#                 takes over --max-time)
#   --max-time S  seconds per point and round (default 0.25)
#   --rounds N    interleaved rounds per point, the best kept (default 3)
#   --trace N     across hosts (--emulate): afterwards, run the N gencoll
#                 configurations farthest from their prediction at the
#                 network-bound sizes again with GENCOLL_TRACE, and set each
#                 rank's per-message times beside the model's
#                 (trace/*/compare.txt, benchmarks/trace_compare.py;
#                 default 4, 0: none)
#   --apps LIST   the applications of step 5, comma-separated (default
#                 ddp,cg,master; none: skip the step): ddp sums --max bytes of
#                 gradients in buckets of --max/4 and broadcasts as many bytes
#                 of parameters every 5 steps (once in the 5 timed), cg gathers
#                 a vector of --max/4 bytes and takes two 8-byte dot products,
#                 master broadcasts --max/4 bytes and reduces as many; each
#                 step also computes --app-compute us. An application that
#                 fails (a wrong result) is reported and the job goes on to
#                 its report, then exits 1
#   --app-rounds N  jobs of each application under each selection,
#                 interleaved (default 3; the report takes their median)
#   --app-compute US  microseconds of computation per step (default 1000; a
#                 pause, so that ranks sharing cores leave them to the network)
#   --apps-only   steps 1-3 and 5 only: profile, tune, and the applications
#                 under MPICH's default and the tuned file (DIR/apps.md), no
#                 collective sweeps (minutes where the whole job takes hours)
#   --out DIR     results directory (default benchmarks/results/DATE-WHERE-Nr)
#   --hostfile F  run across the hosts of a hydra host file (host[:slots] lines)
#   --emulate NxR run on an emulated cluster of N hosts with R ranks each
#                 (scripts/cluster.sh; needs root), NICs at --rate (default
#                 1gbit) each way; R defaults to 1
#   --progress-yield  MPICH built with the progress yield even where every
#                 rank has a core (on an emulated cluster the kernel's packet
#                 processing, a real NIC's work, then gets the cores of ranks
#                 that wait; the default there when the ranks take every
#                 core and no --rps); with --bundle, its mpich-yield/ libraries
#   --rps         with --emulate: each host's NIC processing on its last core
#                 (scripts/cluster.sh up --rps; hosts need a core to spare)
#   --mtu M       with --emulate: the NICs' MTU (default cluster.sh's: 9000 down
#                 to 72 Mbit/s, 1500 below). The shaper lets
#                 the first frame after an idle spell leave at once (charging
#                 its time after it left, whatever the bucket's depth), so a
#                 message that starts on an idle link arrives one frame time
#                 early; 1500 makes that 12 us at 1 Gbit/s (72 with 9000), at
#                 six times the packets (cores to spare needed)
#   --single-node all ranks on this machine, even where it has too few cores
#   --no-build    use the existing build/ and its MPICH prefix as they are
#                 (refused where ranks share cores and that MPICH spins)
#   --bundle DIR  use the binaries, MPICH and libraries packed by
#                 scripts/device-bundle.sh (a machine with no compiler or MPI)
# Where the job runs: inside a Slurm allocation (SLURM_JOB_ID set) hydra's own
# Slurm support places the ranks; with --hostfile on those hosts; with
# --emulate on the emulated cluster. Without any of them, a machine with
# fewer cores than ranks runs an emulated cluster at 1 Gbit/s (when root) in
# which every rank has a core of its own: one host per core, one rank each
# (2x1 on 2 cores; with --np N, N/2 hosts x 2 ranks or N x 1, sharing cores
# where N exceeds them), because ranks oversubscribed on a few cores measure
# the CPU scheduler, not the algorithms; --single-node forces one node. With more ranks than cores,
# MPICH is built with the progress-yield option and ranks are not bound
# (DESIGN.md, oversubscription); otherwise ranks are bound to cores (with the
# progress yield still where an emulated cluster's ranks take every core). The
# profile, the tuning (for the real shape: hosts x ranks per host) and the
# measurements all run where the job runs. The directory keeps every input and
# output with the machine, the date and the command (machine.txt).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cores=$(nproc)
np= max= min=8 merge= iters=50 max_time=0.25 rounds=3 trace=4 out= build_it=1 bundle= hostfile= emulate= rate=1gbit rate_given=0 single=0 rps=() force_yield=0 mtu=()
apps=ddp,cg,master app_rounds=3 app_compute=1000 apps_only=0
cmdline="scripts/main-job.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --np) np=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --min) min=$2; shift 2 ;;
    --merge) merge=$(cd "${2:?--merge needs a directory}" 2>/dev/null && pwd) || { echo "main-job.sh: --merge $2: no such directory" >&2; exit 2; }; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --max-time) max_time=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --trace) trace=$2; shift 2 ;;
    --apps) apps=${2:?--apps needs a list}; shift 2 ;;
    --apps-only) apps_only=1; shift ;;
    --app-rounds) app_rounds=${2:?--app-rounds needs a number}; shift 2 ;;
    --app-compute) app_compute=${2:?--app-compute needs microseconds}; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --hostfile) hostfile=${2:?--hostfile needs a file}; shift 2 ;;
    --emulate) emulate=$2; shift 2 ;;
    --rate) rate=${2:?--rate needs a rate}; rate_given=1; shift 2 ;;
    --single-node) single=1; shift ;;
    --rps) rps=(--rps); shift ;;
    --mtu) mtu=(--mtu "${2:?--mtu needs a value}"); shift 2 ;;
    --progress-yield) force_yield=1; shift ;;
    --no-build) build_it=0; shift ;;
    --bundle) bundle=$(cd "$2" && pwd); build_it=0; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "main-job.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "main-job: $*" >&2; }
die() { echo "main-job.sh: $*" >&2; exit 2; }
[[ $trace =~ ^[0-9]+$ ]] || die "--trace $trace: expected a number of configurations (0: none)"
[[ $apps =~ ^(none|(ddp|cg|master)(,(ddp|cg|master))*)$ ]] || die "--apps $apps: expected none or a comma-separated list of ddp, cg, master"
[[ $app_rounds =~ ^[1-9][0-9]*$ ]] || die "--app-rounds $app_rounds: expected a positive number of jobs"
[[ $app_compute =~ ^[0-9]+$ ]] || die "--app-compute $app_compute: expected whole microseconds"
[ "$apps_only" = 0 ] || [ "$apps" != none ] || die "--apps-only with --apps none: nothing to run"
[ "$apps_only" = 0 ] || [ -z "$merge" ] || die "--apps-only profiles and tunes afresh: it takes no --merge"
if [ -n "$hostfile" ]; then
  [ -f "$hostfile" ] || die "--hostfile $hostfile: no such file"
  hostfile=$(cd "$(dirname "$hostfile")" && pwd)/$(basename "$hostfile")
fi
if [ -n "$hostfile" ] && [ -n "$emulate" ]; then die "--hostfile and --emulate exclude each other"; fi
# Where the ranks run: hosts x ranks per host.
hosts=1 per_host=
if [ -n "$emulate" ]; then
  [[ $emulate =~ ^([1-9][0-9]*)(x([1-9][0-9]*))?$ ]] || die "--emulate $emulate: expected N or NxR (hosts x ranks per host), e.g. 4x2"
  hosts=${BASH_REMATCH[1]} per_host=${BASH_REMATCH[3]:-1}
elif [ -n "$hostfile" ]; then
  hosts=$(grep -cvE '^\s*(#|$)' "$hostfile" || true)  # grep -c of nothing: 0, and status 1
  [ "$hosts" -ge 1 ] || die "--hostfile $hostfile: no hosts in it"
  # hydra's form HOST[:RANKS]; the job runs as many on each as the fewest.
  bad=$(awk -F: '!/^[[:space:]]*(#|$)/ && !($2 == "" || $2 ~ /^[1-9][0-9]*[[:space:]]*$/) { print; exit }' "$hostfile")
  [ -z "$bad" ] || die "--hostfile $hostfile: '$bad': expected HOST or HOST:RANKS with RANKS a positive integer"
  per_host=$(awk -F: '!/^[[:space:]]*(#|$)/ { print ($2 == "" ? 1 : $2 + 0) }' "$hostfile" | sort -n | head -n 1)
elif [ -n "${SLURM_JOB_ID:-}" ]; then
  hosts=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}
  per_host=$(( ${SLURM_NTASKS:-$hosts} / hosts ))
elif [ "$single" = 0 ] && [ "${np:-$(( cores < 4 ? 4 : cores ))}" -gt "$cores" ] && [ -z "$bundle" ]; then
  if [ "$(id -u)" = 0 ]; then
    if [ -z "$np" ]; then hosts=$(( cores < 2 ? 2 : cores )) per_host=1
    elif [ $(( np % 2 )) = 0 ] && [ "$np" -ge 4 ]; then hosts=$(( np / 2 )) per_host=2
    else hosts=$np per_host=1; fi
    emulate=${hosts}x${per_host}
    log "$cores cores are too few for ${np:-4} ranks: running on an emulated cluster of $hosts hosts x $per_host rank(s), NICs at $rate, $([ $(( hosts * per_host )) -le "$cores" ] && echo "each rank on a core of its own" || echo "the hosts sharing the cores") (scripts/cluster.sh; --emulate NxR for another shape, --single-node to oversubscribe this machine instead)"
  else
    log "$cores cores are too few for ${np:-4} ranks and the emulated cluster needs root: oversubscribing this machine, which measures its CPU scheduler more than the algorithms"
  fi
fi
[ ${#rps[@]} = 0 ] || [ -n "$emulate" ] || die "--rps: only with --emulate (it steers the emulated hosts' NIC processing)"
[ ${#mtu[@]} = 0 ] || [ -n "$emulate" ] || die "--mtu: only with --emulate (it sets the emulated hosts' NICs)"
[ "$rate_given" = 0 ] || [ -n "$emulate" ] || die "--rate: only with --emulate (it sets the emulated hosts' NICs; a host file's or allocation's network is what it is)"
# What the cluster would refuse (a bad rate or MTU, too many hosts, not
# root), now rather than after the builds; with a bundle, with the ip and tc
# it carries (its env.sh, sourced below, puts them on the PATH for `up`).
[ -z "$emulate" ] || PATH=$PATH${bundle:+:$bundle/bin} bash "$top/scripts/cluster.sh" check "$hosts" --rate "$rate" \
  "${rps[@]}" "${mtu[@]}" || exit 2
if [ -z "$np" ]; then
  if [ -n "$per_host" ]; then np=$(( hosts * per_host )); else np=$(( cores < 4 ? 4 : (cores > 16 ? 16 : cores) )); fi
fi
[ -n "$per_host" ] || per_host=$np
max=${max:-$([ "$hosts" -gt 1 ] && echo 16777216 || echo 1048576)}
for v in np max min iters rounds; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--$v ${!v}: expected a positive integer"
done
[[ $max_time =~ ^[0-9]*\.?[0-9]+$ ]] || die "--max-time $max_time: expected a number of seconds"
[ "$max" -ge 8 ] || die "--max $max: expected at least 8 bytes"
[ "$min" -ge 8 ] && [ "$min" -le "$max" ] || die "--min $min: expected 8 to --max ($max) bytes"
# A file of the --merge directory, which a kept run holds gzipped where it is
# large (benchmarks/results/README.md).
merge_has() { [ -f "$merge/$1" ] || [ -f "$merge/$1.gz" ]; }
merge_cat() { if [ -f "$merge/$1" ]; then cat "$merge/$1"; else zcat "$merge/$1.gz"; fi; }
if [ -n "$merge" ]; then
  for f in profile.json sweep.csv tuned-run.csv; do
    merge_has "$f" || die "--merge $merge: no $f there (a results directory of main-job.sh?)"
  done
  [ "$min" -gt 8 ] || die "--merge: give --min, the smallest size to measure beyond $merge's"
  [ -z "$out" ] || [ "$(cd "$out" 2>/dev/null && pwd)" != "$merge" ] || die "--merge $merge: give another --out (this run's files would replace its)"
  mranks=$(merge_cat sweep.csv | awk -F, 'NR == 2 { print $3 }')
  [ "$mranks" = "$np" ] || die "--merge $merge: measured on $mranks ranks, this run has $np"
  # The tuned file covers DIR's sizes above --max too, so that they are
  # scored against this run's predictions.
  mmax=$(merge_cat sweep.csv | awk -F, 'NR > 1 && $6 != "allgather" && $8 + 0 > m { m = $8 + 0 } END { print m + 0 }')
fi
tune_max=$max
if [ -n "$merge" ] && [ "$mmax" -gt "$max" ]; then tune_max=$mmax; fi
# Ranks per core on one host decide binding and MPICH's waits.
oversub=0
if [ "$per_host" -gt "$cores" ]; then oversub=1; fi
# The emulated hosts share this machine's cores.
if [ -n "$emulate" ] && [ $(( hosts * per_host )) -gt "$cores" ]; then oversub=1; fi
# On an emulated cluster whose ranks take every core, the emulated NICs'
# packet processing (the kernel's softirqs, a real NIC's work) runs on the
# ranks' cores, and ranks that spin while they wait hold it back for whole
# scheduler slices: on 2 hosts x 1 rank of 2 cores a 1 MiB round trip took
# 22-28 ms for seconds at a time instead of 17, and the tuned file's runs up
# to 1.5x the same schedules' in the sweep (network-bound selection quality
# 0.952 / 0.367 spinning, 0.996 / 0.979 yielding; selection/PROFILES.md).
# MPICH's progress-yield build gives waiting ranks' cores to it.
yield_why=
[ "$force_yield" = 0 ] || yield_why=--progress-yield
if [ "$oversub" = 0 ] && [ "$force_yield" = 0 ] && [ -n "$emulate" ] && [ ${#rps[@]} = 0 ] &&
  [ $(( hosts * per_host )) -ge "$cores" ]; then
  force_yield=1 yield_why="the $np ranks take all $cores cores, which also run the emulated NICs' packet processing"
fi
where=${cores}c
[ -n "$emulate" ] && where=emu${hosts}x${per_host}-$rate
if [ -n "$hostfile" ] || [ -n "${SLURM_JOB_ID:-}" ]; then where=${hosts}n; fi
out=${out:-$top/benchmarks/results/$(date +%F)-${where}-${np}r}
mkdir -p "$out"
out=$(cd "$out" && pwd)

start=$(date +%s)
build=$top/build
if [ "$build_it" = 1 ]; then
  log "building gencoll"
  bash "$top/scripts/build.sh" >/dev/null
  yield=()
  if [ "$oversub" = 1 ] || [ "$force_yield" = 1 ]; then yield=(--progress-yield); fi
  log "building MPICH 4.0.2 with the gencoll module ${yield[*]} (cached after the first run)"
  bash "$top/scripts/build-mpich.sh" "${yield[@]}" --gencoll-build "$build" >/dev/null
fi
if [ -n "$bundle" ]; then
  [ -f "$bundle/env.sh" ] || { echo "main-job.sh: $bundle is not a bundle of scripts/device-bundle.sh" >&2; exit 1; }
  # shellcheck source=/dev/null
  source "$bundle/env.sh"
  build=$bundle/build prefix=$bundle/mpich ldpath=$LD_LIBRARY_PATH
  if { [ "$force_yield" = 1 ] || [ "$oversub" = 1 ]; } && ! grep -q ', --progress-yield$' "$prefix/BUILD" 2>/dev/null; then
    [ -d "$bundle/mpich-yield/lib" ] ||
      { echo "main-job.sh: ranks that share cores or --progress-yield need MPICH's progress-yield build: $bundle has no mpich-yield/ (pack it again with scripts/device-bundle.sh)" >&2; exit 1; }
    ldpath=$bundle/mpich-yield/lib:$ldpath
  fi
else
  [ -f "$build/mpich-prefix" ] || { echo "main-job.sh: no MPICH prefix in $build (run without --no-build)" >&2; exit 1; }
  prefix=$(cat "$build/mpich-prefix") ldpath=$prefix/lib
  # With --no-build, build/mpich-prefix is whichever build ran last (the
  # device bundle's is the spinning one): ranks that share cores and spin
  # would measure the scheduler, under a machine.txt that says otherwise.
  # The progress-yield build is the one whose libmpich calls sched_yield.
  if { [ "$oversub" = 1 ] || [ "$force_yield" = 1 ]; } &&
    ! nm -D --undefined-only "$prefix/lib/libmpich.so.12" 2>/dev/null | grep -qw sched_yield; then
    echo "main-job.sh: $([ "$oversub" = 1 ] && echo "$np ranks share $cores cores" || echo "$yield_why"), but $prefix (build/mpich-prefix) is MPICH without --progress-yield, whose waiting ranks spin; run without --no-build, or first: bash scripts/build-mpich.sh --progress-yield" >&2
    exit 1
  fi
fi
# Step 5's binary, asked for before the hours of measuring that come first.
[ "$apps" = none ] || [ -x "$build/benchmarks/app_proxy.mpich" ] ||
  { echo "main-job.sh: no $build/benchmarks/app_proxy.mpich for --apps $apps (build again, pack the bundle again, or --apps none)" >&2; exit 1; }
bind=(-bind-to core) wrap=()
[ "$oversub" = 1 ] && bind=()
where_args=()
if [ -n "$emulate" ]; then
  # network.txt: what the emulated NICs carried and dropped and how often
  # TCP retransmitted, so a slow run shows whether packets were lost. Set
  # first: an interrupted `up` leaves nothing either.
  trap 'bash "$top/scripts/cluster.sh" status > "$out/network.txt" 2>&1; bash "$top/scripts/cluster.sh" down' EXIT
  bash "$top/scripts/cluster.sh" up "$hosts" --rate "$rate" "${rps[@]}" "${mtu[@]}"
  # Apart from the read, which would take a failure's empty output for none.
  launch=$(bash "$top/scripts/cluster.sh" mpiexec-args "$per_host")
  read -r -a where_args <<< "$launch"
  # hydra's -bind-to would put local rank r of every emulated host on core r
  # of the machine; the cluster's binder uses the host's own cores.
  bind=()
  [ "$oversub" = 1 ] || wrap=("$(bash "$top/scripts/cluster.sh" binder)")
elif [ -n "$hostfile" ]; then
  where_args=(-f "$hostfile")
fi
# launch [-genv NAME VALUE]... PROGRAM ARGS (the program after the binder)
launch() {
  local -a opts=()
  while [ "${1:-}" = -genv ]; do opts+=("$1" "$2" "$3"); shift 3; done
  "$prefix/bin/mpiexec" "${where_args[@]}" -n "$np" "${bind[@]}" -genv LD_LIBRARY_PATH "$ldpath" "${opts[@]}" \
    "${wrap[@]}" "$@"
}

# The tuned file's runs keep MPICH's own device collectives out of the way.
no_device=(-genv MPIR_CVAR_ALLGATHER_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0
  -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0)
# Step 5, applications that stay unchanged: the same binary with MPICH's
# default and with the tuned file, jobs interleaved so that a slow spell of
# the machine falls on both. A failure (the proxy checks every result) is
# the report's to show, not a reason to lose the measurements before it.
app_failed=()
run_apps() {
  rm -f "$out/apps.csv" "$out/apps.txt"
  [ "$apps" != none ] || return 0
  log "running the applications ($apps) with MPICH's default and the tuned file"
  local quarter r a label args sel
  quarter=$(( max / 32 * 8 < 8 ? 8 : max / 32 * 8 ))  # whole floats, ints and doubles
  for r in $(seq 1 "$app_rounds"); do
    for a in ${apps//,/ }; do
      case $a in
        ddp) args=(ddp --bytes "$(( 4 * quarter ))" --bucket "$quarter" --every 5) ;;
        cg) args=(cg --rows "$(( quarter / 8 / np < 1 ? 1 : quarter / 8 / np ))") ;;
        master) args=(master --bytes "$quarter") ;;
      esac
      for label in default tuned; do
        sel=()
        [ "$label" = default ] || sel=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$out/tuned.json" "${no_device[@]}")
        launch "${sel[@]}" "$build/benchmarks/app_proxy.mpich" "${args[@]}" --steps 5 --warmup 1 --rounds 1 \
          --compute "$app_compute" --label "$label" --csv "$out/apps.csv" >> "$out/apps.txt" 2>&1 < /dev/null ||
          { app_failed+=("$a ($label)"); tail -n 3 "$out/apps.txt" >&2; }
      done
    done
  done
}
apps_failed_exit() {
  [ ${#app_failed[@]} -gt 0 ] || return 0
  echo "main-job.sh: applications failed: ${app_failed[*]} (their output: $out/apps.txt)" >&2
  exit 1
}

# shellcheck source=machine-info.sh
source "$top/scripts/machine-info.sh"
{
  machine_date
  echo "command: $cmdline"
  machine_platform
  echo "ranks: $np on $hosts host(s), $per_host per host$([ "$oversub" = 1 ] && echo " (more than the $cores cores: MPICH's progress-yield build, ranks not bound)" || echo " (bound to cores${wrap[*]:+ of their own host by the binder of cluster.sh})${yield_why:+; the progress-yield build of MPICH: $yield_why}")"
  if [ -n "$emulate" ]; then echo "network: emulated cluster (scripts/cluster.sh): $(bash "$top/scripts/cluster.sh" status | head -n 1)"
  elif [ -n "$hostfile" ]; then echo "hosts: $hostfile: $(grep -vE '^\s*(#|$)' "$hostfile" | paste -sd' ')"
  elif [ -n "${SLURM_JOB_ID:-}" ]; then echo "hosts: Slurm job $SLURM_JOB_ID: ${SLURM_JOB_NODELIST:-?}"; fi
  echo "mpich: $prefix$([ -f "$prefix/BUILD" ] && echo " ($(cat "$prefix/BUILD"))")$([ "${ldpath%%:*}" = "${bundle:-/nonexistent}/mpich-yield/lib" ] && echo "; libraries of $(cat "$bundle/mpich-yield/BUILD")")"
  machine_gencoll "$top" "${bundle:-}"
} > "$out/machine.txt"

if [ -n "$merge" ]; then
  log "continuing $merge with $min-$max B: its profile, no profiling"
  echo "merged: $merge's profile, and its measurements outside $min-$max B" >> "$out/machine.txt"
  cp "$merge/profile.json" "$out/profile.json"
  ! merge_has profile-raw.csv || merge_cat profile-raw.csv > "$out/profile-raw.csv"
else
  log "profiling this machine (gencoll-loggp)"
  launch "$build/profiler/gencoll-loggp" --quick --out "$out/profile.json" --csv "$out/profile-raw.csv" \
    > "$out/profile.log" 2>&1 || { cat "$out/profile.log" >&2; exit 1; }
fi

log "tuning (gencoll-tune on the measured profile)"
shape=(--comm-sizes "$np")
if [ "$hosts" -gt 1 ] && [ $(( hosts * per_host )) = "$np" ]; then shape=(--shapes "${hosts}x${per_host}"); fi
"$build/selection/gencoll-tune" --profile "$out/profile.json" "${shape[@]}" --min-size 8 --max-size "$tune_max" \
  --out "$out" --name tuned --no-plot > "$out/tune.log"
if [ "$apps_only" = 1 ]; then
  run_apps
  [ ! -f "$out/apps.csv" ] || python3 "$top/benchmarks/analyze.py" --apps "$out/apps.csv" --out "$out"
  log "done in $(( $(date +%s) - start )) s; results in $out (apps.md)"
  apps_failed_exit
  exit 0
fi

# Where the profile found the NICs passing a burst at once (a shaper's token
# bucket, contention.nic_burst_bytes), the simulator starts every collective
# with full buckets, as after computation; back-to-back iterations would
# leave them part empty (at 10 Mbit/s, 18 KB take 14 ms to come back). So
# each iteration starts once the links have been idle for the refill time,
# plus a tenth.
read -r idle_us burst < <(python3 - "$out/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
burst = p.get("contention", {}).get("nic_burst_bytes", 0)
names = [l["name"] for l in p["levels"]]
node = names.index(p["node_level"]) if isinstance(p.get("node_level"), str) else -1
if burst <= 0 or node < 0 or node + 1 >= len(names):
    print(0, 0)
    sys.exit()
lg = p["levels"][node + 1]["loggp"]
rows = lg.get("table", [dict(lg, bytes=1)])
G = rows[-1]["G_ns_per_byte"]  # the simulator's curve: linear between rows, held beyond
for a, b in zip(rows, rows[1:]):
    if a["bytes"] <= burst <= b["bytes"]:
        f = (burst - a["bytes"]) / max(b["bytes"] - a["bytes"], 1)
        G = a["G_ns_per_byte"] + f * (b["G_ns_per_byte"] - a["G_ns_per_byte"])
        break
else:
    if burst < rows[0]["bytes"]:
        G = rows[0]["G_ns_per_byte"]
print(int(1.1 * burst * G / 1000) + 1, int(burst))
PY
)
[[ $idle_us =~ ^[0-9]+$ ]] || die "$out/profile.json: cannot read the NICs' burst"
if [ "$idle_us" -gt 0 ]; then
  echo "idle: $idle_us us of idle links before each iteration (the NICs pass $burst bytes at once after idling; that long refills them)" >> "$out/machine.txt"
fi

# Allgather's size is one rank's block: its buffers are np times larger.
agmax=8
while [ $(( agmax * 2 * np )) -le "$max" ]; do agmax=$(( agmax * 2 )); done
agmin=8
while [ $(( agmin * np )) -lt "$min" ] && [ "$agmin" -lt "$agmax" ]; do agmin=$(( agmin * 2 )); done
sweep() {  # CSV LABEL SWEEP [mpiexec options]: allgather, then the other three
  local csv=$1 label=$2 configs=$3 c; shift 3
  local common=(-i "$iters" -x $(( iters / 10 + 2 )) --max-time "$max_time" -c --rounds "$rounds" --idle "$idle_us"
    --sweep "$configs" --label "$label")
  for c in "allgather $agmin:$agmax" "allreduce,bcast,reduce $min:$max"; do
    read -r colls sizes <<< "$c"
    launch "$@" "$build/benchmarks/gencoll-bench.mpich" --coll "$colls" -m "$sizes" "${common[@]}" --csv "$csv.$label.part"
    if [ -f "$csv" ]; then tail -n +2 "$csv.$label.part" >> "$csv"; else mv "$csv.$label.part" "$csv"; fi
    rm -f "$csv.$label.part"
  done
}
rm -f "$out/sweep.csv" "$out/tuned-run.csv"
log "measuring MPICH's default and every fixed algorithm and radix"
sweep "$out/sweep.csv" sweep all > "$out/sweep.txt"
# How the iterations were timed and how closely the ranks' clocks agreed
# (gencoll-bench's header), so that a results directory says it.
sed -n 's/^# start: /timing: /p' "$out/sweep.txt" | head -n 1 >> "$out/machine.txt"
# The node-aware compositions the tuned file chose, each measured at every
# size as a configuration of its own, "smp+ALG:K" (MPICH's smp with ALG k=K
# among the nodes' leaders), so that the report scores those choices too.
awk -F, 'NR > 1 && $4 ~ /^smp\+/ { print $1, substr($4, 5), $5 }' "$out/tuned-picks.csv" | sort -u > "$out/smp-configs.txt"
if [ -s "$out/smp-configs.txt" ]; then
  log "measuring the node-aware compositions the tuner chose ($(wc -l < "$out/smp-configs.txt"))"
  mkdir -p "$out/smp"
  while read -r coll alg k; do
    f="$out/smp/$coll-$alg-$k.json"
    python3 "$top/benchmarks/smp_select.py" "$coll" "$alg" "$k" > "$f"
    launch -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$f" "${no_device[@]}" \
      "$build/benchmarks/gencoll-bench.mpich" --coll "$coll" -m "$min:$max" -i "$iters" -x $(( iters / 10 + 2 )) \
      --max-time "$max_time" -c --rounds "$rounds" --idle "$idle_us" --sweep native --label sweep --csv "$f.csv" \
      >> "$out/sweep.txt" < /dev/null
    awk -F, -v OFS=, -v name="smp+$alg:$k" 'NR > 1 { $7 = name; print }' "$f.csv" >> "$out/sweep.csv"
  done < "$out/smp-configs.txt"
fi
log "measuring the tuned selection file"
sweep "$out/tuned-run.csv" tuned native -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$out/tuned.json" \
  "${no_device[@]}" > "$out/tuned-run.txt"

if [ -n "$merge" ]; then
  # DIR's rows below this run's sizes, this run's, then DIR's above them
  # (same header).
  for f in sweep.csv tuned-run.csv; do
    { head -n 1 "$out/$f"
      merge_cat "$f" | awk -F, -v min="$min" -v agmin="$agmin" 'FNR > 1 && $8 + 0 < ($6 == "allgather" ? agmin : min)'
      tail -n +2 "$out/$f"
      merge_cat "$f" | awk -F, -v max="$max" -v agmax="$agmax" 'FNR > 1 && $8 + 0 > ($6 == "allgather" ? agmax : max)'
    } > "$out/$f.new"
    mv "$out/$f.new" "$out/$f"
  done
fi
run_apps
link=() app_csv=()
[ -n "$emulate" ] && link=(--link-rate "$rate")  # for the network-bound sizes
[ ! -f "$out/apps.csv" ] || app_csv=(--apps "$out/apps.csv")
rm -f "$out/model-misses.csv"  # written only with them
python3 "$top/benchmarks/analyze.py" --sweep "$out/sweep.csv" --tuned "$out/tuned-run.csv" \
  --picks "$out/tuned-picks.csv" --predicted "$out/tuned.csv" --out "$out" "${link[@]}" "${app_csv[@]}" \
  --title "gencoll on $(uname -n): $np ranks on $hosts host(s)${emulate:+ (emulated, $rate NICs)}, $cores cores, $(date +%F)"
# The configurations the model missed most, once more with every message's
# times (GENCOLL_TRACE) beside the model's: where a run on a lent machine
# parts from the prediction, its results then say which messages took the
# difference.
if [ "$trace" -gt 0 ] && [ -s "$out/model-misses.csv" ]; then
  log "tracing the $trace configurations farthest from their prediction"
  rm -rf "$out/trace"
  tail -n +2 "$out/model-misses.csv" | head -n "$trace" | while IFS=, read -r coll cfg bytes _; do
    d="$out/trace/$coll-${cfg//:/-}-$bytes"
    mkdir -p "$d"
    launch -genv GENCOLL_TRACE "$d" "$build/benchmarks/gencoll-bench.mpich" --coll "$coll" -m "$bytes:$bytes" \
      -i 8 -x 2 -c --idle "$idle_us" --sweep "$cfg" > "$d/bench.txt" 2>&1 < /dev/null || continue
    python3 "$top/benchmarks/trace_compare.py" "$d" --profile "$out/profile.json" \
      --sim "$build/selection/gencoll-sim" > "$d/compare.txt" 2>&1 || true
    # The per-rank traces stay beside it, packed (a results directory is kept in git).
    tar -czf "$d/traces.tar.gz" -C "$d" $(cd "$d" && ls trace.*.csv) && rm -f "$d"/trace.*.csv
  done
fi
log "done in $(( $(date +%s) - start )) s; results in $out (report.md, speedup.png)"
apps_failed_exit
