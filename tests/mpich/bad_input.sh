#!/usr/bin/env bash
# Bad settings stop MPI_Init with a message naming the variable, or the file and
# key, that is wrong (MPICH's conventions: an error stack ending in the reason).
set -u
. "$(dirname "$0")/common.sh"
debian_program size_sweep
bin=$program
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failures=0
# expect_failure DESCRIPTION PATTERN VAR=VALUE...
expect_failure() {
  local what=$1 pattern=$2; shift 2
  local -a genv=()
  local e
  for e in "$@"; do genv+=(-genv "${e%%=*}" "${e#*=}"); done
  local out rc
  out=$(run_module 2 "${genv[@]}" "$bin" 2>&1); rc=$?
  # A launch that printed nothing at all (seen once under a fully loaded
  # machine, never reproduced) is tried again; a wrong message is not.
  [ $rc -ne 0 ] && [ -z "$out" ] && { out=$(run_module 2 "${genv[@]}" "$bin" 2>&1); rc=$?; }
  if [ $rc -eq 0 ]; then
    echo "FAIL: $what: MPI_Init accepted it"; failures=$((failures + 1))
  elif ! echo "$out" | grep -qE -- "$pattern"; then
    echo "FAIL: $what: no message matching /$pattern/ in:"; echo "$out" | tail -5 | sed 's/^/    | /'
    failures=$((failures + 1))
  else
    echo "ok: $what: $(echo "$out" | grep -oE -- "$pattern" | head -n1)"
  fi
}

expect_failure "unknown algorithm value" "Invalid MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value \(knomail\)" \
  MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=knomail
expect_failure "radix below 2" "Invalid MPIR_CVAR_BCAST_KRING_KVAL value \(1: the radix k must be an integer >= 2 and <= 1073741824\)" \
  MPIR_CVAR_BCAST_KRING_KVAL=1
expect_failure "radix above 2^30" "Invalid MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL value \(1073741825: the radix k must be an integer >= 2 and <= 1073741824\)" \
  MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL=1073741825
expect_failure "negative radix" "Invalid MPIR_CVAR_ALLGATHER_RECURSIVE_MULTIPLYING_KVAL value \(-3: " \
  MPIR_CVAR_ALLGATHER_RECURSIVE_MULTIPLYING_KVAL=-3
expect_failure "non-numeric radix" "Unable to parse environment variable \(MPIR_CVAR_REDUCE_KNOMIAL_KVAL\)" \
  MPIR_CVAR_REDUCE_KNOMIAL_KVAL=four

json() { printf '%s' "$2" > "$tmp/$1.json"; echo "$tmp/$1.json"; }
f=$(json unknown '{"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_knomail": {}}}}}')
expect_failure "selection file: unknown algorithm" \
  "collective selection file $f value \(key \"algorithm=MPIR_Allreduce_intra_knomail\" names no algorithm" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f"
f=$(json badk '{"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {"k=two": {}}}}}}')
expect_failure "selection file: malformed k" \
  "collective selection file $f value \(key \"k=two\": the radix k must be an integer >= 2 and <= 1073741824\)" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f"
f=$(json smallk '{"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {"k=1": {}}}}}}')
expect_failure "selection file: k below 2" "key \"k=1\": the radix k must be an integer >= 2" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f"
f=$(json bigk '{"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {"k=1073741825": {}}}}}}')
expect_failure "selection file: k above 2^30" "key \"k=1073741825\": the radix k must be an integer >= 2 and <= 1073741824" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f"
f=$(json badkey '{"collective=allreduce": {"comm_type=intra": {"avg_msg_sise<=8": {"algorithm=MPIR_Allreduce_intra_knomial": {}}}}}')
expect_failure "selection file: unknown condition key" "unknown key \"avg_msg_sise<=8\"" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f"
f=$(json notjson '{"collective=allreduce": {')
expect_failure "selection file: not JSON" "collective selection file $f value \(not valid JSON" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$f"
expect_failure "selection file: missing" "collective selection file $tmp/none.json value \(cannot be read: No such file" \
  MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/none.json"

[ $failures -eq 0 ] || exit 1
echo "PASS: every bad setting stopped MPI_Init with a message naming it"
