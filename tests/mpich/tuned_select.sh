#!/usr/bin/env bash
# The tuner's selection file drives the MPICH module: gencoll-tune writes a file
# for a small synthetic machine (4 ranks), a size sweep runs under it, and for
# every call the module's debug line names the algorithm and k the file names.
set -u
. "$(dirname "$0")/common.sh"
. "$srcdir/tests/tune/choices.sh"
debian_program size_sweep
bin=$program
generic="$prefix/../src/maint/tuning/coll/mpir/generic.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$builddir/selection/gencoll-tune" --profile "$srcdir/selection/profiles/small-synthetic.json" --comm-sizes 4 \
  --max-size 256K --base "$generic" --no-plot --out "$tmp" --name tuned >/dev/null || fail "gencoll-tune failed"

genv=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmp/tuned.json" -genv MPIR_CVAR_GENCOLL_DEBUG 1)
for c in ALLREDUCE ALLGATHER BCAST REDUCE; do genv+=(-genv "MPIR_CVAR_${c}_DEVICE_COLLECTIVE" 0); done
out=$(run_module 4 "${genv[@]}" "$bin" 2>&1) || fail "size_sweep failed under the tuned file: $out"
echo "$out" | grep -q "^size_sweep: p=4 ok" || fail "wrong results: $out"
check_tuned "$tmp/tuned.json" 4 "$out"

# A shipped file (no --base: the collectives it does not tune use MPICH's
# nonblocking-based algorithms) covers the collectives gencoll does not tune.
debian_program other_colls
others=$program
genv=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$srcdir/json-configs/small-synthetic.json")
for c in ALLREDUCE BARRIER SCAN GATHER; do genv+=(-genv "MPIR_CVAR_${c}_DEVICE_COLLECTIVE" 0); done
for np in 4 5; do
  out=$(run_module $np "${genv[@]}" "$others" 2>&1) || fail "other_colls failed under json-configs/small-synthetic.json: $out"
  echo "$out" | grep -q "^other_colls: p=$np ok" || fail "wrong results under json-configs/small-synthetic.json: $out"
  out=$(run_module $np -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$srcdir/json-configs/small-synthetic.json" "$others" 2>&1) ||
    fail "other_colls failed under json-configs/small-synthetic.json with device collectives: $out"
done
echo "PASS: the module ran the tuner's choice for all 25 calls; a shipped file covers every collective"
