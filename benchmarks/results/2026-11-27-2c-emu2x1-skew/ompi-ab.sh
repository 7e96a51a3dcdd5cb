#!/bin/bash
# ompi-ab.sh: Open MPI 4.1.4 (TCP BTL) on the same 2 emulated hosts: its own
# rabenseifner (6) and recursive doubling (3) through coll/tuned's dynamic
# rules against gencoll's through the coll component, one rank DELAY us late.
# Run from the repository root with the cluster up (GENCOLL_CLUSTER_ID=7
# bash scripts/cluster.sh up 2 --cpus 1) and ./skew-ompi built with
# mpicc.openmpi from ../2026-11-27-2c-emu2x1-handshake/skew.c.
export GENCOLL_CLUSTER_ID=7
cp=$(cat build/ompi-component/component-path)
run() {  # LABEL BYTES DELAY MCA...
  local label=$1 bytes=$2 delay=$3; shift 3
  mpiexec.openmpi --allow-run-as-root $(bash scripts/cluster.sh mpirun-args 1) --mca btl self,tcp -n 2 \
    --mca mca_base_component_path "$cp" -x INMPI=1 -x ALG="$label" "$@" \
    $(bash scripts/cluster.sh binder) ./skew-ompi "$bytes" "$delay" 15 2>&1 | tail -1
}
echo "alg,bytes,delay_us,median_us"
for round in 1 2 3; do
  for bd in "4194304 3000" "4194304 0" "1048576 300" "1048576 0"; do
    set -- $bd
    run ompi:rabenseifner $1 $2 --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 6
    run ompi:recursive_doubling $1 $2 --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 3
    run gencoll:rabenseifner $1 $2 --mca coll_gencoll_priority 100 --mca coll_gencoll_allreduce_algorithm rabenseifner
    run gencoll:recursive_multiplying $1 $2 --mca coll_gencoll_priority 100 --mca coll_gencoll_allreduce_algorithm recursive_multiplying
  done
done | awk '{print $1","$3","$5+0","$7}'
