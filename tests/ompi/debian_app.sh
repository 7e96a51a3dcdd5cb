#!/usr/bin/env bash
# An existing application from Debian's archive, built by Debian against its
# Open MPI, run unchanged with the gencoll coll component selected (issue 16):
# the HPC Challenge suite (package hpcc: HPL, PTRANS, RandomAccess, FFT,
# STREAM, DGEMM, latency and bandwidth) on 4 ranks, under two sets of
# algorithms. Passes when hpcc's own checks pass (HPL's residuals, PTRANS,
# RandomAccess's error fraction, FFT's error, its Success flag) and the
# component's verbose lines show it served all four collectives.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
path_file="$builddir/ompi-component/component-path"
[ -f "$path_file" ] || { echo "SKIP: no Open MPI component built"; exit 77; }
command -v hpcc >/dev/null || { echo "SKIP: no hpcc (Debian package hpcc; scripts/install-deps.sh installs it)"; exit 77; }
ldd "$(command -v hpcc)" | grep -q 'libmpi\.so\.40' || { echo "SKIP: this hpcc is not built against Open MPI"; exit 77; }
path=$(cat "$path_file")
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Debian's sample input with a smaller matrix (N = 500): about 10 s here.
sed 's/^1000 \( *Ns\)/500  \1/' /usr/share/doc/hpcc/examples/_hpccinf.txt > "$tmp/hpccinf.txt" 2>/dev/null ||
  fail "no /usr/share/doc/hpcc/examples/_hpccinf.txt"
grep -q '^500 ' "$tmp/hpccinf.txt" || fail "could not set N in hpcc's sample input"
for algs in "kring knomial knomial recursive_multiplying" "rabenseifner kring rabenseifner kbruck"; do
  read -r ar bc re ag <<< "$algs"
  rm -f "$tmp/hpccoutf.txt"
  (cd "$tmp" && timeout -k 5 600 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n 4 \
     --mca mca_base_component_path "$path" --mca coll_gencoll_verbose 1 \
     --mca coll_gencoll_allreduce_algorithm "$ar" --mca coll_gencoll_bcast_algorithm "$bc" \
     --mca coll_gencoll_reduce_algorithm "$re" --mca coll_gencoll_allgather_algorithm "$ag" \
     hpcc > "$tmp/run.log" 2>&1 </dev/null) || fail "hpcc ($algs) exited non-zero: $(tail -5 "$tmp/run.log")"
  out="$tmp/hpccoutf.txt"
  [ -f "$out" ] || fail "hpcc ($algs) wrote no hpccoutf.txt"
  grep -q '^Success=1$' "$out" || fail "hpcc ($algs): Success is not 1"
  # HPL ends its summary lines with a comma, PTRANS with a full stop: each
  # must have passed tests and no failed one (either alone would not do).
  ! grep -Eq '^ *[1-9][0-9]* tests completed and failed residual checks' "$out" ||
    fail "hpcc ($algs): failed residual checks: $(grep 'failed residual' "$out")"
  for part in "HPL:," "PTRANS:\."; do
    grep -Eq "^ *[1-9][0-9]* tests completed and passed residual checks${part#*:}\$" "$out" &&
      grep -Eq "^ *0 tests completed and failed residual checks${part#*:}\$" "$out" ||
      fail "hpcc ($algs): no ${part%%:*} residual check passed"
  done
  ! grep -qw FAILED "$out" || fail "hpcc ($algs): $(grep -w FAILED "$out" | head -3)"
  grep -q '^MPIRandomAccess_ErrorsFraction=0$' "$out" || fail "hpcc ($algs): RandomAccess errors"
  served=""
  for c in allreduce bcast reduce allgather; do
    n=$(grep -c "^gencoll: $c " "$tmp/run.log")
    [ "$n" -gt 0 ] || fail "hpcc ($algs): the component served no $c"
    served="$served $c $n,"
  done
  echo "hpcc with allreduce $ar, bcast $bc, reduce $re, allgather $ag: own checks passed; served${served%,}"
done
echo "PASS: Debian's hpcc ran unchanged on the Open MPI component, its own checks passing"
