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
# A bcast runs on its bytes; its debug line still shows the call as made (ints).
echo "$out" | awk '/^gencoll: bcast count=/ { n++; split($3, c, "="); split($4, b, "="); if (b[2] != 4 * c[2]) bad++ }
                   END { exit !(n > 0 && bad == 0) }' ||
  fail "bcast debug lines do not show the ints of the call: $(echo "$out" | grep '^gencoll: bcast' | head -3)"
echo "PASS: the selection file chose the algorithm and k of every call (25 calls)"

# A file that picks k-ring (it needs a commutative op) for every allreduce:
# calls with a commutative op run k-ring; calls with coll_check's
# non-commutative user op go to MPICH's own choice (recursive doubling), as
# under the interposition library, and say so; every result is right.
kfile=$(mktemp)
trap 'rm -f "$kfile"' EXIT
echo '{"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {"k=2": {}}}}}}' > "$kfile"
out=$(run_module 4 -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$kfile" -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
  -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 "$builddir/tests/mpi/coll_check.mpich" -q 2>&1) ||
  fail "coll_check under a k-ring allreduce file: $(echo "$out" | grep -v '^gencoll:' | tail -n 5)"
echo "$out" | grep -q "coll_check: p=4 [0-9]* cases, 0 failures" || fail "no clean summary: $(echo "$out" | grep -v '^gencoll:' | tail -n 5)"
echo "$out" | grep -q "^gencoll: allreduce kring needs a commutative op; using MPICH's recursive_doubling$" ||
  fail "no hand-over line for the non-commutative op"
echo "$out" | grep -q "^gencoll: allreduce .* algorithm=kring k=2$" || fail "commutative allreduces did not run k-ring"
echo "PASS: k-ring allreduce hands non-commutative ops to MPICH ($(echo "$out" | grep -c "needs a commutative op") calls)"

# A file whose last condition is a yes/no one that some calls fail: those
# calls get MPICH's built-in selection, as calls of a collective the file
# does not cover (MPICH asserted at the first such call), and under the
# interposition library the MPI's own.
echo '{"collective=allreduce": {"comm_type=intra": {"is_commutative=yes": {"algorithm=MPIR_Allreduce_intra_kring": {"k=3": {}}}}}}' > "$kfile"
out=$(run_module 4 -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$kfile" -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
  -genv MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE 0 "$builddir/tests/mpi/coll_check.mpich" -q -c allreduce 2>&1) ||
  fail "coll_check under a file ending in is_commutative=yes: $(echo "$out" | grep -v '^gencoll:' | tail -n 5)"
echo "$out" | grep -q "coll_check: p=4 [0-9]* cases, 0 failures" || fail "no clean summary: $(echo "$out" | grep -v '^gencoll:' | tail -n 5)"
echo "$out" | grep -q "^gencoll: allreduce .* algorithm=kring k=3$" || fail "commutative allreduces did not run k-ring"
echo "PASS: calls the file's last yes/no condition fails got MPICH's built-in selection"

# The reduce-scatters by file, split by avg_msg_size (MPICH 4.0.2 asserted
# on it for them; the csel patch gives them the average block): small
# blocks k-nomial, large ones the permuted variant (reduce_scatter_block)
# and k-ring (reduce_scatter, whose avg_msg_size is the average block).
cat > "$kfile" <<'JSON'
{"collective=reduce_scatter_block": {"comm_type=intra": {
   "avg_msg_size<=64": {"algorithm=MPIR_Reduce_scatter_block_intra_knomial": {"k=3": {}}},
   "avg_msg_size=any": {"algorithm=MPIR_Reduce_scatter_block_intra_permuted_recursive_multiplying": {}}}},
 "collective=reduce_scatter": {"comm_type=intra": {
   "avg_msg_size<=64": {"algorithm=MPIR_Reduce_scatter_intra_knomial": {"k=4": {}}},
   "avg_msg_size=any": {"algorithm=MPIR_Reduce_scatter_intra_kring": {"k=2": {}}}}}}
JSON
out=$(run_module 5 -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$kfile" -genv MPIR_CVAR_GENCOLL_DEBUG 1 \
  -genv MPIR_CVAR_REDUCE_SCATTER_BLOCK_PERMUTED_RECURSIVE_MULTIPLYING_KVAL 5 \
  "$builddir/tests/mpi/rsb_check.mpich" -q 2>&1) ||
  fail "rsb_check under a reduce-scatter file: $(echo "$out" | grep -v '^gencoll:' | tail -n 5)"
echo "$out" | grep -q "rsb_check: p=5 [0-9]* cases, 0 failures" || fail "no clean summary: $(echo "$out" | grep -v '^gencoll:' | tail -n 5)"
for want in "reduce_scatter_block count=2 bytes=8 .*algorithm=knomial k=3" \
            "reduce_scatter_block count=1031 bytes=4124 .*algorithm=permuted_recursive_multiplying k=5" \
            "reduce_scatter count=5 bytes=20 .*algorithm=knomial k=4" \
            "reduce_scatter count=5155 bytes=20620 .*algorithm=kring k=2"; do
  echo "$out" | grep -q "^gencoll: $want\$" || fail "no call matching '$want': $(echo "$out" | grep '^gencoll:' | sort -u | head)"
done
echo "PASS: the reduce-scatters follow the file by average block size"
