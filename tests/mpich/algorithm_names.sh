#!/usr/bin/env bash
# The algorithm names a selection file may give: the interposition library
# and the Open MPI component (src/runtime/mpich_algorithms.cpp, MPICH's own)
# with gencoll's registered ones must be exactly the names the built MPICH
# module knows (its csel_container.c, after register.py), so that a name one
# binding refuses no other binding runs.
set -u
. "$(dirname "$0")/common.sh"
container="$prefix/../src/src/mpi/coll/src/csel_container.c"
[ -f "$container" ] || fail "no $container: the module's source tree beside its prefix"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

grep -o '"algorithm=MPIR_[A-Za-z0-9_]*"' "$container" | sed 's/^"algorithm=//; s/"$//' | LC_ALL=C sort -u > "$work/module"
grep -o '"MPIR_[A-Za-z0-9_]*"' "$srcdir/src/runtime/mpich_algorithms.cpp" | tr -d '"' > "$work/mpich"
LC_ALL=C sort -c "$work/mpich" 2>/dev/null || fail "src/runtime/mpich_algorithms.cpp: the list is not sorted (it is binary-searched)"
"$builddir/src/mpich/gencoll-mpich-registry" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["collectives"]:
    for a in c["algorithms"]:
        print("MPIR_%s_intra_%s" % (c["name"][0].upper() + c["name"][1:], a["name"]))' > "$work/gencoll" ||
  fail "gencoll-mpich-registry failed"
LC_ALL=C sort -u "$work/mpich" "$work/gencoll" > "$work/bindings"
n=$(wc -l < "$work/module")
[ "$n" -ge 150 ] || fail "only $n algorithm names found in $container"
if ! diff "$work/module" "$work/bindings" > "$work/diff"; then
  echo "module (<) and the library's list with gencoll's names (>) differ:"
  cat "$work/diff"
  fail "src/runtime/mpich_algorithms.cpp does not match the module's names"
fi
echo "PASS: $n algorithm names, the same in the module and the other bindings"
