#!/usr/bin/env bash
# gencoll-tune's Open MPI coll_tuned rules (issue 16, item 6), loaded into
# Debian's Open MPI with no gencoll plugin at all: the MCA file gencoll-tune
# writes (mpirun --tune) makes coll/tuned read the rules, and every call of a
# sweep (each collective, 8 B to 1 MiB, 4 and 3 ranks) must run the algorithm
# the rules name for its size, as a probe preloaded in front of coll/base's
# algorithms reports (tests/ompi/tuned_trace.c), with correct results.
set -u
builddir=${builddir:-$(pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v mpicc.openmpi >/dev/null && command -v mpiexec.openmpi >/dev/null ||
  { echo "SKIP: no Open MPI (mpicc.openmpi, mpiexec.openmpi)"; exit 77; }
tune="$builddir/selection/gencoll-tune"
[ -x "$tune" ] || { echo "FAIL: no $tune"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc.openmpi -shared -fPIC -O1 -o "$tmp/trace.so" "$srcdir/tests/ompi/tuned_trace.c" -ldl ||
  fail "cannot build the probe"
mpicc.openmpi -O1 -o "$tmp/calls" "$srcdir/tests/ompi/tuned_calls.c" || fail "cannot build the calls"
# A profile whose choices change with size, tuned for the sizes run below.
"$tune" --profile "$srcdir/selection/profiles/cpu-cluster.json" --comm-sizes 3,4 --min-size 8 --max-size 1M \
  --out "$tmp" --name t --no-plot --threads 1 > "$tmp/tune.log" 2>&1 || fail "gencoll-tune: $(cat "$tmp/tune.log")"
[ -s "$tmp/t-ompi-rules.conf" ] && [ -s "$tmp/t-ompi.conf" ] || fail "gencoll-tune wrote no Open MPI rules"
checked=0
for np in 4 3; do
  timeout -k 5 300 mpiexec.openmpi --oversubscribe --allow-run-as-root --mca btl self,vader -n "$np" \
    --tune "$tmp/t-ompi.conf" -x LD_PRELOAD="$tmp/trace.so" "$tmp/calls" 1048576 \
    > "$tmp/run$np" 2>&1 </dev/null || fail "$np ranks: $(tail -5 "$tmp/run$np")"
  grep -q "tuned_calls: p=$np results ok" "$tmp/run$np" || fail "$np ranks: wrong results: $(tail -5 "$tmp/run$np")"
  n=$(python3 - "$tmp/t-ompi-rules.conf" "$tmp/run$np" "$np" <<'PY'
import re, sys
rules_file, trace_file, p = sys.argv[1], sys.argv[2], int(sys.argv[3])
nums = [int(x) for line in open(rules_file) for x in re.findall(r"\d+", line.split("#")[0])]
names = {0: "allgather", 2: "allreduce", 7: "bcast", 11: "reduce"}
algs = {"allgather": {2: "bruck", 3: "recursive_doubling", 4: "ring"},
        "allreduce": {3: "recursive_doubling", 4: "ring", 6: "rabenseifner"},
        "bcast": {6: "binomial", 7: "knomial"}, "reduce": {5: "binomial", 7: "rabenseifner"}}
rules, i = {}, 1
for _ in range(nums[0]):
    coll, ncs = names[nums[i]], nums[i + 1]; i += 2
    for _ in range(ncs):
        cs, nms = nums[i], nums[i + 1]; i += 2
        rules[(coll, cs)] = [tuple(nums[i + 4 * j:i + 4 * j + 2]) for j in range(nms)]; i += 4 * nms
checked, seen = 0, set()
for line in open(trace_file):
    m = re.match(r"tuned: (\w+) (\w+) (\d+)$", line.strip())
    if not m: continue
    coll, alg, size = m.group(1), m.group(2), int(m.group(3))
    sizes = [cs for (c, cs) in rules if c == coll and cs <= p]
    if not sizes: sys.exit(f"no rule for {coll} at {p} ranks, but {alg} ran")
    want = [a for (ms, a) in rules[(coll, max(sizes))] if ms <= size][-1]
    if algs[coll][want] != alg:
        sys.exit(f"{coll} of {size} B at {p} ranks ran {alg}; the rules say {algs[coll][want]}")
    checked += 1; seen.add((coll, alg))
if checked < 40: sys.exit(f"only {checked} traced calls")
if len(seen) < 5: sys.exit(f"the rules chose only {sorted(seen)}: too few algorithms to test")
print(checked)
PY
) || fail "$n"
  echo "$np ranks: $n calls ran the algorithm the rules name for their size"
  checked=$((checked + n))
done
echo "PASS: Open MPI followed gencoll-tune's coll_tuned rules in $checked calls"
