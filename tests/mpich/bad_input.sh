#!/usr/bin/env bash
# Bad settings stop MPI_Init with a message naming the variable, or the file and
# key, that is wrong (MPICH's conventions: an error stack ending in the reason),
# and so do settings that differ between ranks.
set -u
. "$(dirname "$0")/common.sh"
debian_program size_sweep
bin=$program
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failures=0
# judge DESCRIPTION PATTERN RC OUTPUT: a run that must have failed with a
# message matching PATTERN.
judge() {
  local what=$1 pattern=$2 rc=$3 out=$4
  if [ "$rc" -eq 0 ]; then
    echo "FAIL: $what: MPI_Init accepted it"; failures=$((failures + 1))
  elif ! echo "$out" | grep -qE -- "$pattern"; then
    echo "FAIL: $what: no message matching /$pattern/ in:"; echo "$out" | tail -5 | sed 's/^/    | /'
    failures=$((failures + 1))
  else
    echo "ok: $what: $(echo "$out" | grep -oE -- "$pattern" | head -n1)"
  fi
}
# judge_run DESCRIPTION PATTERN COMMAND...: runs COMMAND and judges it. A
# launch that printed nothing at all (seen under a fully loaded machine, in
# single and MPMD launches, never reproduced alone) is tried once more; a
# wrong message is not.
judge_run() {
  local what=$1 pattern=$2 out rc; shift 2
  out=$("$@" 2>&1 </dev/null); rc=$?
  [ $rc -ne 0 ] && [ -z "$out" ] && { out=$("$@" 2>&1 </dev/null); rc=$?; }
  judge "$what" "$pattern" "$rc" "$out"
}
# expect_failure DESCRIPTION PATTERN VAR=VALUE...
expect_failure() {
  local what=$1 pattern=$2; shift 2
  local -a genv=()
  local e
  for e in "$@"; do genv+=(-genv "${e%%=*}" "${e#*=}"); done
  judge_run "$what" "$pattern" run_module 2 "${genv[@]}" "$bin"
}

expect_failure "unknown algorithm value" "Invalid MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value \(knomail\)" \
  MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=knomail
expect_failure "radix below 2" "Invalid MPIR_CVAR_BCAST_KRING_KVAL value \(1: the radix k must be an integer >= 2 and <= 1073741824\)" \
  MPIR_CVAR_BCAST_KRING_KVAL=1
expect_failure "radix above 2^30" "Invalid MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL value \(1073741825: the radix k must be an integer >= 2 and <= 1073741824\)" \
  MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL=1073741825
expect_failure "negative radix" "Invalid MPIR_CVAR_ALLGATHER_RECURSIVE_MULTIPLYING_KVAL value \(-3: " \
  MPIR_CVAR_ALLGATHER_RECURSIVE_MULTIPLYING_KVAL=-3
expect_failure "radix beyond an int (MPICH's reader wrapped 4294967299 to 3)" \
  "Invalid MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL value \(4294967299: the radix k must be an integer >= 2" \
  MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL=4294967299
expect_failure "non-numeric radix" "Unable to parse environment variable \(MPIR_CVAR_REDUCE_KNOMIAL_KVAL\)" \
  MPIR_CVAR_REDUCE_KNOMIAL_KVAL=four

# bad_file DESCRIPTION NAME JSON PATTERN: a selection file NAME.json holding
# JSON stops MPI_Init with a message matching PATTERN.
bad_file() {
  printf '%s' "$3" > "$tmp/$2.json"
  expect_failure "selection file: $1" "$4" MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/$2.json"
}
bad_file "unknown algorithm" unknown \
  '{"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_knomail": {}}}}}' \
  "collective selection file $tmp/unknown.json value \(key \"algorithm=MPIR_Allreduce_intra_knomail\" names no algorithm"
bad_file "malformed k" badk \
  '{"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {"k=two": {}}}}}}' \
  "collective selection file $tmp/badk.json value \(key \"k=two\": the radix k must be an integer >= 2 and <= 1073741824\)"
bad_file "k below 2" smallk \
  '{"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {"k=1": {}}}}}}' \
  "key \"k=1\": the radix k must be an integer >= 2"
bad_file "k above 2^30" bigk \
  '{"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {"k=1073741825": {}}}}}}' \
  "key \"k=1073741825\": the radix k must be an integer >= 2 and <= 1073741824"
bad_file "unknown condition key" badkey \
  '{"collective=allreduce": {"comm_type=intra": {"avg_msg_sise<=8": {"algorithm=MPIR_Allreduce_intra_knomial": {}}}}}' \
  "unknown key \"avg_msg_sise<=8\""
bad_file "not JSON" notjson \
  '{"collective=allreduce": {' \
  "collective selection file $tmp/notjson.json value \(not valid JSON"
expect_failure "selection file: missing" "collective selection file $tmp/none.json value \(cannot be read: No such file" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/none.json"
# What crashed MPI_Init (json-c's foreach over a non-object), asserted without
# naming a key (MPICH's validate_tree), or asserted at the first call.
bad_file "a top level that is an array" array \
  '[1, 2]' \
  "the top level is a JSON array: expected an object"
bad_file "a top level that is null" null \
  'null' \
  "the top level is null"
bad_file "a condition with nothing under it" empty \
  '{"collective=allreduce": {"avg_msg_size<=64": {}, "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}}}' \
  "key \"avg_msg_size<=64\": nothing under it"
bad_file "a bounded condition last" last \
  '{"collective=allreduce": {"comm_size<=8": {"algorithm=MPIR_Allreduce_intra_kring": {}}}}' \
  "key \"comm_size<=8\" is the last of its siblings"
bad_file "a sibling after =any" after \
  '{"collective=allreduce": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}, "count=any": {"algorithm=MPIR_Allreduce_intra_knomial": {}}}}' \
  "key \"count=any\" follows \"avg_msg_size=any\""
bad_file "another collective's algorithm" other \
  '{"collective=allreduce": {"algorithm=MPIR_Bcast_intra_knomial": {}}}' \
  "key \"algorithm=MPIR_Bcast_intra_knomial\" under \"collective=allreduce\": an algorithm of another collective"
bad_file "another collective's algorithm as a leaf's last (the one MPICH runs)" otherlast \
  '{"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_kring": {}, "algorithm=MPIR_Bcast_intra_binomial": {}}}' \
  "key \"algorithm=MPIR_Bcast_intra_binomial\" under \"collective=allreduce\": an algorithm of another collective"
bad_file "a communicator condition at the top level (beside MPICH's merged collectives: asserted)" topcomm \
  '{"comm_size<=4": {"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_kring": {}}}, "comm_size=any": {"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_knomial": {}}}}' \
  "key \"comm_size<=4\" at the top level: only collective= keys may stand there"
bad_file "unknown collective" unknowncoll \
  '{"collective=allreduse": {"algorithm=MPIR_Allreduce_intra_kring": {}}}' \
  "unknown collective in key \"collective=allreduse\""
bad_file "a bound with a unit (atoi read 64k as 64)" unit \
  '{"collective=allreduce": {"avg_msg_size<=64k": {"algorithm=MPIR_Allreduce_intra_kring": {}}, "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_knomial": {}}}}' \
  "key \"avg_msg_size<=64k\": expected a non-negative integer after \"avg_msg_size<=\""
bad_file "a bound beyond an int" bigbound \
  '{"collective=bcast": {"comm_size<=4294967297": {"algorithm=MPIR_Bcast_intra_kring": {}}, "comm_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {}}}}' \
  "key \"comm_size<=4294967297\": expected a non-negative integer after \"comm_size<=\""
bad_file "a key repeated in one object (json-c kept one value, silently)" twice \
  '{"collective=allreduce": {"avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_kring": {}}, "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_knomial": {}}, "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}}}' \
  "key \"avg_msg_size<=64\" appears twice in one object"
bad_file "keys written differently (an escape) that json-c reads as one" escaped \
  '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {"k=4": {}, "k\u003d4": {}}}}' \
  "key \"k=4\" appears twice in one object"
bad_file "keys that differ only in spaces (MPICH compares them without)" spaces \
  '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {"k=4": {}, "k = 4": {}}}}' \
  "key \"k = 4\" appears twice in one object"
bad_file "two objects (json-c read the first and dropped the second, silently)" two \
  '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {}}} {"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_kring": {}}}' \
  "text after the top-level object, at line 1, column 66 \\(\"\\{\"collective=allredu\"\\): a file holds one JSON object"
mkfifo "$tmp/fifo.json"
expect_failure "selection file: a FIFO nobody writes (it held MPI_Init)" "fifo.json value \(is not a regular file" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/fifo.json"

# expect_split DESCRIPTION PATTERN VAR=VALUE0 VAR=VALUE1: rank 0 with the
# first setting, rank 1 with the second; MPI_Init must stop, naming it.
expect_split() {
  local what=$1 pattern=$2 a=$3 b=$4
  judge_run "$what" "$pattern" timeout -k 5 120 "$mpiexec" -genv LD_LIBRARY_PATH "$prefix/lib" \
    -n 1 -env "${a%%=*}" "${a#*=}" "$bin" : -n 1 -env "${b%%=*}" "${b#*=}" "$bin"
}
# Ranks that would run mismatched schedules (and hang) stop at MPI_Init.
expect_split "a radix that differs between ranks" \
  "Invalid MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL value \([35] on this rank; the ranks of MPI_COMM_WORLD hold values from 3 to 5" \
  MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL=3 MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL=5
expect_split "an algorithm that differs between ranks" \
  "Invalid MPIR_CVAR_BCAST_INTRA_ALGORITHM value \((kring|binomial) on this rank; the ranks of MPI_COMM_WORLD hold different values" \
  MPIR_CVAR_BCAST_INTRA_ALGORITHM=kring MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomial
printf '%s' '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {}}}' > "$tmp/one.json"
printf '%s' '{"collective=bcast": {"algorithm=MPIR_Bcast_intra_kring": {}}}' > "$tmp/other.json"
expect_split "selection files whose contents differ between ranks" \
  "Invalid MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE value \($tmp/(one|other).json: the ranks of MPI_COMM_WORLD read selection files of different contents" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/one.json" MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/other.json"
# Equal contents under different paths (a copy on each node) agree.
cp "$tmp/one.json" "$tmp/copy.json"
out=$(timeout -k 5 120 "$mpiexec" -genv LD_LIBRARY_PATH "$prefix/lib" \
  -n 1 -env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmp/one.json" "$bin" : \
  -n 1 -env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmp/copy.json" "$bin" 2>&1 </dev/null) ||
  { echo "FAIL: equal selection files under two paths were refused: $(echo "$out" | tail -3)"; failures=$((failures + 1)); }

[ $failures -eq 0 ] || exit 1
echo "PASS: every bad setting stopped MPI_Init with a message naming it"
