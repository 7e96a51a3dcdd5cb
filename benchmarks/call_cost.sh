#!/usr/bin/env bash
# Where a small collective's fixed cost goes (issue 19): instructions per call,
# gencoll at the fixed radix against the MPI's own algorithm of the same
# schedule, counted by callgrind on rank 0 while rank 1 runs at full speed
# (so rank 0 finds its messages waiting and counts little polling). Counts do
# not vary run to run as a 0.4 us time does on a shared VM; what they leave
# out (caches, branch misses) the timings of fixed_radix.sh keep.
#   --mpi mpich    (default) through the MPICH module (BUILD/mpich-prefix)
#   --mpi openmpi  through the Open MPI coll component (BUILD/ompi-component)
#   --size BYTES   message size (default 8)
#   --symmetric    both ranks under callgrind, so each finds the other as slow
#                  as itself and messages arrive when they would natively (a
#                  fast peer's messages all arrive before rank 0 posts, which
#                  sends them down the PML's unexpected-message path: the
#                  asymmetric count charges the PML for the harness); the
#                  counts then include polling, which moves from run to run
#   --preload      gencoll's configurations through the interposition library
#                  (LD_PRELOAD of BUILD/<mpi>/.libs/libgencoll-pmpi.so, each
#                  configuration picked by gencoll-bench through
#                  gencoll_pmpi_select, waiting by GENCOLL_WAIT_POLICY from the
#                  environment, default block, as fixed_radix.sh --preload) on
#                  Debian's MPICH (mpiexec.mpich, the library's own MPI) or
#                  Open MPI without the component; counted from the
#                  interposed MPI_<Coll>, the MPI's own algorithms too (they
#                  pass through the library's decision to leave the call)
#
# usage: benchmarks/call_cost.sh OUT_DIR [--build BUILD_DIR] [--mpi mpich|openmpi] [--size BYTES] [--symmetric] [--preload]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: call_cost.sh OUT_DIR [--build BUILD_DIR] [--mpi mpich|openmpi] [--size BYTES] [--symmetric] [--preload]"
case ${1:-} in
  -h|--help) echo "$usage"; exit 0 ;;
  -*|"") echo "call_cost.sh: the first argument is the output directory ($usage)" >&2; exit 1 ;;
esac
out=$1
shift
build=$top/build mpi=mpich size=8 symmetric=0 preload=
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --mpi) mpi=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --symmetric) symmetric=1; shift ;;
    --preload) preload=1; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    *) echo "call_cost.sh: unknown option '$1' ($usage)" >&2; exit 1 ;;
  esac
done
[[ $size =~ ^[1-9][0-9]*$ ]] || { echo "call_cost.sh: --size takes a byte count, not '$size'" >&2; exit 1; }
command -v valgrind > /dev/null || { echo "call_cost.sh: needs valgrind (scripts/install-deps.sh)" >&2; exit 1; }
[[ $mpi =~ ^(mpich|openmpi)$ ]] || { echo "call_cost.sh: --mpi takes mpich or openmpi, not '$mpi'" >&2; exit 1; }
lib=$build/$mpi/.libs/libgencoll-pmpi.so
[ -z "$preload" ] || [ -f "$lib" ] || { echo "call_cost.sh: --preload: no $lib (build gencoll first)" >&2; exit 1; }
wait_policy=${GENCOLL_WAIT_POLICY:-block}
per_rank=()  # options each MPMD context needs for itself
case $mpi in
  mpich)
    if [ -n "$preload" ]; then
      command -v mpiexec.mpich > /dev/null || { echo "call_cost.sh: --preload: no mpiexec.mpich (Debian's MPICH)" >&2; exit 1; }
      launch=(mpiexec.mpich -bind-to core -genv LD_PRELOAD "$lib" -genv GENCOLL_WAIT_POLICY "$wait_policy")
    else
      [ -f "$build/mpich-prefix" ] || { echo "call_cost.sh: no $build/mpich-prefix (run scripts/build-mpich.sh)" >&2; exit 1; }
      prefix=$(cat "$build/mpich-prefix")
      launch=("$prefix/bin/mpiexec" -bind-to core -genv LD_LIBRARY_PATH "$prefix/lib")
    fi
    bench=$build/benchmarks/gencoll-bench.mpich
    own=mpich ar_rd=recursive_doubling ;;
  openmpi)
    launch=(mpiexec.openmpi --allow-run-as-root --bind-to core --mca btl self,vader --mca coll_tuned_use_dynamic_rules 1)
    if [ -n "$preload" ]; then
      # Through the interposition library the component stays out. Open
      # MPI's -x exports to its own context only: every rank gets them.
      per_rank=(-x LD_PRELOAD="$lib" -x GENCOLL_WAIT_POLICY="$wait_policy")
    else
      [ -f "$build/ompi-component/component-path" ] ||
        { echo "call_cost.sh: no $build/ompi-component (configure found no Open MPI coll headers)" >&2; exit 1; }
      launch+=(--mca mca_base_component_path "$(cat "$build/ompi-component/component-path")")
    fi
    bench=$build/benchmarks/gencoll-bench.openmpi
    own=ompi ar_rd=recursive_doubling ;;
  *) echo "call_cost.sh: --mpi takes mpich or openmpi, not '$mpi'" >&2; exit 1 ;;
esac
# The profiled entry: the MPI's own (the module and the component run
# beneath it), or the interposed one in front of it.
entry=PMPI
[ -z "$preload" ] || entry=MPI
mkdir -p "$out"
profiles=()
# COLLECTIVE ENTRY CONFIG: one profile of rank 0 (MPMD: rank 1 without valgrind,
# or under callgrind too with --symmetric).
count() {
  local file=$out/callgrind.$1.${3/:/-}
  # A fixed number of calls for every configuration (no --max-time, which
  # fits the count to the first call's time: under valgrind gencoll's first
  # call generates the schedule, so it ran 20x fewer calls and every count
  # carried 1/1000 of the generation, some 60 instructions).
  local args=("$bench" --coll "$1" -m "$size:$size" -i 20000 -x 10 --rounds 1 --sweep "$3")
  # --symmetric: every rank under callgrind, each profile named by its rank
  # (%q: from the launcher's environment); rank 0's is the one read.
  local rankvar=PMI_RANK
  [ "$mpi" = openmpi ] && rankvar=OMPI_COMM_WORLD_RANK
  local grind=(valgrind --tool=callgrind --toggle-collect="$2" --callgrind-out-file="$file")
  [ "$symmetric" = 1 ] && grind[3]=--callgrind-out-file="$file.%q{$rankvar}"
  local ranks=(-n 1 "${per_rank[@]}" "${grind[@]}" "${args[@]}" : -n 1 "${per_rank[@]}" "${args[@]}")
  [ "$symmetric" = 1 ] && ranks=(-n 2 "${per_rank[@]}" "${grind[@]}" "${args[@]}")
  "${launch[@]}" "${ranks[@]}" > "$out/$1.${3/:/-}.txt" 2> "$out/$1.${3/:/-}.err" ||
    { echo "call_cost.sh: $1 $3 failed (see $out/$1.${3/:/-}.err)" >&2; exit 1; }
  [ "$symmetric" = 0 ] || mv "$file.0" "$file"
  profiles+=("$file")
}
count allgather "${entry}_Allgather" recursive_multiplying:2
count allgather "${entry}_Allgather" "$own:recursive_doubling"
count allgather "${entry}_Allgather" kring:2
count allgather "${entry}_Allgather" "$own:ring"
count allreduce "${entry}_Allreduce" recursive_multiplying:2
count allreduce "${entry}_Allreduce" "$own:$ar_rd"
count bcast "${entry}_Bcast" knomial:2
count bcast "${entry}_Bcast" "$own:binomial"
count reduce "${entry}_Reduce" knomial:2
count reduce "${entry}_Reduce" "$own:binomial"
python3 "$top/benchmarks/call_cost.py" --entry "$entry" "${profiles[@]}" | tee "$out/call_cost.md"
