#!/bin/bash
# skew-ab.sh: gencoll's allreduce exchanges with receives posted at the start (old
# library) and with their sends (new), against MPICH's own, one rank DELAY us late.
# Run from the repository root with the cluster up
# (GENCOLL_CLUSTER_ID=7 bash scripts/cluster.sh up 2 --cpus 1), ./skew built from
# ../2026-11-27-2c-emu2x1-handshake/skew.c with $P/bin/mpicc, P the MPICH
# prefix without the progress yield (build/mpich-prefix after
# scripts/build-mpich.sh --gencoll-build build) and OLD a directory whose
# lib/ holds libgencoll-mpich.so.1 built from d4218c2 (receives posted first).
: "${P:?MPICH prefix}" "${OLD:?old library directory}"
export GENCOLL_CLUSTER_ID=7
launch() { # lib alg bytes delay
  local lp=$P/lib; [ $1 = old ] && lp=$OLD/lib:$P/lib
  $P/bin/mpiexec $(bash scripts/cluster.sh mpiexec-args 1) -n 2 -genv LD_LIBRARY_PATH $lp -genv UCX_TLS tcp,self \
  -genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM $2 -genv MPIR_CVAR_ALLREDUCE_RABENSEIFNER_KVAL 2 -genv MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL 2 \
  -genv ALG "$2" -genv INMPI 1 $(bash scripts/cluster.sh binder) ./skew $3 $4 15 2>&1 | tail -1 | awk -v l=$1 -v a=$2 -v b=$3 -v d=$4 '{print l","a","b","d","$7}'
}
echo "lib,alg,bytes,delay_us,median_us"
for round in 1 2 3; do
  for bd in "4194304 3000" "4194304 0" "1048576 300" "1048576 0" "65536 100" "65536 0"; do
    for a in rabenseifner recursive_multiplying; do launch old $a $bd; launch new $a $bd; done
    launch new reduce_scatter_allgather $bd; launch new recursive_doubling $bd
  done
done
