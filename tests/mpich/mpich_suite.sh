#!/usr/bin/env bash
# MPICH's own collective tests (test/mpi/coll) against every gencoll algorithm:
# the entries test/mpi/maint/coll_cvars.txt registers for them (each algorithm
# with k = 2, 3, 5 on every test of its collective), as generated into
# testlist.cvar by MPICH's configure, run with MPICH's runtests.
#   GENCOLL_SUITE_FILTER=REGEX  runs only the matching entries
#   GENCOLL_SUITE_KS="2 3 5"     the radices run (make check: 3, a third of the
#       entries: the suite took 24 of a 56-minute CI run with all three;
#       make check-full runs 2 and 5 after it)
set -u
. "$(dirname "$0")/common.sh"
work=$(cd "$prefix/.." && pwd)
tests="$work/build/test/mpi"
[ -f "$tests/coll/testlist.cvar" ] || fail "no configured MPICH test suite in $tests"
out="$builddir/tests/mpich/suite"
mkdir -p "$out"
algs=$("$builddir/selection/gencoll-sim" --list-algorithms module | paste -sd '|') || fail "cannot list the module's algorithms"
grep -E "INTRA_ALGORITHM=($algs)( |$)" \
  "$tests/coll/testlist.cvar" | grep -E -- "${GENCOLL_SUITE_FILTER:-.}" |
  awk -v ks="${GENCOLL_SUITE_KS:-3}" 'BEGIN { n = split(ks, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    { k = ""; if (match($0, /_KVAL=[0-9]+/)) k = substr($0, RSTART + 6, RLENGTH - 6)
      if (k == "" || (k in want)) print }' > "$out/testlist.gencoll"
n=$(wc -l < "$out/testlist.gencoll")
[ "$n" -gt 0 ] || fail "no gencoll entries in testlist.cvar"
echo "mpich_suite: $n entries of test/mpi/coll/testlist.cvar (k in ${GENCOLL_SUITE_KS:-3})"
make -s -C "$tests/util" >/dev/null 2>&1 || fail "cannot build MPICH's test utilities"
[ -d "$tests/dtpools" ] && { make -s -C "$tests/dtpools" >/dev/null 2>&1 || fail "cannot build dtpools"; }
cd "$tests/coll" || exit 1
rm -f "$out/summary.tap"
MPITEST_TIMEOUT=${MPITEST_TIMEOUT:-120} timeout 2400 perl ../runtests -srcdir="$work/src/test/mpi/coll" \
  -tests="$out/testlist.gencoll" -mpiexec="$mpiexec" -tapfile="$out/summary.tap" > "$out/runtests.log" 2>&1
rc=$?
passed=$(grep -c '^ok ' "$out/summary.tap" 2>/dev/null || true)
failed=$(grep -c '^not ok ' "$out/summary.tap" 2>/dev/null || true)
passed=${passed:-0} failed=${failed:-0}
echo "mpich_suite: $passed passed, $failed failed (details: $out/runtests.log, $out/summary.tap)"
if [ "$failed" -ne 0 ] || [ "$passed" -ne "$n" ] || [ $rc -ne 0 ]; then
  grep -A6 '^not ok ' "$out/summary.tap" | head -40
  tail -5 "$out/runtests.log"
  exit 1
fi
echo "PASS: MPICH's coll tests under every gencoll algorithm"
