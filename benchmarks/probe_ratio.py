#!/usr/bin/env python3
"""Measured / predicted of every configuration of an emu_probe.sh sweep, per
size, under the probe's own profile with some of its values replaced: how a
model parameter the probe's profiler did not measure would have predicted
what it measured (e.g. contention.memory_radix on the 1x16 probe,
selection/PROFILES.md).

usage: probe_ratio.py PROBE_DIR RANKS [--set PATH=VALUE ...] [--min BYTES] [--build DIR]
  PROBE_DIR  an emu_probe.sh directory (profile.json, sweep.csv)
  RANKS      the ranks the sweep ran on
  --set      a value put into the profile first (PATH: dotted keys, a number
             for a list index), e.g. contention.memory_radix=6; repeatable
  --min      smallest size reported (default 262144)
  --build    the build whose gencoll-sim runs (default build/)
Prints per size: the geometric mean of measured / predicted over the
configurations, their range, and Spearman's rank correlation. MPICH's own
algorithm ("native") is left out: the simulator has no schedule for it.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

from analyze import geomean, spearman
from results_io import open_text

HERE = os.path.dirname(os.path.abspath(__file__))


def put(doc, path, value):
    keys = path.split(".")
    for k in keys[:-1]:
        doc = doc[int(k)] if isinstance(doc, list) else doc.setdefault(k, {})
    try:
        value = int(value)
    except ValueError:
        try:
            value = float(value)
        except ValueError:
            pass
    doc[keys[-1]] = value


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("probe")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--min", type=int, default=262144)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    a = ap.parse_args()
    sim = os.path.join(a.build, "selection", "gencoll-sim")
    if not os.access(sim, os.X_OK):
        sys.exit(f"probe_ratio.py: no {sim} (build first, or give --build)")
    profile = json.load(open(os.path.join(a.probe, "profile.json")))
    for s in a.set:
        if "=" not in s:
            sys.exit(f"probe_ratio.py: --set {s}: expected PATH=VALUE")
        put(profile, *s.split("=", 1))
    with open_text(os.path.join(a.probe, "sweep.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    measured = {}
    for r in rows:
        if r["config"] != "native" and int(r["bytes"]) >= a.min:
            measured[(r["config"], int(r["bytes"]))] = float(r["median_us"])
    if not measured:
        sys.exit(f"probe_ratio.py: {a.probe}/sweep.csv has no configuration of gencoll's from {a.min} B")
    coll = {r["collective"] for r in rows}
    configs = sorted({c for c, _ in measured})
    sizes = sorted({b for _, b in measured})
    algs = sorted({c.split(":")[0] for c in configs})
    radices = sorted({c.split(":")[1] for c in configs if ":" in c} | {"2"})
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(profile, f)
        f.flush()
        out = subprocess.run([sim, "--profile", f.name, "--ranks", str(a.ranks), "--sweep", "--collectives",
                              ",".join(sorted(coll)), "--algorithms", ",".join(algs), "--radices", ",".join(radices),
                              "--sizes", ",".join(map(str, sizes)), "--threads", "1"],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("probe_ratio.py: gencoll-sim: " + out.stderr.strip())
    predicted = {}
    for r in csv.DictReader(io.StringIO(out.stdout)):
        key = r["algorithm"] if r["algorithm"] == "ring" else f'{r["algorithm"]}:{r["radix"]}'
        predicted[(key, int(r["size_bytes"]))] = float(r["time_us"])
    print("bytes,configs,measured_over_predicted_geomean,lowest,highest,spearman")
    for b in sizes:
        have = [c for c in configs if (c, b) in measured and (c, b) in predicted]
        ratios = [measured[(c, b)] / predicted[(c, b)] for c in have]
        rho = spearman([measured[(c, b)] for c in have], [predicted[(c, b)] for c in have])
        print(f"{b},{len(have)},{geomean(ratios):.2f},{min(ratios):.2f},{max(ratios):.2f},{rho:.2f}")


if __name__ == "__main__":
    main()
