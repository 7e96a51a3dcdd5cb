#!/usr/bin/env bash
# The Open MPI coll component as users meet it: ompi_info lists its parameters
# with the algorithm table's values, bad values stop the job naming the
# parameter and the valid values, the verbose lines say what ran (and what was
# handed back), a program built with Debian's mpicc.openmpi runs unchanged, and
# its tags stay clear of the user's over long runs under the UCX PML.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
path_file="$builddir/ompi-component/component-path"
[ -f "$path_file" ] || { echo "SKIP: no Open MPI component built"; exit 77; }
path=$(cat "$path_file")
sim="$builddir/selection/gencoll-sim"
prog="$builddir/tests/mpi/coll_check.openmpi"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # NP, then mpiexec options and program
  local np=$1; shift
  timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n "$np" \
    --mca mca_base_component_path "$path" "$@" </dev/null
}

# 1. ompi_info: the component, and per collective the algorithms the table
#    gives it (those the MPICH module registers, as the C ABI numbers them).
OMPI_MCA_mca_base_component_path=$path ompi_info --param coll gencoll --level 9 > "$tmp/info" 2>&1 ||
  fail "ompi_info failed: $(head -5 "$tmp/info")"
grep -q 'MCA coll: gencoll (MCA v2.1.0, API v2.0.0, Component v' "$tmp/info" || fail "ompi_info does not list the component"
for coll in allgather allreduce bcast reduce reduce_scatter_block reduce_scatter; do
  want=$(for a in $("$sim" --list-algorithms "$coll"); do
           "$sim" --list-algorithms module | grep -qx "$a" && ! "$sim" --list-algorithms fixed | grep -qx "$a" && echo "$a"
         done | tr '\n' ' ')
  line=$(grep -A2 "parameter \"coll_gencoll_${coll}_algorithm\"" "$tmp/info" | grep 'Valid values') ||
    fail "no coll_gencoll_${coll}_algorithm with valid values"
  got=$(echo "$line" | grep -o '"[a-z_]*"' | tr -d '"' | grep -v '^auto$' | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "coll_gencoll_${coll}_algorithm lists '$got', the table '$want'"
  for a in $want; do
    grep -q "parameter \"coll_gencoll_${coll}_${a}_kval\"" "$tmp/info" || fail "no coll_gencoll_${coll}_${a}_kval"
  done
done
echo "ompi_info: the component and its parameters, values from the algorithm table"

# 2. Bad values stop the job, naming the parameter and the valid values.
if run 2 --mca coll_gencoll_allreduce_algorithm bogus "$prog" -q > "$tmp/bad1" 2>&1; then
  fail "an unknown algorithm did not stop the job"
fi
grep -q 'coll_gencoll_allreduce_algorithm: valid values are auto.*kring' "$tmp/bad1" ||
  fail "an unknown algorithm: no message naming the parameter and its values: $(head -20 "$tmp/bad1")"
if run 2 --mca coll_gencoll_allreduce_algorithm kring --mca coll_gencoll_allreduce_kring_kval 1 "$prog" -q \
    > "$tmp/bad2" 2>&1; then
  fail "k = 1 did not stop the job"
fi
grep -q 'coll_gencoll_allreduce_kring_kval = 1: the radix k must be an integer >= 2' "$tmp/bad2" ||
  fail "k = 1: no message naming the parameter: $(head -20 "$tmp/bad2")"
# A value Open MPI itself refuses (beyond its int) left k at 2 and ran on.
if run 2 --mca coll_gencoll_allreduce_algorithm kring --mca coll_gencoll_allreduce_kring_kval 99999999999 "$prog" -q \
    > "$tmp/bad3" 2>&1; then
  fail "k = 99999999999 did not stop the job"
fi
grep -q 'gencoll (rank [01]): coll_gencoll_allreduce_kring_kval: the radix k must be an integer >= 2' "$tmp/bad3" ||
  fail "k = 99999999999: no message naming the parameter: $(head -20 "$tmp/bad3")"
# Values Open MPI reads as another number: "4x" as 4, "4k" as 4096, "010" as 8.
for v in 4x 4k 010; do
  if run 2 --mca coll_gencoll_allreduce_algorithm kring --mca coll_gencoll_allreduce_kring_kval "$v" "$prog" -q \
      > "$tmp/bad4" 2>&1; then
    fail "k = $v did not stop the job"
  fi
  grep -q "coll_gencoll_allreduce_kring_kval = \"$v\": the radix k must be an integer >= 2" "$tmp/bad4" ||
    fail "k = $v: no message naming the parameter and its text: $(head -20 "$tmp/bad4")"
done
# The same from a parameter file, which each rank reads itself: the message
# names the file's line; a plain value there runs, and the environment's
# value, which Open MPI prefers, is the one judged.
printf '# gencoll test\ncoll_gencoll_allreduce_algorithm = kring\ncoll_gencoll_allreduce_kring_kval = 4k\n' > "$tmp/k4k.conf"
printf 'coll_gencoll_allreduce_algorithm = kring\ncoll_gencoll_allreduce_kring_kval = 4\n' > "$tmp/k4.conf"
if OMPI_MCA_mca_base_param_files=$tmp/k4k.conf run 2 "$prog" -q > "$tmp/bad5" 2>&1; then
  fail "k = 4k in a parameter file did not stop the job"
fi
grep -q "coll_gencoll_allreduce_kring_kval = \"4k\" ($tmp/k4k.conf, line 3): the radix k must be an integer >= 2" "$tmp/bad5" ||
  fail "k = 4k in a parameter file: no message naming the file and line: $(head -20 "$tmp/bad5")"
OMPI_MCA_mca_base_param_files=$tmp/k4.conf run 5 --mca coll_gencoll_verbose 1 "$prog" -q > "$tmp/file4" 2>&1 ||
  fail "k = 4 in a parameter file: $(tail -10 "$tmp/file4")"
grep -q '^gencoll: allreduce .* p=5 root=0 algorithm=kring k=4$' "$tmp/file4" ||
  fail "k = 4 in a parameter file did not run k-ring k = 4: $(grep -m3 '^gencoll: allreduce' "$tmp/file4")"
OMPI_MCA_mca_base_param_files=$tmp/k4k.conf run 5 --mca coll_gencoll_allreduce_kring_kval 3 --mca coll_gencoll_verbose 1 \
  "$prog" -q > "$tmp/file3" 2>&1 || fail "k = 3 over a file's 4k: $(tail -10 "$tmp/file3")"
grep -q '^gencoll: allreduce .* p=5 root=0 algorithm=kring k=3$' "$tmp/file3" ||
  fail "k = 3 given over a file's 4k did not run k-ring k = 3: $(grep -m3 '^gencoll: allreduce' "$tmp/file3")"
echo "bad values: the job stops with the parameter and the valid values named"

# 3. Verbose lines: what gencoll served with which k, and the non-commutative
#    calls k-ring hands back to Open MPI's own allreduce.
run 3 --mca coll_gencoll_allreduce_algorithm kring --mca coll_gencoll_allreduce_kring_kval 3 \
  --mca coll_gencoll_verbose 1 "$prog" -q > "$tmp/v" 2>&1 || fail "verbose run failed: $(tail -20 "$tmp/v")"
grep -q '^coll_check: p=3 [0-9]* cases, 0 failures$' "$tmp/v" || fail "verbose run: $(tail -5 "$tmp/v")"
grep -q '^gencoll: allreduce count=1001 bytes=[0-9]* p=3 root=0 algorithm=kring k=3$' "$tmp/v" ||
  fail "no verbose line for a served allreduce"
grep -q '^gencoll: allreduce kring: needs a commutative op; Open MPI.s own algorithm runs$' "$tmp/v" ||
  fail "no verbose line for the hand-back of a non-commutative op"
if grep '^gencoll: ' "$tmp/v" | grep -v 'allreduce' | grep -q .; then
  fail "gencoll served a collective no parameter selected: $(grep '^gencoll: ' "$tmp/v" | grep -v allreduce | head -3)"
fi
echo "verbose: served calls and hand-backs reported, nothing else served"

# 4. Communicators created, duplicated, split and freed under the component,
#    some still alive at MPI_Finalize; a program built with mpicc.openmpi.
life="$builddir/tests/ompi/comm_life"
mkdir -p "$(dirname "$life")"
[ "$life" -nt "$srcdir/tests/ompi/comm_life.c" ] || mpicc.openmpi -O1 -o "$life" "$srcdir/tests/ompi/comm_life.c" ||
  fail "cannot build comm_life with mpicc.openmpi"
for np in 1 2 3 5; do
  run "$np" --mca coll_gencoll_allreduce_algorithm kring --mca coll_gencoll_allgather_algorithm recursive_multiplying \
    --mca coll_gencoll_bcast_algorithm knomial --mca coll_gencoll_reduce_algorithm knomial \
    --mca coll_gencoll_verbose 1 "$life" > "$tmp/life" 2>&1 || fail "comm_life p=$np: $(tail -10 "$tmp/life")"
  grep -q "^comm_life: p=$np [0-9]* cases, 0 failures\$" "$tmp/life" || fail "comm_life p=$np: $(tail -5 "$tmp/life")"
  [ "$np" = 1 ] || grep -q '^gencoll: allgather ' "$tmp/life" || fail "comm_life p=$np: gencoll served nothing"
done
echo "communicators: dup, split, split_type, create, free and alive at MPI_Finalize"

# 5. More messages finishing in one wait than the core takes at once: the
#    component keeps the rest (Open MPI has freed them) for the next wait.
wide="$builddir/tests/ompi/wide"
[ "$wide" -nt "$srcdir/tests/ompi/wide.c" ] || mpicc.openmpi -O1 -o "$wide" "$srcdir/tests/ompi/wide.c" ||
  fail "cannot build wide with mpicc.openmpi"
run 70 --mca coll_gencoll_allreduce_algorithm knomial --mca coll_gencoll_allreduce_knomial_kval 70 \
  --mca coll_gencoll_reduce_algorithm knomial --mca coll_gencoll_reduce_knomial_kval 70 "$wide" > "$tmp/wide" 2>&1 ||
  fail "wide p=70: $(tail -10 "$tmp/wide")"
grep -q '^wide: p=70 40 cases, 0 failures$' "$tmp/wide" || fail "wide p=70: $(tail -5 "$tmp/wide")"
echo "wide: 69 messages into one rank at once, k-nomial allreduce and reduce at p = 70"

# 6. Parameters changed through MPI_T between two calls of one shape on one
#    communicator take effect at the next call (the kept last call's key).
sw="$builddir/tests/ompi/mpit_switch"
[ "$sw" -nt "$srcdir/tests/ompi/mpit_switch.c" ] || mpicc.openmpi -O1 -o "$sw" "$srcdir/tests/ompi/mpit_switch.c" ||
  fail "cannot build mpit_switch with mpicc.openmpi"
run 4 --mca coll_gencoll_allreduce_algorithm kring --mca coll_gencoll_allreduce_kring_kval 2 \
  --mca coll_gencoll_verbose 1 "$sw" > "$tmp/sw" 2>&1 || fail "mpit_switch: $(tail -10 "$tmp/sw")"
grep -q '^mpit_switch: 3 calls, 0 failures$' "$tmp/sw" || fail "mpit_switch: $(tail -5 "$tmp/sw")"
got=$(grep '^gencoll: allreduce count=8 ' "$tmp/sw" | sed 's/.*algorithm=//' | tr '\n' ' ')
[ "$got" = "kring k=2 recursive_multiplying k=2 kring k=3 " ] ||
  fail "mpit_switch: the calls ran '$got', not 'kring k=2 recursive_multiplying k=2 kring k=3'"
echo "MPI_T: a parameter changed between two calls of one shape applies to the next"

# 7. Tags over a long run under the UCX PML (24-bit tags, where UCX is
#    usable here): a wildcard receive stays untouched and every result right
#    across the point where the component's reservations once crossed into
#    the user's tags (some 116,000 calls at p = 2).
tw="$builddir/tests/ompi/tag_wrap"
[ "$tw" -nt "$srcdir/tests/ompi/tag_wrap.c" ] || mpicc.openmpi -O1 -o "$tw" "$srcdir/tests/ompi/tag_wrap.c" ||
  fail "cannot build tag_wrap with mpicc.openmpi"
ucx=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
if timeout -k 5 60 mpiexec.openmpi --oversubscribe --allow-run-as-root -n 2 "${ucx[@]}" "$tw" 1 > "$tmp/tw0" 2>&1; then
  timeout -k 5 120 mpiexec.openmpi --oversubscribe --allow-run-as-root -n 2 "${ucx[@]}" \
    --mca mca_base_component_path "$path" --mca coll_gencoll_allreduce_algorithm recursive_multiplying \
    --mca coll_gencoll_allreduce_recursive_multiplying_kval 2 --mca coll_gencoll_bcast_algorithm knomial \
    --mca coll_gencoll_bcast_knomial_kval 2 "$tw" 130000 > "$tmp/tw" 2>&1 ||
    fail "tag_wrap under UCX: exit $? (a hang is a collective's message taken by the wildcard): $(tail -5 "$tmp/tw")"
  grep -q '^tag_wrap: p=2 130000 calls, 0 wrong, wildcard untouched$' "$tmp/tw" || fail "tag_wrap: $(tail -5 "$tmp/tw")"
  echo "UCX tags: 130,000 calls past the 24-bit tag space's edge, the wildcard receive untouched"
else
  echo "UCX tags: not checked (Open MPI's UCX PML does not start here: $(tail -1 "$tmp/tw0"))"
fi
