#!/usr/bin/env bash
# Measures MPI_Allreduce and MPI_Allgather latency of the MPI's own algorithms
# against gencoll's (through the interposition library) and prints one table per
# collective: rows are message sizes, columns algorithm/k, cells the median
# latency in microseconds.
#   compare.sh [--mpi openmpi|mpich] [--np N] [--max BYTES] [--iters N]
# On this 2-core development machine the ranks are oversubscribed: Open MPI runs
# with --oversubscribe (its waits yield when idle, so gencoll keeps the default
# GENCOLL_WAIT_POLICY=block); MPICH's waits spin, so gencoll runs with
# GENCOLL_WAIT_POLICY=yield there (MPICH's own algorithms still spin). Absolute
# numbers reflect that, see DESIGN.md.
set -euo pipefail
build=$(cd "$(dirname "$0")/../build" && pwd)
mpi=openmpi np=4 max=262144 iters=20
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) echo "compare.sh: unknown option $1 (expected --mpi, --np, --max, --iters)" >&2; exit 2 ;;
  esac
done
bench=$build/benchmarks/coll_bench.$mpi
lib=$build/$mpi/.libs/libgencoll-pmpi.so
[ -x "$bench" ] && [ -f "$lib" ] || { echo "compare.sh: build first (missing $bench or $lib)" >&2; exit 1; }

run() {  # run <collective> <algorithm> <k>
  local env=(GENCOLL_WAIT_POLICY=$([ "$mpi" = mpich ] && echo yield || echo block))
  if [ "$2" != native ]; then
    local upper=${1^^} alg=${2^^}
    env+=("GENCOLL_${upper}_INTRA_ALGORITHM=$2")
    [ "$3" != - ] && env+=("GENCOLL_${upper}_${alg}_KVAL=$3")
  fi
  local cmd
  if [ "$mpi" = openmpi ]; then
    cmd=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec.openmpi --oversubscribe --mca btl self,vader -n "$np")
    for e in "${env[@]}" "LD_PRELOAD=$lib"; do cmd+=(-x "$e"); done
  else
    cmd=(mpiexec.mpich -n "$np")
    for e in "${env[@]}" "LD_PRELOAD=$lib"; do cmd+=(-genv "${e%%=*}" "${e#*=}"); done
  fi
  timeout 300 "${cmd[@]}" "$bench" -c "$1" -m "8:$max" -i "$iters" -x 3 | grep -v '^#' | awk '{print $2}'
}

configs=("native -" "knomial 2" "knomial 4" "recursive_doubling -" "recursive_multiplying 3" "recursive_multiplying 4"
         "permuted_recursive_multiplying 4" "ring -" "kring 2")
for coll in allreduce allgather; do
  echo "## $coll, $np ranks, $mpi, median latency (us)"
  cols=() header="size"
  sizes=$(awk -v m="$max" 'BEGIN{for(s=8;s<=m;s*=2) print s}')
  for c in "${configs[@]}"; do
    set -- $c
    header+=$'\t'"$1${2/-/}"
    cols+=("$(run "$coll" "$1" "$2" | paste -sd' ')")
  done
  echo "$header" | sed -e 's/recursive_multiplying/rm/g; s/permuted_rm/prm/; s/recursive_doubling/rd/'
  i=0
  for s in $sizes; do
    i=$((i + 1))
    line="$s"
    for col in "${cols[@]}"; do line+=$'\t'"$(echo "$col" | cut -d' ' -f$i)"; done
    echo "$line"
  done | column -t
  echo
done
