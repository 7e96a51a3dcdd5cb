#!/usr/bin/env bash
# gencoll-tune: equal inputs give byte-identical files whatever the thread
# count; the shipped json-configs/ are what the tuner writes today (regenerate
# them with `make json-configs`); unusable input fails with a message naming
# what is wrong; the plot is a PNG.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${builddir:-$(pwd)}
tune="$builddir/selection/gencoll-tune"
profile="$srcdir/selection/profiles/small-synthetic.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$tmp/a" "$tmp/b"
"$tune" --profile "$profile" --shapes 1x4,2x4 --comm-sizes 5 --max-size 1M --threads 1 --out "$tmp/a" >/dev/null ||
  fail "tuner failed"
"$tune" --profile "$profile" --shapes 1x4,2x4 --comm-sizes 5 --max-size 1M --threads 3 --out "$tmp/b" >/dev/null ||
  fail "tuner failed"
for f in small-synthetic.json small-synthetic.csv small-synthetic.md; do
  cmp -s "$tmp/a/$f" "$tmp/b/$f" || fail "$f differs between 1 and 3 threads"
done
echo "ok: deterministic across thread counts"

# The shipped file for this profile, regenerated with its recorded command.
shipped="$srcdir/json-configs/small-synthetic.json"
[ -f "$shipped" ] || fail "missing $shipped (make json-configs)"
cmd=$(sed -n 's/^small-synthetic: //p' "$srcdir/json-configs/COMMANDS")
[ -n "$cmd" ] || fail "json-configs/COMMANDS has no line for small-synthetic"
mkdir -p "$tmp/c"
(cd "$srcdir" && eval "\"$tune\" $cmd --out \"$tmp/c\" --no-plot" >/dev/null) || fail "cannot rerun: $cmd"
cmp -s "$tmp/c/small-synthetic.json" "$shipped" ||
  fail "json-configs/small-synthetic.json is stale: run make json-configs ($(diff "$tmp/c/small-synthetic.json" "$shipped" | head -3))"
echo "ok: json-configs/small-synthetic.json is what the tuner writes"

python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all("collective=" + c in d for c in ("allgather", "allreduce", "bcast", "reduce"))' \
  "$tmp/a/small-synthetic.json" || fail "the selection file lacks a tuned collective"
for c in allgather allreduce bcast reduce; do
  for bytes in 8 4096 1048576 1073741824; do
    python3 "$srcdir/tests/tune/select.py" "$tmp/a/small-synthetic.json" "$c" 4 "$bytes" >/dev/null ||
      fail "no choice for $c at $bytes bytes"
    python3 "$srcdir/tests/tune/select.py" "$tmp/a/small-synthetic.json" "$c" 100 "$bytes" noncommutative >/dev/null ||
      fail "no choice for $c at 100 ranks, $bytes bytes, non-commutative"
  done
done
echo "ok: every collective, size and communicator size reaches an algorithm"

if command -v gnuplot >/dev/null; then
  head -c 8 "$tmp/a/small-synthetic-allreduce.png" | od -An -c | grep -q 'P   N   G' || fail "no PNG plot"
  echo "ok: plots are PNG files"
fi

# expect_error MESSAGE_REGEX ARGS...
expect_error() {
  local want=$1; shift
  local out
  if out=$("$tune" "$@" --out "$tmp" --no-plot 2>&1); then fail "accepted: $*"; fi
  echo "$out" | grep -qE -- "$want" || fail "for '$*' expected /$want/, got: $out"
  echo "ok: $(echo "$out" | head -n1)"
}
expect_error "no-such.json" --profile "$tmp/no-such.json" --shapes 2x4
echo '{"name": "x", "levels": [{"name": "node", "fanout": 0}]}' > "$tmp/bad.json"
expect_error "bad.json: levels" --profile "$tmp/bad.json" --shapes 2x4
expect_error "has 4 ranks per node, not 3" --profile "$profile" --shapes 2x3
expect_error "'2y4' is not an integer" --profile "$profile" --shapes 2y4
expect_error "unknown collective 'alltoall'" --profile "$profile" --shapes 2x4 --collectives alltoall
echo '{"collective=bcast": ' > "$tmp/base.json"
expect_error "base.json: not valid JSON" --profile "$profile" --shapes 2x4 --base "$tmp/base.json"
# benchmarks/rescore.py scores a kept emulated-cluster run against this
# build's simulator: the report has its network-bound summary, and the
# profile it scored carries the rendezvous size taken from its source text.
kept="$srcdir/benchmarks/results/2026-11-24-h100-emu4x1-1gbit-4r"
if [ -d "$kept" ]; then
  python3 "$srcdir/benchmarks/rescore.py" "$kept" --out "$tmp/rescore" --build "$builddir" > "$tmp/rescore.out" 2>&1 ||
    { cat "$tmp/rescore.out"; fail "rescore.py failed"; }
  grep -q "^- measured / predicted time of the chosen schedule: geometric mean [0-9.]*, range" "$tmp/rescore.out" ||
    fail "rescore.py: no measured / predicted line"
  grep -q "^## Network-bound sizes" "$tmp/rescore.out" || fail "rescore.py: no network-bound summary"
  grep -q '"rendezvous_above": 4' "$tmp/rescore/profile.json" || fail "rescore.py: no rendezvous size in the scored profile"
  echo "ok: rescore.py scores a kept run ($(grep -c '^|' "$tmp/rescore.out") table rows)"
fi
echo "PASS: gencoll-tune"
