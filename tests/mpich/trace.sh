#!/usr/bin/env bash
# GENCOLL_TRACE: an unchanged program on the module writes, per rank, every op
# of every program it ran with its start and finish; the ops are those of the
# schedule gencoll-sim replays for the same call (benchmarks/trace_compare.py
# sets them side by side and says so when they differ), each started before
# it finished. A directory that cannot be written is named, and the program
# still runs right.
set -u
. "$(dirname "$0")/common.sh"
debian_program size_sweep
bin=$program
sim="$builddir/selection/gencoll-sim"
[ -x "$sim" ] || fail "no $sim (build it first)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One algorithm per collective, radices that leave uneven groups; the
# broadcast's root is the last rank (size_sweep's).
genv=(-genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM kring -genv MPIR_CVAR_ALLREDUCE_KRING_KVAL 3
      -genv MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM recursive_multiplying
      -genv MPIR_CVAR_ALLGATHER_RECURSIVE_MULTIPLYING_KVAL 3
      -genv MPIR_CVAR_BCAST_INTRA_ALGORITHM knomial -genv MPIR_CVAR_BCAST_KNOMIAL_KVAL 3
      -genv MPIR_CVAR_REDUCE_INTRA_ALGORITHM knomial -genv MPIR_CVAR_REDUCE_KNOMIAL_KVAL 3)
for c in ALLREDUCE ALLGATHER BCAST REDUCE; do genv+=(-genv "MPIR_CVAR_${c}_DEVICE_COLLECTIVE" 0); done

out=$(run_module 5 "${genv[@]}" -genv GENCOLL_TRACE "$tmp" "$bin" 2>&1) || fail "size_sweep failed traced: $out"
echo "$out" | grep -q "^size_sweep: p=5 ok" || fail "size_sweep traced: $out"
for r in 0 1 2 3 4; do
  [ -s "$tmp/trace.$r.csv" ] || fail "no trace of rank $r in $tmp: $(ls "$tmp")"
done
# Every op ran: a start and a finish at or after it; the four collectives.
bad=$(awk -F, 'FNR > 1 && !($14 >= 0 && $15 >= $14) { print FILENAME ": " $0 }' "$tmp"/trace.*.csv | head -n 3)
[ -z "$bad" ] || fail "ops without a start, or finished before they started: $bad"
colls=$(awk -F, 'FNR > 1 { print $2 ":" $3 ":" $4 }' "$tmp"/trace.*.csv | sort -u | tr '\n' ' ')
[ "$colls" = "allgather:recursive_multiplying:3 allreduce:kring:3 bcast:knomial:3 reduce:knomial:3 " ] ||
  fail "the trace's collectives: $colls"
awk -F, 'FNR > 1 && $2 == "bcast" && $8 != 4 { exit 1 }' "$tmp"/trace.*.csv || fail "bcast traced with a root other than 4"

cmp=$(python3 "$srcdir/benchmarks/trace_compare.py" "$tmp" --profile "$srcdir/selection/profiles/cpu-cluster.json" \
  --sim "$sim" --top 1 2>&1) || fail "trace_compare.py: $cmp"
n=$(echo "$cmp" | grep -c " on 5 ranks, 1 calls used: measured [0-9.]* us, model [0-9.]* us")
# size_sweep: 6 sizes x 4 collectives, the 1-element allgather and bcast
# included (the reduce of one element to 5 ranks too).
[ "$n" = 24 ] || fail "trace_compare.py set $n of 24 calls beside the model: $cmp"
if echo "$cmp" | grep -q "not the simulated schedule"; then fail "trace and simulated schedule differ: $cmp"; fi
echo "PASS: GENCOLL_TRACE: the ops of all 24 calls on 5 ranks, those gencoll-sim replays, each started before it finished"

out=$(run_module 3 "${genv[@]}" -genv GENCOLL_TRACE "$tmp/no/such/dir" "$bin" 2>&1) ||
  fail "size_sweep failed with an unwritable GENCOLL_TRACE: $out"
echo "$out" | grep -q "^size_sweep: p=3 ok" || fail "size_sweep with an unwritable GENCOLL_TRACE: $out"
echo "$out" | grep -q "GENCOLL_TRACE: cannot write $tmp/no/such/dir/trace.0.csv" ||
  fail "an unwritable GENCOLL_TRACE was not named: $out"
echo "PASS: an unwritable GENCOLL_TRACE is named once per rank and the calls still run"
