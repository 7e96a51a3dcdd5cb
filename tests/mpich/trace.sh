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

# Threads (MPI_THREAD_MULTIPLE; tests/mpi/thread_check.c: 4 threads a rank,
# each on its own communicator, all collectives at once) trace into one file
# a rank: each call's lines stay together under a number of their own, its
# ops in order; a directory that cannot be written is named once a rank,
# however many threads find it so.
threads="$builddir/tests/mpich/thread_check"
[ "$threads" -nt "$srcdir/tests/mpi/thread_check.c" ] ||
  mpicc.mpich -O1 -o "$threads" "$srcdir/tests/mpi/thread_check.c" -lpthread ||
  fail "cannot build thread_check with mpicc.mpich"
mkdir -p "$tmp/threads"
out=$(run_module 3 "${genv[@]}" -genv GENCOLL_TRACE "$tmp/threads" "$threads" -q 2>&1) ||
  fail "thread_check failed traced: $out"
echo "$out" | grep -q "^thread_check: p=3 [0-9]* cases, 0 failures" || fail "thread_check traced: $out"
for r in 0 1 2; do
  f="$tmp/threads/trace.$r.csv"
  [ -s "$f" ] || fail "no trace of rank $r in $tmp/threads: $(ls "$tmp/threads")"
  bad=$(awk -F, 'FNR == 1 { next }
    $1 != prev { if ($1 in seen) { print "call " $1 " in two places"; exit }
                 seen[$1] = 1; prev = $1; want = 0 }
    $10 != want { print "call " $1 ": op " $10 " where op " want " was due"; exit }
    { want++ }' "$f")
  [ -z "$bad" ] || fail "rank $r's trace of its threads' calls: $bad"
done
calls=$(awk -F, 'FNR > 1 { print $1 }' "$tmp/threads/trace.0.csv" | sort -u | wc -l)
[ "$calls" -ge 80 ] || fail "rank 0 traced $calls calls of its 4 threads (4 x 6 rounds of 4 collectives)"
out=$(run_module 3 "${genv[@]}" -genv GENCOLL_TRACE "$tmp/no/such/dir" "$threads" -q 2>&1) ||
  fail "thread_check failed with an unwritable GENCOLL_TRACE: $out"
n=$(grep -c "GENCOLL_TRACE: cannot write" <<< "$out")
[ "$n" = 3 ] || fail "an unwritable GENCOLL_TRACE was named $n times by 3 ranks of 4 threads: $out"
echo "PASS: threads trace $calls calls on rank 0, each call's ops together and in order; an unwritable directory named once a rank"
