#!/usr/bin/env bash
# A selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) picks gencoll
# algorithms and radices per message size; the module's debug output shows, for
# every size of a sweep, exactly the algorithm and k the file names. An entry
# without k= gets the radix CVAR's value.
set -u
. "$(dirname "$0")/common.sh"
. "$srcdir/tests/tune/choices.sh"
debian_program size_sweep
bin=$program
# The collectives the file leaves out keep MPICH's built-in selection.
file="$srcdir/tests/data/select-handwritten.json"

genv=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$file" -genv MPIR_CVAR_GENCOLL_DEBUG 1
      -genv MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL 6)
for c in ALLREDUCE ALLGATHER BCAST REDUCE; do genv+=(-genv "MPIR_CVAR_${c}_DEVICE_COLLECTIVE" 0); done
out=$(run_module 5 "${genv[@]}" "$bin" 2>&1) || fail "size_sweep failed under the selection file: $out"
echo "$out" | grep -q "^size_sweep: p=5 ok" || fail "wrong results: $out"

check_handwritten "$out"
echo "PASS: the selection file chose the algorithm and k of every call (25 calls)"
