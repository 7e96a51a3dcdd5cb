#!/usr/bin/env bash
# A selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) picks gencoll
# algorithms and radices per message size; the module's debug output shows, for
# every size of a sweep, exactly the algorithm and k the file names. An entry
# without k= gets the radix CVAR's value.
set -u
. "$(dirname "$0")/common.sh"
. "$srcdir/tests/tune/choices.sh"
bin="$builddir/tests/mpich/size_sweep"
mkdir -p "$(dirname "$bin")"
debian_cc "$bin" "$srcdir/tests/mpich/size_sweep.c" || fail "cannot build size_sweep with mpicc.mpich"
generic="$prefix/../src/maint/tuning/coll/mpir/generic.json"
[ -f "$generic" ] || fail "MPICH's generic selection file not found at $generic"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# MPICH's own file for every other collective (the selection must be complete),
# with the four gencoll collectives replaced.
python3 - "$generic" > "$tmp/select.json" <<'PY'
import json, sys
sel = json.load(open(sys.argv[1]))
def algo(coll, name, k=None):
    return {"algorithm=MPIR_%s_intra_%s" % (coll, name): ({"k=%d" % k: {}} if k else {})}
def sized(coll, steps):
    tree = {}
    for bound, name, k in steps:
        tree["avg_msg_size<=%d" % bound if bound else "avg_msg_size=any"] = algo(coll, name, k)
    inter = sel["collective=" + coll.lower()]["comm_type=inter"]
    return {"comm_type=intra": tree, "comm_type=inter": inter}
sel["collective=allreduce"] = sized("Allreduce", [(64, "recursive_multiplying", 4), (4096, "knomial", None), (0, "kring", 3)])
sel["collective=allgather"] = sized("Allgather", [(256, "permuted_recursive_multiplying", 3), (0, "kring", 2)])
sel["collective=bcast"] = sized("Bcast", [(1024, "knomial", 5), (0, "recursive_multiplying", 3)])
sel["collective=reduce"] = sized("Reduce", [(0, "knomial", 3)])
json.dump(sel, sys.stdout, indent=1)
PY

genv=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmp/select.json" -genv MPIR_CVAR_GENCOLL_DEBUG 1
      -genv MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL 6)
for c in ALLREDUCE ALLGATHER BCAST REDUCE; do genv+=(-genv "MPIR_CVAR_${c}_DEVICE_COLLECTIVE" 0); done
out=$(run_module 5 "${genv[@]}" "$bin" 2>&1) || fail "size_sweep failed under the selection file: $out"
echo "$out" | grep -q "^size_sweep: p=5 ok" || fail "wrong results: $out"

check_handwritten "$out"
echo "PASS: the selection file chose the algorithm and k of every call (25 calls)"
