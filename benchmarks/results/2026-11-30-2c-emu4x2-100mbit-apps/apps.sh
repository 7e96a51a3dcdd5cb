# The application proxies on an emulated cluster with MPICH's default and a
# tuned file, as main-job.sh's step 5 runs them (one job each, interleaved).
# usage: apps.sh OUT TUNED.json HOSTS PER_HOST RATE MTU MAX ROUNDS (as root; the build's MPICH)
set -euo pipefail
out=$1 tuned=$2 hosts=$3 per=$4 rate=$5 mtu=$6 max=$7 rounds=$8
top=$(cd "$(dirname "$0")/../../.." && pwd)  # the checkout this directory is kept in
prefix=$(cat $top/build/mpich-prefix)
np=$(( hosts * per ))
bash $top/scripts/cluster.sh up "$hosts" --rate "$rate" --mtu "$mtu" | tail -n 1
trap 'bash $top/scripts/cluster.sh status > "$out/network.txt" 2>&1; bash $top/scripts/cluster.sh down' EXIT
read -r -a where <<< "$(bash $top/scripts/cluster.sh mpiexec-args "$per")"
quarter=$(( max / 32 * 8 < 8 ? 8 : max / 32 * 8 ))
nodev=(-genv MPIR_CVAR_ALLGATHER_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0
  -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 -genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0)
for r in $(seq 1 "$rounds"); do
  for a in ddp cg master; do
    case $a in
      ddp) args=(ddp --bytes "$(( 4 * quarter ))" --bucket "$quarter" --every 5) ;;
      cg) args=(cg --rows "$(( quarter / 8 / np < 1 ? 1 : quarter / 8 / np ))") ;;
      master) args=(master --bytes "$quarter") ;;
    esac
    for label in default tuned; do
      sel=()
      [ "$label" = default ] || sel=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tuned" "${nodev[@]}")
      timeout 900 "$prefix/bin/mpiexec" "${where[@]}" -n "$np" -genv LD_LIBRARY_PATH "$prefix/lib" "${sel[@]}" \
        $top/build/benchmarks/app_proxy.mpich "${args[@]}" --steps 5 --warmup 1 --rounds 1 --compute 1000 \
        --label "$label" --csv "$out/apps.csv" < /dev/null 2>&1 | tee -a "$out/apps.txt"
    done
  done
done
