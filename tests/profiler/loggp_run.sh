#!/usr/bin/env bash
# gencoll-loggp end to end on this machine: bad options fail naming the
# option, a --quick run on 2 ranks of Debian's MPICH writes a profile that
# gencoll-sim loads and simulates, and an emulated two-host run exercises the
# multi-level path (node level, node radix).
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${builddir:-$(pwd)}
loggp="$builddir/profiler/gencoll-loggp"
sim="$builddir/selection/gencoll-sim"
mpiexec=${MPIEXEC_MPICH:-$(command -v mpiexec.mpich || true)}
if [ ! -x "$loggp" ] || [ -z "$mpiexec" ]; then
  echo "SKIP: no $loggp (needs MPICH and hwloc) or no mpiexec.mpich"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect_error MESSAGE_REGEX ARGS...: no launcher needed, options come first.
expect_error() {
  local want=$1; shift
  local out
  if out=$("$loggp" "$@" 2>&1); then fail "accepted: $*"; fi
  echo "$out" | grep -qE -- "$want" || fail "for '$*' expected /$want/, got: $out"
  echo "ok: $(echo "$out" | head -n1)"
}
expect_error 'unknown option "--bogus"' --bogus
expect_error '--reps: expected an integer from 1' --reps 0
expect_error '"12Q" is not a size' --sizes 1,12Q
"$loggp" --help | grep -q 'PRTT' || fail "--help does not describe the method"
echo "ok: --help"

out=$("$mpiexec" -n 1 "$loggp" --quick --out "$tmp/none.json" 2>&1) && fail "1 rank accepted"
echo "$out" | grep -q 'at least 2 ranks' || fail "1 rank: expected 'at least 2 ranks', got: $out"
echo "ok: 1 rank refused"

start=$(date +%s%N)
# Bound to cores of their own: the progress probe needs each rank on its own
# core (ranks sharing CPUs get no "progress", as the two-host run below shows).
"$mpiexec" -n 2 -bind-to core "$loggp" --quick --out "$tmp/p.json" --csv "$tmp/p.csv" > "$tmp/run.log" 2>&1 ||
  fail "the 2-rank quick run failed: $(cat "$tmp/run.log")"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "ok: 2 ranks, --quick, ${ms} ms"
sed 's/^/  /' "$tmp/run.log"

python3 - "$tmp/p.json" "$tmp/p.csv" "$(nproc)" <<'PY' || fail "the profile lacks what it must hold"
import csv, json, sys
p = json.load(open(sys.argv[1]))
assert p["source"].startswith("measured by gencoll-loggp"), p["source"]
assert p["levels"], "no levels"
for lv in p["levels"]:
    assert "source" in lv and "PRTT" in lv["source"], lv
    # who must be in MPI for the bytes to move, with the times behind it (on
    # one core the two bound ranks share it: no claim, the note says why)
    if int(sys.argv[3]) >= 2:
        assert lv.get("progress") in ("independent", "receiver", "both"), lv.get("progress")
        assert "progress from one message of" in lv["source"], lv["source"]
    else:
        assert "progress" not in lv and "share CPUs" in lv.get("note", ""), lv
for key in ("contention", "local"):
    assert "measured by gencoll-loggp" in p[key]["source"], p[key]
assert p["contention"]["device_radix"] >= 1
assert all(p["local"][k] > 0 for k in ("reduce_host_ns_per_byte", "copy_host_ns_per_byte", "permute_host_ns_per_byte"))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 11, len(rows)  # --quick: 1 B .. 1 MiB by powers of 4
PY
echo "ok: every number has its source (progress $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["levels"][0].get("progress", "not claimed"))' "$tmp/p.json")); the CSV has the 11 quick sizes"

# The profile, read as the simulator reads it (tables interpolated linearly,
# held beyond their ends), against the measured one-way times and
# back-to-back spacings: medians over the sizes of model / measurement.
# Enforced only within a factor of 4 (a unit or bits-for-bytes slip is a
# factor of 8 or more); within 1.33 it is reported as such: with other work on
# the 2 cores (make -j check runs tests side by side) most repetitions can be
# disturbed, and the robust fit then rightly disagrees with the medians it
# left out.
python3 - "$tmp/p.json" "$tmp/p.csv" <<'PY' || fail "the profile does not match its own measurements within a factor of 4 (or cannot be compared)"
import bisect, csv, json, statistics, sys
p = json.load(open(sys.argv[1]))
lg = p["levels"][0]["loggp"]
def at(b):
    if "table" not in lg:
        return lg
    t = lg["table"]
    sizes = [r["bytes"] for r in t]
    if b <= sizes[0]: return t[0]
    if b >= sizes[-1]: return t[-1]
    i = bisect.bisect_right(sizes, b)
    lo, hi = t[i - 1], t[i]
    w = (b - lo["bytes"]) / (hi["bytes"] - lo["bytes"])
    return {k: lo[k] + w * (hi[k] - lo[k]) for k in ("L_us", "o_s_us", "o_r_us", "g_us", "G_ns_per_byte")}
one_way, spacing = [], []
for r in csv.DictReader(open(sys.argv[2])):
    b, q = int(r["bytes"]), at(int(r["bytes"]))
    stream = (b - 1) * q["G_ns_per_byte"] / 1000
    one_way.append((q["o_s_us"] + q["L_us"] + q["o_r_us"] + stream) / (float(r["prtt1_us"]) / 2))
    if float(r["g_us"]) > 0:
        spacing.append((max(q["o_s_us"], q["g_us"]) + stream) / float(r["g_us"]))
a, b = statistics.median(one_way), statistics.median(spacing) if spacing else float("nan")
verdict = "ok" if 0.75 < a < 1.33 and 0.75 < b < 1.33 else "note (was the machine busy?)"
print("%s: model/measured, medians over the sizes: one-way %.2f, back-to-back spacing %.2f" % (verdict, a, b))
sys.exit(0 if 0.25 < a < 4 and (not spacing or 0.25 < b < 4) else 1)
PY

for m in 8 1M; do
  res=$("$sim" --profile "$tmp/p.json" --ranks 2 -m "$m" 2>&1) || fail "gencoll-sim rejected the profile: $res"
  echo "$res" | grep -qE '^time' || fail "gencoll-sim gave no time: $res"
  echo "ok: gencoll-sim --ranks 2 -m $m: $(echo "$res" | grep -E '^time' | head -n1)"
done

"$mpiexec" -n 4 "$loggp" --quick --emulate-nodes 2 --out "$tmp/q.json" > "$tmp/run4.log" 2>&1 ||
  fail "the emulated two-host run failed: $(cat "$tmp/run4.log")"
python3 - "$tmp/q.json" <<'PY' || fail "the two-host profile is not shaped as expected"
import json, sys
p = json.load(open(sys.argv[1]))
assert [l["name"] for l in p["levels"]] == ["node", "system"], p["levels"]
assert p["node_level"] == "node"
assert p["levels"][0]["fanout"] == 2
assert p["contention"]["node_radix"] >= 1
assert "emulated" in p["description"]
# 4 unbound ranks on this machine, the emulated hosts one machine: neither
# level's pair has cores of its own, so no progress is claimed, and the
# notes say why
for lv in p["levels"]:
    assert "progress" not in lv and "share CPUs" in lv.get("note", ""), lv
PY
res=$("$sim" --profile "$tmp/q.json" --nodes 2 -m 64K 2>&1) || fail "gencoll-sim rejected the two-host profile: $res"
echo "ok: emulated two hosts: $(echo "$res" | grep -E '^time' | head -n1)"
# Four ranks of one host: the memory radix's pairs ran (0-1 and 2-3 at
# once), and on cores they share the profile claims nothing for it.
"$mpiexec" -n 4 "$loggp" --quick --out "$tmp/m.json" > "$tmp/run4m.log" 2>&1 ||
  fail "the 4-rank one-host run failed: $(cat "$tmp/run4m.log")"
python3 - "$tmp/m.json" "$(nproc)" <<'PY' || fail "the one-host profile's memory radix is not as expected"
import json, sys
c = json.load(open(sys.argv[1]))["contention"]
assert "j=1: 1.00, j=2: " in c["source"], c["source"]
if int(sys.argv[2]) < 4:
    assert "memory_radix" not in c and "memory_radix not measured" in c["source"] and "share CPUs" in c["source"], c
PY
echo "ok: one host of 4 ranks: $(python3 -c 'import json,re,sys; s=json.load(open(sys.argv[1]))["contention"]["source"]; print(re.search(r"memory_radix[^;]*", s).group(0)[:90])' "$tmp/m.json")"
