#!/usr/bin/env bash
# One call of the device tool that runs what is left to measure, part after
# part, within a budget of seconds, packing each part's results into
# OUT/<part>.tar.gz as soon as it ends: a lent machine comes for 15 minutes a
# session and 10 a call, the tool brings back at most 8 files, and a part cut
# by the budget still returns what it measured (benchmarks/rescore.py scores a
# main job cut in its sweep).
#
# usage: device-session.sh OUT [--budget SECONDS] [--bundle DIR] PART...
#   PART  gpu[:MAX]              scripts/gpu-run.sh --bundle DIR: GPU tests,
#                                kernel timings (permutations to MAX bytes,
#                                default 1 GiB), device-buffer collectives
#         emu:NxR[:ROUNDS[:MAX]] the main job on an emulated cluster of N hosts
#                                x R ranks at 1 Gbit/s, 8 B to MAX (default
#                                4194304), ROUNDS rounds (default 2)
#         merge:SRC:MIN:MAX      continue the main job of SRC (a results
#                                directory or its .tar.gz, e.g. an earlier
#                                call's emu part, carried) from MIN to MAX,
#                                one round (main-job.sh --merge)
#         apps:NxR[:MAX]         main-job.sh --apps-only on N hosts x R ranks
#                                at 1 Gbit/s: profile, tune, and the three
#                                applications under MPICH's default and the
#                                tuned file, sized by MAX (default 4194304)
#         np:N                   the main job on this machine alone, N ranks
#         probe:NxR[:S]          benchmarks/emu_probe.sh on N hosts x R ranks:
#                                binding, a gencoll-loggp profile (with R >= 4
#                                its memory radix) and an allreduce sweep of 8
#                                configurations to 4 MiB, stopped after S
#                                seconds of sweep (default 100)
#   --budget S   seconds for all parts together (default 540, a call's 600 less
#                the packing and the machine's own start of the command); a part
#                gets what is left and is stopped there; one that would start
#                with under 60 s left is skipped and said so
#   --bundle DIR what scripts/device-bundle.sh packed (default .device)
# Example (after `bash scripts/device-bundle.sh` here):
#   run(command="bash scripts/device-session.sh $OUT emu:4x1 emu:8x1:1", carry=[".device"], timeout_s=600)
# OUT/session.txt says what ran, for how long and how it ended; each part's
# log is in its tarball, and its last lines are printed (the device tool
# brings back at most 8 files: with session.txt, seven parts).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: device-session.sh OUT [--budget SECONDS] [--bundle DIR] PART... (PART: gpu[:MAX] | emu:NxR[:ROUNDS[:MAX]] | apps:NxR[:MAX] | merge:SRC:MIN:MAX | np:N | probe:NxR[:S])"
case ${1:-} in
  -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*|"") echo "device-session.sh: the first argument is the output directory ($usage)" >&2; exit 2 ;;
esac
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift
budget=540 bundle=$top/.device parts=()
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=${2:-}; shift 2 ;;
    --bundle) bundle=${2:-}; shift 2 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "device-session.sh: unknown option '$1' ($usage)" >&2; exit 2 ;;
    *) parts+=("$1"); shift ;;
  esac
done
[[ $budget =~ ^[1-9][0-9]*$ ]] || { echo "device-session.sh: --budget takes seconds, not '$budget'" >&2; exit 2; }
[ ${#parts[@]} -gt 0 ] || { echo "device-session.sh: no part to run ($usage)" >&2; exit 2; }
[ -d "$bundle" ] || { echo "device-session.sh: no bundle at $bundle (run scripts/device-bundle.sh here first, and carry it)" >&2; exit 2; }
bundle=$(cd "$bundle" && pwd)
size_re='^[1-9][0-9]*$'

# Every part is checked before any runs: a typo found after eight minutes of
# measuring costs the session's device time.
for part in "${parts[@]}"; do
  IFS=: read -r kind a b c extra <<< "$part"
  ok=1
  case $kind in
    gpu) [[ -z $a || $a =~ $size_re ]] && [ -z "$b" ] || ok=0 ;;
    emu) [[ $a =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] && [[ -z $b || $b =~ ^[1-9]$ ]] && [[ -z $c || $c =~ $size_re ]] && [ -z "$extra" ] || ok=0 ;;
    merge) [ -e "$a" ] && [[ $b =~ $size_re && $c =~ $size_re ]] && [ -z "$extra" ] || ok=0 ;;
    apps) [[ $a =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] && [[ -z $b || $b =~ $size_re ]] && [ -z "$c" ] || ok=0 ;;
    np) [[ $a =~ ^[1-9][0-9]*$ ]] && [ -z "$b" ] || ok=0 ;;
    probe) [[ $a =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] && [[ -z $b || $b =~ $size_re ]] && [ -z "$c" ] || ok=0 ;;
    *) ok=0 ;;
  esac
  [ $ok = 1 ] || { echo "device-session.sh: bad part '$part' ($usage; merge's SRC must exist)" >&2; exit 2; }
done

# A directory of this call's own: a merge part may read an earlier call's.
work=$(mktemp -d /tmp/device-session.XXXXXX)
report=$out/session.txt
source "$top/scripts/machine-info.sh"
echo "device-session: $(date -u '+%F %T UTC'), gencoll $(gencoll_commit "$top")$([ -f "$bundle/COMMIT" ] && echo " (bundle built at $(cat "$bundle/COMMIT"))"), budget ${budget}s, $(nproc) cores" > "$report"
start=$SECONDS failed=0

# Runs "$@" in a process group of its own for at most $1 seconds; the group
# is stopped whole at the limit (mpiexec and its ranks with the shell).
run_limited() {
  local limit=$1 log=$2
  shift 2
  : > "$log"
  # Appending: the stop note below and what the group writes as it stops
  # (main-job brings its cluster down) must not overwrite each other.
  setsid "$@" >> "$log" 2>&1 < /dev/null &
  local pid=$! end=$((SECONDS + limit)) rc=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $end ]; then
      echo "device-session: stopped at its limit of ${limit}s" >> "$log"
      kill -TERM -- "-$pid" 2>/dev/null || true
      sleep 5
      kill -KILL -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      return 124
    fi
    sleep 1
  done
  wait "$pid" || rc=$?
  return $rc
}

unpack() {  # a results directory, or a .tar.gz of one, as a directory
  local src=$1
  if [ -d "$src" ]; then (cd "$src" && pwd); return; fi
  local dir=$work/src-$(basename "$src" .tar.gz)
  mkdir -p "$dir" && tar -C "$dir" -xzf "$src"
  # The tarball holds one directory (the run's).
  find "$dir" -mindepth 1 -maxdepth 1 -type d | head -1
}

n=0
for part in "${parts[@]}"; do
  n=$((n + 1))
  left=$((budget - (SECONDS - start)))
  label=$part
  [[ $part == merge:* ]] && label=$(cut -d: -f1,3,4 <<< "$part")  # the source's path makes no name
  name=$(printf '%d-%s' "$n" "$label" | tr -c 'A-Za-z0-9._\n-' '_')
  if [ $left -lt 60 ]; then
    echo "$name: skipped (${left}s of the budget left)" | tee -a "$report"
    continue
  fi
  IFS=: read -r kind a b c _ <<< "$part"
  dir=$work/$name
  cmd=()
  case $kind in
    gpu) cmd=(bash "$top/scripts/gpu-run.sh" --bundle "$bundle" --results "$dir" ${a:+--max "$a"}) ;;
    emu) cmd=(bash "$top/scripts/main-job.sh" --bundle "$bundle" --emulate "$a" --rate 1gbit --max "${c:-4194304}"
              --iters 20 --max-time 0.1 --rounds "${b:-2}" --out "$dir") ;;
    merge) src=$(unpack "$a")
           [ -f "$src/machine.txt" ] || { echo "$name: skipped ($a holds no machine.txt of a main job)" | tee -a "$report"; continue; }
           shape=$(sed -n 's/^command: .*--emulate \([0-9x]*\).*/\1/p' "$src/machine.txt" | head -1)
           [ -n "$shape" ] || { echo "$name: skipped ($src/machine.txt names no --emulate shape)" | tee -a "$report"; continue; }
           cmd=(bash "$top/scripts/main-job.sh" --bundle "$bundle" --merge "$src" --emulate "$shape" --rate 1gbit
                --min "$b" --max "$c" --iters 20 --max-time 0.1 --rounds 1 --apps none --out "$dir") ;;
    apps) cmd=(bash "$top/scripts/main-job.sh" --bundle "$bundle" --emulate "$a" --rate 1gbit --max "${b:-4194304}"
               --apps-only --out "$dir") ;;
    np) cmd=(bash "$top/scripts/main-job.sh" --bundle "$bundle" --np "$a" --out "$dir") ;;
    # The configurations of the kept 1x16 probe (2026-11-27), so that the
    # two are set side by side.
    probe) cmd=(bash "$top/benchmarks/emu_probe.sh" "$dir" --bundle "$bundle" --emulate "$a" --max 4194304
                --sweep native,kring:2,kring:8,kring:16,recursive_multiplying:2,recursive_multiplying:4,rabenseifner:2,ring
                --budget "${b:-100}") ;;
  esac
  t0=$SECONDS rc=0
  echo "device-session: $name: ${cmd[*]} (limit ${left}s)" | tee -a "$report"
  run_limited "$left" "$work/$name.log" "${cmd[@]}" || rc=$?
  # A stopped main job leaves its cluster up: the next part starts clean
  # (cluster.sh needs the bundle's ip and tc).
  [ "$kind" = gpu ] || (source "$bundle/env.sh" && bash "$top/scripts/cluster.sh" down) > /dev/null 2>&1 || true
  case $rc in 0) how=finished ;; 124) how="cut at the budget" ;; *) how="failed (exit $rc)" failed=$((failed + 1)) ;; esac
  echo "$name: $how after $((SECONDS - t0))s" | tee -a "$report"
  tail -n 15 "$work/$name.log"
  mkdir -p "$dir"
  tar -C "$work" -czf "$out/$name.tar.gz" "$name" "$name.log"
done
echo "device-session: $((SECONDS - start))s in all$([ "$failed" = 0 ] || echo ", $failed part(s) failed")" | tee -a "$report"
# Every part's results are in DIR either way; the status says whether one
# of them failed (a part cut at the budget did not fail).
[ "$failed" = 0 ]
