#!/usr/bin/env bash
# A program built against Debian's MPICH (mpicc.mpich, libmpich.so.12) runs
# unchanged on the MPICH built with the gencoll module, and really runs there:
# the loader resolves libmpich.so.12 into the module's prefix and the module's
# per-call debug line appears.
set -u
. "$(dirname "$0")/common.sh"
debian_program size_sweep
bin=$program
ldd "$bin" | grep -q "libmpich.so.12" || fail "size_sweep does not ask for libmpich.so.12"
LD_LIBRARY_PATH="$prefix/lib" ldd "$bin" | grep -q "libmpich.so.12 => $prefix/lib/" ||
  fail "libmpich.so.12 does not resolve into $prefix/lib"
LD_LIBRARY_PATH="$prefix/lib" ldd "$prefix/lib/libmpich.so.12" | grep -q "libgencoll-mpich.so.1 => $prefix/lib/" ||
  fail "the module's libmpich does not load libgencoll-mpich from its prefix"
out=$(run_module 4 -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 \
  -genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM kring -genv MPIR_CVAR_ALLREDUCE_KRING_KVAL 3 \
  -genv MPIR_CVAR_GENCOLL_DEBUG 1 "$bin" 2>&1) || fail "size_sweep exited non-zero: $out"
echo "$out" | grep -q "^size_sweep: p=4 ok" || fail "size_sweep failed: $out"
echo "$out" | grep -q "^gencoll: allreduce count=4096 bytes=16384 p=4 root=0 algorithm=kring k=3$" ||
  fail "no gencoll debug line for the 4096-element allreduce: $out"
# Every radix CVAR of the registration generated from the algorithm table
# (gencoll-mpich-registry) is a registered MPI_T variable with its description,
# and every algorithm a value of its collective's algorithm CVAR.
vars=$(run_module 1 "$prefix/bin/mpivars" 2>&1)
registered=$("$builddir/src/mpich/gencoll-mpich-registry" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["collectives"]:
    for a in c["algorithms"]:
        print(c["name"].upper(), a["name"])')
[ -n "$registered" ] || fail "gencoll-mpich-registry printed no algorithms"
while read -r coll alg; do
  ALG=$(echo "$alg" | tr a-z A-Z)
  echo "$vars" | grep -q "MPIR_CVAR_${coll}_${ALG}_KVAL *=2.*gencoll" ||
    fail "mpivars does not list MPIR_CVAR_${coll}_${ALG}_KVAL with a description"
  echo "$vars" | grep -q "MPIR_CVAR_${coll}_INTRA_ALGORITHM *=.*${alg}  *- [^(]*(gencoll)" ||
    fail "mpivars does not describe $alg as a value of MPIR_CVAR_${coll}_INTRA_ALGORITHM"
done <<< "$registered"
echo "$vars" | grep -q "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=.*kring  *- k-ring (gencoll)" ||
  fail "mpivars does not describe the gencoll values of MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"
echo "PASS: Debian-built binary runs on the module's libmpich.so.12 ($prefix/lib)"
