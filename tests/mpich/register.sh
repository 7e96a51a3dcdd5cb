#!/usr/bin/env bash
# src/mpich/register.py, which generates the MPICH module's registration from
# the algorithm table, on a miniature MPICH tree (the lines it anchors on and
# nothing else), so it runs without an MPICH build: every algorithm of the
# registry lands in every file, once; bad registries and trees it does not
# know stop it with a message naming what is wrong. (tests/mpich/abi.sh checks
# the real build: every generated CVAR is registered in the built MPICH.)
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "FAIL: $*"; exit 1; }
registry_tool="$builddir/src/mpich/gencoll-mpich-registry"
[ -x "$registry_tool" ] || fail "no $registry_tool"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$registry_tool" > "$work/registry.json" || fail "gencoll-mpich-registry failed"

make_tree() {
  local t=$1
  mkdir -p "$t/src/mpi/coll/include" "$t/src/mpi/coll/src" "$t/test/mpi/maint"
  : > "$t/src/mpi/coll/coll_algorithms.txt"
  : > "$t/src/mpi/coll/cvars.txt"
  printf 'typedef enum {\n' > "$t/src/mpi/coll/include/csel_container.h"
  for c in allgather allreduce bcast reduce reduce_scatter_block reduce_scatter; do
    C="$(echo "${c:0:1}" | tr a-z A-Z)${c:1}"
    printf '%s-intra:\n    native\n' "$c" >> "$t/src/mpi/coll/coll_algorithms.txt"
    printf '    - name        : MPIR_CVAR_%s_INTRA_ALGORITHM\n      description : |-\n        native - Force native\n\n' \
      "$(echo "$c" | tr a-z A-Z)" >> "$t/src/mpi/coll/cvars.txt"
    printf '    MPII_CSEL_CONTAINER_TYPE__ALGORITHM__MPIR_%s_allcomm_nb,\n' "$C" >> "$t/src/mpi/coll/include/csel_container.h"
  done
  printf 'end-intra:\n' >> "$t/src/mpi/coll/coll_algorithms.txt"
  printf '    - name        : MPIR_CVAR_LAST\n' >> "$t/src/mpi/coll/cvars.txt"
  printf '} e;\ntypedef struct {\n    union {\n    } u;\n} s;\n' >> "$t/src/mpi/coll/include/csel_container.h"
  printf '#include "csel_container.h"\n    switch (cnt->id) {\n    }\n        else if (!strcmp(ckey, "algorithm=MPIR_Scatterv_allcomm_nb"))\n            cnt->id = 0;\n        else {\n' \
    > "$t/src/mpi/coll/src/csel_container.c"
  printf 'tests:\n    allgather:\n        intra-blocking:\nalgorithms:\n' > "$t/test/mpi/maint/coll_cvars.txt"
  for c in allgather allreduce bcast reduce reduce_scatter_block reduce_scatter; do printf '    %s:\n        intra-blocking:\n            native\n' "$c"; done \
    >> "$t/test/mpi/maint/coll_cvars.txt"
}

tree="$work/tree"
make_tree "$tree"
python3 "$srcdir/src/mpich/register.py" --registry "$work/registry.json" "$tree" > "$work/out" 2>&1 ||
  fail "register.py failed on the miniature tree: $(cat "$work/out")"
pairs=$(python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["collectives"]:
    for a in c["algorithms"]:
        print(c["name"], a["name"], int(a["needs_commutative"]))' "$work/registry.json")
n=$(echo "$pairs" | wc -l)
[ "$n" -ge 12 ] || fail "the registry has only $n (collective, algorithm) pairs"
count() { grep -c -- "$1" "$2" || true; }
while read -r coll alg comm; do
  C="$(echo "${coll:0:1}" | tr a-z A-Z)${coll:1}"
  U=$(echo "${coll}_${alg}" | tr a-z A-Z)
  f=$tree/src/mpi/coll
  # In its collective's section, with its CVAR and, where needed, its restriction.
  section=$(sed -n "/^${coll}-intra:/,/^[a-z]/p" "$f/coll_algorithms.txt")
  echo "$section" | grep -qx "    $alg" || fail "coll_algorithms.txt: no $alg under ${coll}-intra"
  [ "$(count "name        : MPIR_CVAR_${U}_KVAL\$" "$f/cvars.txt")" = 1 ] || fail "cvars.txt: MPIR_CVAR_${U}_KVAL not defined once"
  grep -q "^        $alg  *- .*(gencoll), .* MPIR_CVAR_${U}_KVAL\$" "$f/cvars.txt" ||
    fail "cvars.txt: $alg is no value of MPIR_CVAR_$(echo "$coll" | tr a-z A-Z)_INTRA_ALGORITHM"
  [ "$(count "MPIR_${C}_intra_${alg},\$" "$f/include/csel_container.h")" = 1 ] || fail "csel_container.h: no container id for $coll $alg"
  [ "$(count "\"algorithm=MPIR_${C}_intra_${alg}\"" "$f/src/csel_container.c")" = 1 ] ||
    fail "csel_container.c: algorithm=MPIR_${C}_intra_${alg} not mapped once"
  [ "$(count "cnt->u.${coll}.intra_${alg}.k = MPIR_CVAR_${U}_KVAL;" "$f/src/csel_container.c")" = 1 ] ||
    fail "csel_container.c: a file's $coll $alg without k= does not default to its CVAR"
  [ "$(count "int MPIR_${C}_intra_${alg}(" "$f/src/coll_gencoll_registry.c")" = 1 ] || fail "no C wrapper for $coll $alg"
  grep -q "MPII_Gencoll_${coll}(GENCOLL_$(echo "$alg" | tr a-z A-Z)," "$f/src/coll_gencoll_registry.c" ||
    fail "the $coll $alg wrapper does not call MPII_Gencoll_${coll} with GENCOLL_$(echo "$alg" | tr a-z A-Z)"
  grep -q "^                .MPIR_CVAR_${U}_KVAL=2,3,5\$" "$tree/test/mpi/maint/coll_cvars.txt" ||
    fail "coll_cvars.txt: MPICH's tests do not run $coll $alg"
  if [ "$comm" = 1 ]; then
    echo "$section" | grep -A1 -x "    $alg" | grep -q "restrictions: commutative" ||
      fail "coll_algorithms.txt: $coll $alg needs a commutative op but has no restriction"
  fi
done <<< "$pairs"
# Only the test suite's algorithms section gains entries.
[ "$(sed -n '1,/^algorithms:/p' "$tree/test/mpi/maint/coll_cvars.txt" | grep -c KVAL)" = 0 ] ||
  fail "coll_cvars.txt: entries landed in the tests section"
echo "ok: $n (collective, algorithm) pairs registered"

# A registry for a collective MPICH's glue has no entry point for.
python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); r["collectives"][0]["name"] = "alltoall"
json.dump(r, open(sys.argv[2], "w"))' "$work/registry.json" "$work/bad.json"
make_tree "$work/t2"
out=$(python3 "$srcdir/src/mpich/register.py" --registry "$work/bad.json" "$work/t2" 2>&1) && fail "an unknown collective was accepted"
echo "$out" | grep -q "collective 'alltoall' has no MPICH signature here (known: allgather, allreduce, bcast, reduce, reduce_scatter_block, reduce_scatter)" ||
  fail "unclear message for an unknown collective: $out"
# Not JSON at all.
echo "{" > "$work/broken.json"
out=$(python3 "$srcdir/src/mpich/register.py" --registry "$work/broken.json" "$work/t2" 2>&1) && fail "broken JSON was accepted"
echo "$out" | grep -q "broken.json: not a registry of gencoll-mpich-registry" || fail "unclear message for broken JSON: $out"
# A tree that lacks a line the registration anchors on (another MPICH version).
make_tree "$work/t3"
sed -i '/union {/d' "$work/t3/src/mpi/coll/include/csel_container.h"
out=$(python3 "$srcdir/src/mpich/register.py" --registry "$work/registry.json" "$work/t3" 2>&1) && fail "a tree without an anchor was accepted"
echo "$out" | grep -q "src/mpi/coll/include/csel_container.h: no line equal to '    union {'" ||
  fail "unclear message for a missing anchor: $out"
echo "PASS: register.py generates every (collective, algorithm) of the table and refuses what it does not know"
