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
echo '{"foo": 1}' > "$tmp/notcsel.json"
expect_error 'notcsel.json: key "foo"' --profile "$profile" --shapes 2x4 --base "$tmp/notcsel.json"
expect_error "'2x4x4' is not NODES or NODESxRANKS" --profile "$profile" --shapes 2x4x4
expect_error "--threads: '0' is not an integer in 1\.\.2147483647" --profile "$profile" --shapes 2x4 --threads 0
# Integers that would wrap where they are kept (an element of 2^32 bytes
# became 0 and divided by zero), sizes MPICH's int threshold cannot hold.
expect_error "--elem-bytes: '4294967296' is not an integer in 1\.\.2147483647" --profile "$profile" --shapes 2x4 --elem-bytes 4294967296
expect_error "--comm-sizes: '4294967297' is not an integer" --profile "$profile" --comm-sizes 4294967297
expect_error "'65536x65536' is more ranks than an MPI communicator holds" --profile "$profile" --shapes 65536x65536
expect_error "--max-size: 4294967296 bytes: the largest size tuned may be 2 GiB" --profile "$profile" --shapes 2x4 --max-size 4G
expect_error "is a whole number of --elem-bytes 3-byte elements" --profile "$profile" --shapes 2x4 --elem-bytes 3 --max-size 64
expect_error "--max-size: '-5' is not a byte count" --profile "$profile" --shapes 2x4 --max-size -5
if out=$("$tune" --profile "$profile" --shapes 2x4 --max-size 64 --no-plot --out "$tmp/no/such/dir" --name t 2>&1); then
  fail "an unwritable --out was accepted"
fi
echo "$out" | grep -qF "cannot write $tmp/no/such/dir/t.json" || fail "unwritable --out: $out"
echo "ok: $out"

# gencoll-sim refuses what it cannot mean, naming the option (issue 18's list).
sim="$builddir/selection/gencoll-sim"
flat="--flat 1,0.1,0.1,0.1,0.1 --ranks 4"
expect_sim_error() {
  local want=$1; shift
  local out
  # shellcheck disable=SC2086
  if out=$("$sim" "$@" 2>&1); then fail "gencoll-sim accepted: $*"; fi
  echo "$out" | grep -qF -- "$want" || fail "gencoll-sim $*: expected '$want', got: $out"
  echo "ok: $(echo "$out" | head -n1)"
}
# shellcheck disable=SC2086
{
expect_sim_error '-m: "-5" is not a size >= 1 byte' $flat -m -5
expect_sim_error '-m: "17179869184G" is not a size >= 1 byte' $flat -m 17179869184G
expect_sim_error '-m: "0" is not a size >= 1 byte' $flat -m 0
expect_sim_error 'the size (3 bytes) is not a multiple of --elem-bytes 4' $flat -m 3 --elem-bytes 4
expect_sim_error '--sizes: "0" is not a size >= 1 byte' $flat --sweep --sizes 0
expect_sim_error '--flat: "nan" is not a finite non-negative number' --flat nan,1,1,1,1 --ranks 4
expect_sim_error '--flat: "" is not a finite non-negative number' --flat 1,,1,1,1 --ranks 4
expect_sim_error '--flat: "inf" is not a finite non-negative number' --flat 1,1,1,1,inf --ranks 4
expect_sim_error 'give --size (per rank) or --total (all ranks), not both' $flat -c allgather -m 1K --total 4K
expect_sim_error '--total: 4097 bytes do not split evenly over 4 ranks' $flat -c allgather --total 4097
expect_sim_error '--threads' $flat --sweep --threads 0
expect_sim_error '--smp: allgather has no node-aware composition' --profile "$profile" -c allgather --smp
expect_sim_error '--timeline: cannot write' $flat --timeline "$tmp/no/such/dir/t.csv"
expect_sim_error "--smp: the 4 ranks need nodes of several ranks and more than one node (the profile's nodes hold 4)" \
  --profile "$profile" --nodes 1 --smp
}
echo '{"name": "x", "name": "y"}' > "$tmp/dup.json"
expect_sim_error 'dup.json: name: given twice in one object' --profile "$tmp/dup.json"
echo '{"name": "x", "levels": [{"loggp": {"L_us": 1e999}}]}' > "$tmp/huge.json"
expect_sim_error 'huge.json: the value after "L_us": a number out of range' --profile "$tmp/huge.json"
expect_sim_error "$tmp: is a directory, not a profile file" --profile "$tmp"
# The composition over small-synthetic's nodes of 4: the leaders' radix among 2 nodes.
"$sim" --profile "$profile" --nodes 2 -a kring -k 4 --smp | grep -qx 'algorithm: smp+kring' ||
  fail "gencoll-sim --smp does not name the composition"
"$sim" --profile "$profile" --nodes 2 -a kring -k 4 --smp | grep -qx 'radix: 2' ||
  fail "gencoll-sim --smp: the radix is not the leaders' (2 nodes)"
echo "ok: gencoll-sim --smp simulates the composition"
# shellcheck disable=SC2086
"$sim" $flat | grep -qx 'contention: off' || fail "gencoll-sim --flat does not say contention: off"
# shellcheck disable=SC2086
"$sim" $flat -a recursive_multiplying -k 3 --ranks 8 | grep -qx 'radix: 3 (rounds of radix 2,2,2)' ||
  fail "gencoll-sim: recursive multiplying k=3 at p=8 does not show its rounds of radix 2"
echo "ok: gencoll-sim says contention off for --flat and the radices recursive multiplying really uses"
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
  # The same run as if cut in its reduce sweep before the tuned file: the
  # cut sweep's rows (main-job's .part file) still count, and the report says
  # the tuned file was not measured instead of failing.
  cut=$tmp/cut
  # The kept sweep as text (results keep large CSVs gzipped,
  # benchmarks/results/README.md); the cut run gets plain files alone.
  sweep=$tmp/kept-sweep.csv
  if [ -f "$kept/sweep.csv" ]; then cp "$kept/sweep.csv" "$sweep"; else zcat "$kept/sweep.csv.gz" > "$sweep"; fi
  rm -rf "$cut" && cp -r "$kept" "$cut" && rm -f "$cut"/tuned-run.csv* "$cut"/sweep.csv*
  head -n 1 "$sweep" > "$cut/sweep.csv.sweep.part"
  awk -F, 'NR > 1 && $6 == "reduce"' "$sweep" >> "$cut/sweep.csv.sweep.part"
  # A run stopped at its limit can leave its last row half written, here
  # inside its last column (every field counted, a round's median cut).
  awk -F, 'NR == 2 { printf "%s", substr($0, 1, length($0) - 2) }' "$sweep" >> "$cut/sweep.csv.sweep.part"
  awk -F, 'NR == 1 || $6 != "reduce"' "$sweep" > "$cut/sweep.csv"
  python3 "$srcdir/benchmarks/rescore.py" "$cut" --out "$tmp/rescore-cut" --build "$builddir" > "$tmp/rescore-cut.out" 2>&1 ||
    { cat "$tmp/rescore-cut.out"; fail "rescore.py failed on a cut run"; }
  grep -q "^- tuned file: not measured in this run" "$tmp/rescore-cut.out" ||
    fail "rescore.py on a cut run: no line saying the tuned file was not measured"
  grep -q "sweep.csv.sweep.part: the run was cut during this sweep.*(1 cut short left out)" "$tmp/rescore-cut.out" ||
    fail "rescore.py on a cut run: the cut sweep's rows, or its half-written last row, are not named"
  [ "$(grep -c '^| [0-9]' "$tmp/rescore-cut.out")" = "$(grep -c '^| [0-9]' "$tmp/rescore.out")" ] ||
    fail "rescore.py on a cut run: $(grep -c '^| [0-9]' "$tmp/rescore-cut.out") table rows, the whole run has $(grep -c '^| [0-9]' "$tmp/rescore.out")"
  echo "ok: rescore.py scores a run cut before its tuned file from what it measured"
fi
echo "PASS: gencoll-tune"
