#!/usr/bin/env bash
# A short look at the emulated cluster on real cores, for a device call of a
# few minutes (the main job needs ten): the ranks' binding, a gencoll-loggp
# profile, and one collective for a few configurations, into DIR.
#
# usage: emu_probe.sh DIR [--bundle B] [--emulate NxR] [--rate R] [--coll C]
#                         [--sweep LIST] [--max BYTES] [--budget S] [--rps]
#                         [--progress-yield] [--flows SETS] [--runs N]
#                         [--mtu M] [--min BYTES] [--trace]
#   --bundle B    binaries and MPICH of scripts/device-bundle.sh (default .device)
#   --emulate     hosts x ranks per host (default 4x2)
#   --rate R      NIC rate (default 1gbit)
#   --coll C      the collective measured (default allreduce)
#   --sweep LIST  gencoll-bench configurations
#                 (default native,kring:2,recursive_multiplying:2,rabenseifner:2,knomial:2),
#                 and MPICH's node-aware compositions as smp+ALG:K (ALG k=K among
#                 the hosts' first ranks; each a run of its own under the
#                 selection file of benchmarks/smp_select.py)
#                 ("none": no collective)
#   --max BYTES   largest message (default 4194304)
#   --min BYTES   smallest message (default 8)
#   --mtu M       the NICs' MTU (cluster.sh up --mtu; its default 9000 down to 72 Mbit/s, 1500 below)
#   --trace       the sweep's calls traced (GENCOLL_TRACE=DIR/trace, packed
#                 into DIR/traces.tar.gz for benchmarks/trace_compare.py)
#   --budget S    seconds the measurement may take before it is stopped (default 90)
#   --rps         the hosts' NIC processing on their last core (cluster.sh up --rps)
#   --progress-yield  the bundle's MPICH libraries built with the progress
#                 yield (mpich-yield/): waiting ranks leave their core to the
#                 kernel's packet processing
#   --flows SETS  after the sweep, `nic_share flows` for each set (sets
#                 separated by ';', each "BYTES REPS [sendfirst] S:D S:D ..."), each run
#                 --runs times (default 3) as jobs of their own: how a set of
#                 messages started at once shares the links, and how that
#                 changes from run to run (selection/PROFILES.md)
# Writes DIR/binding.txt, profile.json, profile-raw.csv, profile.log, sweep.csv,
# sweep.txt, flows.txt (with --flows), machine.txt, network.txt (cluster.sh status
# at the end: bytes, drops, TCP retransmissions per host). Then, where gencoll-sim is, compare offline with
#   gencoll-tune --profile DIR/profile.json --shapes NxR ... (the main job's step).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
help() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case ${1:-} in
  -h|--help) help; exit 0 ;;
  ''|-*) echo "emu_probe.sh: the first argument is the results directory (usage: emu_probe.sh DIR [options]; --help)" >&2; exit 2 ;;
esac
out=$1; shift
bundle=$top/.device emulate=4x2 rate=1gbit coll=allreduce min=8 max=4194304 budget=90 rps=() yield=0 flows= runs=3 mtu=() trace=0
sweep=native,kring:2,recursive_multiplying:2,rabenseifner:2,knomial:2
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=$(cd "$2" && pwd); shift 2 ;;
    --emulate) emulate=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --coll) coll=$2; shift 2 ;;
    --sweep) sweep=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --min) min=$2; shift 2 ;;
    --mtu) mtu=(--mtu "$2"); shift 2 ;;
    --trace) trace=1; shift ;;
    --budget) budget=$2; shift 2 ;;
    --rps) rps=(--rps); shift ;;
    --progress-yield) yield=1; shift ;;
    --flows) flows=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) help; exit 0 ;;
    *) echo "emu_probe.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $emulate =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "emu_probe.sh: --emulate $emulate: expected NxR, e.g. 4x2" >&2; exit 2; }
hosts=${BASH_REMATCH[1]} per_host=${BASH_REMATCH[2]} np=$(( ${BASH_REMATCH[1]} * ${BASH_REMATCH[2]} ))
[[ $budget =~ ^[1-9][0-9]*$ ]] || { echo "emu_probe.sh: --budget $budget: expected whole seconds" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "emu_probe.sh: --runs $runs: expected a positive whole number" >&2; exit 2; }
if [ -n "$flows" ]; then
  IFS=';' read -r -a flow_sets <<< "$flows"
  for f in "${flow_sets[@]}"; do
    [[ $f =~ ^\ *[1-9][0-9]*\ +[1-9][0-9]*(\ +sendfirst)?(\ +[0-9]+:[0-9]+(@[0-9.]+)?)+\ *$ ]] ||
      { echo "emu_probe.sh: --flows: '$f': expected \"BYTES REPS [sendfirst] S:D S:D ...\" (sets separated by ';')" >&2; exit 2; }
  done
fi
[ -f "$bundle/env.sh" ] || { echo "emu_probe.sh: $bundle is not a bundle of scripts/device-bundle.sh" >&2; exit 1; }
# shellcheck source=/dev/null
source "$bundle/env.sh"
if [ "$yield" = 1 ]; then
  [ -d "$bundle/mpich-yield/lib" ] || { echo "emu_probe.sh: --progress-yield: $bundle has no mpich-yield/ (pack it again with scripts/device-bundle.sh)" >&2; exit 1; }
  export LD_LIBRARY_PATH=$bundle/mpich-yield/lib:$LD_LIBRARY_PATH
fi
mkdir -p "$out"
cluster() { bash "$top/scripts/cluster.sh" "$@"; }
trap 'cluster status > "$out/network.txt" 2>&1; cluster down' EXIT
cluster up "$hosts" --rate "$rate" "${mtu[@]}" "${rps[@]}"
launch=$(cluster mpiexec-args "$per_host")
read -r -a where <<< "$launch"
binder=$(cluster binder)
# The launch, up to and including the binder: the rank's program follows.
base=("$bundle/mpich/bin/mpiexec" "${where[@]}" -n "$np" -genv LD_LIBRARY_PATH "$LD_LIBRARY_PATH")
run=("${base[@]}" "$binder")
# shellcheck source=../scripts/machine-info.sh
source "$top/scripts/machine-info.sh"
{
  machine_date
  echo "command: benchmarks/emu_probe.sh $out --emulate $emulate --rate $rate --coll $coll --sweep $sweep --min $min --max $max ${mtu[*]} ${rps[*]}$([ "$trace" = 1 ] && echo " --trace")$([ "$yield" = 1 ] && echo " --progress-yield")${flows:+ --flows '$flows' --runs $runs}"
  machine_platform
  echo "network: $(cluster status | head -n 1)"
  echo "mpich: $bundle/mpich$([ -f "$bundle/mpich/BUILD" ] && echo " ($(cat "$bundle/mpich/BUILD"))")"
  machine_gencoll "$top" "$bundle"
} > "$out/machine.txt"
"${run[@]}" sh -c 'echo "$(hostname) rank $PMI_RANK core $(taskset -pc $$ | sed "s/.*: //")"' | sort > "$out/binding.txt"
cat "$out/binding.txt"
"${run[@]}" "$bundle/build/profiler/gencoll-loggp" --quick --out "$out/profile.json" --csv "$out/profile-raw.csv" \
  > "$out/profile.log" 2>&1 || { tail -n 20 "$out/profile.log"; exit 1; }
sed -n '/^level system/,/^contention/p' "$out/profile.log"
flat=() smp=() items=()
[ "$sweep" = none ] || IFS=, read -r -a items <<< "$sweep"
for c in "${items[@]}"; do if [[ $c == smp+* ]]; then smp+=("$c"); else flat+=("$c"); fi; done
bench=("$bundle/build/benchmarks/gencoll-bench.mpich" --coll "$coll" -m "$min:$max" -i 10 -x 2 --max-time 0.05 -c --rounds 1)
deadline=$(( $(date +%s) + budget ))
left() { local s=$(( deadline - $(date +%s) )); echo $(( s > 1 ? s : 1 )); }
rc=0
if [ ${#flat[@]} -gt 0 ]; then
  tenv=()
  [ "$trace" = 0 ] || { mkdir -p "$out/trace"; tenv=(-genv GENCOLL_TRACE "$out/trace"); }
  timeout "$(left)" "${base[@]}" "${tenv[@]}" "$binder" "${bench[@]}" --sweep "$(IFS=,; echo "${flat[*]}")" --csv "$out/sweep.csv" \
    > "$out/sweep.txt" 2>&1 || rc=$?
fi
for c in "${smp[@]}"; do
  [ "$rc" = 0 ] || break
  [[ $c =~ ^smp\+([a-z_]+):([0-9]+)$ ]] || { echo "emu_probe.sh: $c: expected smp+ALG:K" >&2; exit 2; }
  f=$out/${c//[+:]/-}.json
  python3 "$top/benchmarks/smp_select.py" "$coll" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" > "$f"
  genv=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$f")
  for x in ALLGATHER ALLREDUCE BCAST REDUCE; do genv+=(-genv "MPIR_CVAR_${x}_DEVICE_COLLECTIVE" 0); done
  timeout "$(left)" "${base[@]}" "${genv[@]}" "$binder" "${bench[@]}" --sweep native --csv "$f.csv" \
    >> "$out/sweep.txt" 2>&1 < /dev/null || rc=$?
  [ -f "$f.csv" ] || continue
  [ -f "$out/sweep.csv" ] || head -n 1 "$f.csv" > "$out/sweep.csv"
  awk -F, -v OFS=, -v name="$c" 'NR > 1 { $7 = name; print }' "$f.csv" >> "$out/sweep.csv"
done
[ ! -f "$out/sweep.txt" ] || cat "$out/sweep.txt"
if [ "$trace" = 1 ] && [ -d "$out/trace" ]; then
  tar -C "$out/trace" -czf "$out/traces.tar.gz" . && rm -rf "$out/trace"
fi
[ "$rc" = 0 ] || echo "emu_probe.sh: the sweep stopped (exit $rc; 124: --budget $budget s ran out)"
if [ -n "$flows" ]; then
  : > "$out/flows.txt"
  for f in "${flow_sets[@]}"; do
    read -r -a args <<< "$f"
    for r in $(seq 1 "$runs"); do
      # Outside --budget (the sweep may have spent it): a minute a run at most.
      frc=0
      line=$(timeout 60 "${run[@]}" "$bundle/build/benchmarks/nic_share.mpich" flows "${args[@]}" 2>&1 < /dev/null |
        tail -n 1) || frc=$?
      # Reported, not fatal (as a sweep cut by --budget): what ran stays in DIR.
      [ "$frc" = 0 ] || line="failed (exit $frc; 124: a minute ran out): $line"
      echo "set '${args[*]}', run $r: $line" | tee -a "$out/flows.txt"
    done
  done
fi
# A sweep cut by --budget kept what it measured; one that failed did not
# measure what it was asked, and says so in the exit status too.
[ "$rc" = 0 ] || [ "$rc" = 124 ] || exit "$rc"
