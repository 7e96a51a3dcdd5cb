#!/usr/bin/env bash
# The cost of generality (issue 19): gencoll at the fixed radix against the
# MPI's own hand-written algorithm of the same schedule, all four collectives,
# 8 B to 1 MiB, interleaved in one gencoll-bench run per collective (best
# median of 7 rounds of 1000 calls), ranks bound to cores; then fixed_radix.py's ratio table.
#   --mpi mpich    (default) through the MPICH module: needs BUILD/mpich-prefix
#                  (scripts/build-mpich.sh; without --progress-yield for bound ranks)
#   --mpi openmpi  through the Open MPI coll component (BUILD/ompi-component)
#                  against coll/tuned's algorithms
#   --preload      gencoll's configurations through the interposition library
#                  (LD_PRELOAD of BUILD/<mpi>/.libs/libgencoll-pmpi.so, waiting
#                  by GENCOLL_WAIT_POLICY from the environment, default block)
#                  instead of the module or the component
#   --runs N       N launches (default 1), each pair's order alternating
#                  between them (gencoll first, then the MPI's own first), and
#                  each configuration's best median over them: a launch on a
#                  VM can leave one configuration slower at a size up to a
#                  few KiB through all its rounds
#   --np N         N ranks (default 2); more than the cores: oversubscribed,
#                  every waiting rank yielding its core (MPICH's build with
#                  --progress-yield, Open MPI's mpi_yield_when_idle)
#   --emulate N    one rank on each of N emulated hosts (scripts/cluster.sh,
#                  root), NICs at --rate (default 1gbit): where the network
#                  decides (Open MPI through its TCP BTL)
#
# usage: benchmarks/fixed_radix.sh OUT_DIR [--np N] [--build BUILD_DIR] [--mpi mpich|openmpi]
#                                  [--preload] [--runs N] [--emulate N [--rate R]]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: fixed_radix.sh OUT_DIR [--np N] [--build BUILD_DIR] [--mpi mpich|openmpi] [--preload] [--runs N] [--emulate N [--rate R]]"
case ${1:-} in
  -h|--help) echo "$usage"; exit 0 ;;
  -*|"") echo "fixed_radix.sh: the first argument is the output directory ($usage)" >&2; exit 1 ;;
esac
out=$1
shift
cmdline="$out${*:+ $*}"
np=2 build=$top/build mpi=mpich emulate= rate=1gbit runs=1 preload=
while [ $# -gt 0 ]; do
  case $1 in
    --np) np=${2:?}; shift 2 ;;
    --emulate) emulate=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --preload) preload=1; shift ;;
    --build) build=${2:?}; shift 2 ;;
    --mpi) mpi=${2:?}; shift 2 ;;
    *) echo "fixed_radix.sh: unknown option '$1' ($usage)" >&2; exit 1 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "fixed_radix.sh: --runs takes a count of launches (1 or more), not '$runs'" >&2; exit 1; }
binder=() rate_args=()
if [ -n "$emulate" ]; then
  [[ $emulate =~ ^[1-9][0-9]*$ ]] || { echo "fixed_radix.sh: --emulate takes a host count, not '$emulate'" >&2; exit 1; }
  # The table then also says the network-bound sizes' figures (fixed_radix.py
  # reads the tc rate); a bad one is refused before any launch.
  bash "$top/scripts/cluster.sh" check "$emulate" --rate "$rate" || exit 1
  rate_args=(--rate "$rate")
  np=$emulate
  trap 'bash "$top/scripts/cluster.sh" down' EXIT
  bash "$top/scripts/cluster.sh" up "$np" --rate "$rate"
  # One rank per host, bound to a core of its own host by the cluster's
  # binder (the launchers' binding would put every host's rank on core 0).
  binder=("$(bash "$top/scripts/cluster.sh" binder)")
fi
lib=$build/$mpi/.libs/libgencoll-pmpi.so
[ -z "$preload" ] || [ -f "$lib" ] || { echo "fixed_radix.sh: --preload: no $lib (build gencoll first)" >&2; exit 1; }
case $mpi in
  mpich)
    [ -f "$build/mpich-prefix" ] || { echo "fixed_radix.sh: no $build/mpich-prefix (run scripts/build-mpich.sh)" >&2; exit 1; }
    prefix=$(cat "$build/mpich-prefix")
    where=(-bind-to core)
    # Apart from the read, which would take a failure's empty output for none.
    [ -z "$emulate" ] || { args=$(bash "$top/scripts/cluster.sh" mpiexec-args 1); read -r -a where <<< "$args"; }
    [ -z "$preload" ] || where+=(-genv LD_PRELOAD "$lib" -genv GENCOLL_WAIT_POLICY "${GENCOLL_WAIT_POLICY:-block}")
    launch=("$prefix/bin/mpiexec" "${where[@]}" -n "$np" -genv LD_LIBRARY_PATH "$prefix/lib"
            "${binder[@]}" "$build/benchmarks/gencoll-bench.mpich")
    own=mpich ag_rd=recursive_doubling ag_bruck=brucks ar_rsag=reduce_scatter_allgather red_rsg=reduce_scatter_gather ;;
  openmpi)
    [ -n "$preload" ] || [ -f "$build/ompi-component/component-path" ] ||
      { echo "fixed_radix.sh: no $build/ompi-component (configure found no Open MPI coll headers)" >&2; exit 1; }
    # Shared memory between the ranks of this node, as Open MPI picks it, or
    # TCP between emulated hosts; coll/tuned's algorithms switched with its
    # dynamic rules.
    where=(--bind-to core --mca btl self,vader)
    [ -n "$emulate" ] || [ "$np" -le "$(nproc)" ] || where=(--oversubscribe --bind-to none --mca btl self,vader)
    [ -z "$emulate" ] || { args=$(bash "$top/scripts/cluster.sh" mpirun-args 1); read -r -a where <<< "$args --mca btl self,tcp"; }
    # More ranks than cores: waiting ranks leave the core to those that work,
    # as MPICH's progress-yield build does (DESIGN.md, oversubscription).
    [ "$np" -le "$(nproc)" ] || where+=(--mca mpi_yield_when_idle 1)
    # Through the interposition library the component stays out.
    if [ -n "$preload" ]; then
      where+=(-x LD_PRELOAD="$lib" -x GENCOLL_WAIT_POLICY="${GENCOLL_WAIT_POLICY:-block}")
    else
      where+=(--mca mca_base_component_path "$(cat "$build/ompi-component/component-path")")
    fi
    launch=(mpiexec.openmpi --allow-run-as-root "${where[@]}" -n "$np"
            --mca coll_tuned_use_dynamic_rules 1 "${binder[@]}" "$build/benchmarks/gencoll-bench.openmpi")
    own=ompi ag_rd=recursive_doubling ag_bruck=bruck ar_rsag=rabenseifner red_rsg=rabenseifner ;;
  *) echo "fixed_radix.sh: --mpi takes mpich or openmpi, not '$mpi'" >&2; exit 1 ;;
esac
mkdir -p "$out"
# shellcheck source=../scripts/machine-info.sh
source "$top/scripts/machine-info.sh"
{
  machine_date
  echo "command: benchmarks/fixed_radix.sh $cmdline"
  machine_platform
  echo "mpi: $mpi ($([ "$mpi" = mpich ] && echo "$prefix" || command -v mpiexec.openmpi))"
  echo "gencoll through: $([ -n "$preload" ] && echo "the interposition library, GENCOLL_WAIT_POLICY=${GENCOLL_WAIT_POLICY:-block}" ||
    { [ "$mpi" = mpich ] && echo "the MPICH module" || echo "the Open MPI component"; }); $np ranks on $(nproc) cores"
  [ -z "$emulate" ] || echo "network: $(bash "$top/scripts/cluster.sh" status | head -n 1)"
  machine_gencoll "$top"
} > "$out/machine.txt"
run() {  # RUN COLLECTIVE SWEEP: pairs gencoll,own; even runs put the MPI's own first
  local sweep=$3
  (( $1 % 2 == 1 )) || sweep=$(tr ',' '\n' <<< "$3" | paste -d, - - | awk -F, '{printf "%s%s,%s", (NR > 1 ? "," : ""), $2, $1}')
  "${launch[@]}" --coll "$2" -m 8:1048576 -i 1000 -x 50 --max-time 0.05 --rounds 7 \
    --sweep "$sweep" --label "$1" --csv "$out/$2.$1.csv" > "$out/$2$( ((runs == 1)) || echo ".$1").txt"
}
for r in $(seq 1 "$runs"); do
  # k-ring with k = p is the ring.
  run "$r" allgather "recursive_multiplying:2,$own:$ag_rd,kring:$np,$own:ring,kbruck:2,$own:$ag_bruck"
  run "$r" allreduce "recursive_multiplying:2,$own:recursive_doubling,rabenseifner:2,$own:$ar_rsag"
  run "$r" bcast "knomial:2,$own:binomial"
  run "$r" reduce "knomial:2,$own:binomial,rabenseifner:2,$own:$red_rsg"
done
head -n 1 "$out/allgather.1.csv" > "$out/bench.csv"
for r in $(seq 1 "$runs"); do
  for c in allgather allreduce bcast reduce; do tail -n +2 "$out/$c.$r.csv" >> "$out/bench.csv" && rm "$out/$c.$r.csv"; done
done
python3 "$top/benchmarks/fixed_radix.py" "$out/bench.csv" "${rate_args[@]}" | tee "$out/ratios.md"
