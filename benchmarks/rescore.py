#!/usr/bin/env python3
"""Scores a kept main-job run (benchmarks/results/DIR) against the simulator as
it is now: refits the run's profile from its per-size medians (profile-raw.csv,
where kept) with this build's gencoll-loggp --refit, re-tunes it for the run's shape with this build's
gencoll-tune and runs analyze.py on the run's own measurements. A change to
the model is judged by the networks it was measured on, without measuring
again. The tuned-file measurements stay those of the file the run tuned, so
the "tuned file vs MPICH default" lines describe the old file; selection
quality, rank correlation and measured / predicted are the new model's.

A run cut short (a device call's time ran out) is scored from what it
measured: the rows of a sweep it was in the middle of (sweep.csv.sweep.part)
join sweep.csv's, and without a tuned-file run the report says so.

A profile written before gencoll-loggp recorded "rendezvous_above" gets it
from its own source text (the last "protocol switch after N B"), as the
profiler now writes it.

usage: rescore.py RUN_DIR --out DIR [--build BUILD_DIR] [--set PATH=VALUE ...]
--set puts a value into the refitted profile before tuning (PATH: dotted keys,
a number for a list index; VALUE: a number, else a string), e.g.
contention.exchange_efficiency=0.8 or levels.0.progress=receiver: how a model
parameter the run's profiler did not measure would have scored. Writes DIR/profile.json (as scored), the tuner's files and analyze.py's
report; prints the report.
"""
import argparse
import csv
import io
import json
import math
import os
import re
import subprocess
import sys

from results_io import open_text, resolve

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    sys.exit("rescore.py: " + msg)


def read_machine(run):
    """Ranks, hosts and NIC rate from the run's machine.txt."""
    path = os.path.join(run, "machine.txt")
    try:
        text = open(path).read()
    except OSError as e:
        fail(f"{path}: {e.strerror} (is {run} a main-job run?)")
    m = re.search(r"^ranks: (\d+)(?: on (\d+) host\(s\), (\d+) per host)?", text, re.M)
    if not m:
        fail(f"{path}: no 'ranks:' line")
    np_ = int(m.group(1))
    hosts, per_host = (int(m.group(2)), int(m.group(3))) if m.group(2) else (1, np_)
    rate = re.search(r"NICs at (\S+) each way", text)
    return np_, hosts, per_host, rate.group(1) if rate else None


def with_rendezvous(profile):
    for level in profile.get("levels", []):
        if "rendezvous_above" in level:
            continue
        switches = re.findall(r"protocol switch after (\d+) B", level.get("source", ""))
        if switches:
            level["rendezvous_above"] = int(switches[-1])
    return profile


def measured_rows(run, name, label):
    """NAME's rows (header first) with those of a sweep cut inside it
    (NAME.LABEL.part, main-job.sh's file while a sweep runs); [] if neither."""
    rows = []
    for path in (os.path.join(run, name), os.path.join(run, f"{name}.{label}.part")):
        try:
            with open_text(path, newline="") as f:
                text = f.read()
        except OSError:
            continue
        got = list(csv.reader(io.StringIO(text)))
        if got:
            # A run stopped at its limit can leave its last row half written,
            # also inside its last column (whose cut still counts its fields).
            cut = 0
            if not text.endswith("\n") and len(got) > 1:
                got.pop()
                cut = 1
            body = [r for r in got[1:] if len(r) == len(got[0])]
            cut += len(got) - 1 - len(body)
            rows += [got[0]] + body if not rows else body
            if path.endswith(".part"):
                print(f"rescore.py: {path}: the run was cut during this sweep; its {len(body)} rows are scored too" +
                      (f" ({cut} cut short left out)" if cut else ""), file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    a = ap.parse_args()
    settings = []
    for item in a.set:
        path, eq, value = item.partition("=")
        try:
            parsed = int(value) if re.fullmatch(r"-?[0-9]+", value) else float(value)
            if not math.isfinite(parsed):
                eq = ""
        except ValueError:
            parsed = value
        if not eq or not path or not value:
            fail(f"--set {item}: expected PATH=VALUE (a finite number or a word), e.g. contention.exchange_efficiency=0.8")
        settings.append((path.split("."), parsed))
    np_, hosts, per_host, rate = read_machine(a.run)
    tune = os.path.join(a.build, "selection", "gencoll-tune")
    if not os.access(tune, os.X_OK):
        fail(f"no {tune}: build first (scripts/build.sh)")
    os.makedirs(a.out, exist_ok=True)
    try:
        profile = with_rendezvous(json.load(open(os.path.join(a.run, "profile.json"))))
    except (OSError, ValueError) as e:
        fail(f"{a.run}/profile.json: {e}")
    scored = os.path.join(a.out, "profile.json")
    with open(scored, "w") as f:
        json.dump(profile, f, indent=2)
    raw = resolve(os.path.join(a.run, "profile-raw.csv"))
    if raw.endswith(".gz"):  # gencoll-loggp reads it as it was written
        plain = os.path.join(a.out, "profile-raw.csv")
        with open_text(raw, newline="") as f, open(plain, "w", newline="") as g:
            g.write(f.read())
        raw = plain
    if os.path.exists(raw):
        loggp = os.path.join(a.build, "profiler", "gencoll-loggp")
        if not os.access(loggp, os.X_OK):
            fail(f"no {loggp}: build first (scripts/build.sh)")
        subprocess.run([loggp, "--refit", raw, "--from", scored, "--out", scored], check=True, stdout=subprocess.DEVNULL)
    if settings:
        profile = json.load(open(scored))
        for keys, value in settings:
            node = profile
            for k in keys[:-1]:
                if isinstance(node, list):
                    if not k.isdigit() or int(k) >= len(node):
                        fail(f"--set {'.'.join(keys)}: {k} is not an index of the profile's list (0..{len(node) - 1})")
                    node = node[int(k)]
                else:
                    node = node.setdefault(k, {})
                if not isinstance(node, (dict, list)):
                    fail(f"--set {'.'.join(keys)}: {k} is not an object or a list in the profile")
            if not isinstance(node, dict):
                fail(f"--set {'.'.join(keys)}: the last key must name a field of an object")
            node[keys[-1]] = value
        with open(scored, "w") as f:
            json.dump(profile, f, indent=2)
    inputs = {}
    for name, label in (("sweep.csv", "sweep"), ("tuned-run.csv", "tuned")):
        rows = measured_rows(a.run, name, label)
        if len(rows) > 1:
            inputs[name] = os.path.join(a.out, "measured-" + name)
            with open(inputs[name], "w", newline="") as f:
                csv.writer(f).writerows(rows)
    if "sweep.csv" not in inputs:
        fail(f"{a.run}/sweep.csv: no measurements")
    with open(inputs["sweep.csv"], newline="") as f:
        sizes = [int(row["bytes"]) for row in csv.DictReader(f)]
    shape = ["--shapes", f"{hosts}x{per_host}"] if hosts > 1 else ["--comm-sizes", str(np_)]
    subprocess.run([tune, "--profile", scored, *shape, "--min-size", str(min(sizes)), "--max-size", str(max(sizes)),
                    "--out", a.out, "--name", "tuned", "--no-plot"], check=True, stdout=subprocess.DEVNULL)
    cmd = [sys.executable, os.path.join(HERE, "analyze.py"), "--sweep", inputs["sweep.csv"],
           "--picks", os.path.join(a.out, "tuned-picks.csv"),
           "--predicted", os.path.join(a.out, "tuned.csv"), "--out", a.out,
           "--title", f"{os.path.basename(os.path.normpath(a.run))} rescored by this build's simulator"]
    if "tuned-run.csv" in inputs:
        cmd += ["--tuned", inputs["tuned-run.csv"]]
    if rate:
        cmd += ["--link-rate", rate]
    subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
