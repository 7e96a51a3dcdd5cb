#!/usr/bin/env python3
"""Sets a measured run's per-message trace beside the simulator's timeline of
the same schedules, to find where a prediction and a measurement part.

The MPICH module writes the trace when GENCOLL_TRACE=DIR is set (one file
per rank of MPI_COMM_WORLD, DIR/trace.<rank>.csv, or packed in
DIR/traces.tar.gz: each op of each call, when
the runner started it and when it saw it finish, in microseconds from the
call's start on that rank); gencoll-sim --timeline gives the model's. Ranks
that start a call together (gencoll-bench's synced start) share the time
origin to within the clocks' offsets, which the bench's header prints.

usage: trace_compare.py TRACE_DIR --profile PROFILE.json [--sim PATH]
                        [--skip N] [--top N] [--rank R]

For each configuration in the trace (collective, algorithm, k, bytes,
element size, ranks, root): the median over its calls (the first N skipped: validation and
warm-up) of each op's start and finish, the call's measured time (the
median over calls of the last finish on any rank) against the model's, and
the ops whose own duration (start to finish) most exceeds the model's: where
the time was lost, as opposed to inherited from earlier ops. --rank R lists
every op of rank R.
"""
import argparse
import collections
import csv
import glob
import os
import io
import statistics
import subprocess
import sys
import tarfile


def trace_files(trace_dir):
    """(name, text stream) of each rank's trace: DIR/trace.*.csv, or packed in
    DIR/traces.tar.gz (as main-job.sh --trace keeps them)."""
    files = sorted(glob.glob(os.path.join(trace_dir, "trace.*.csv")))
    if files:
        return [(f, open(f)) for f in files]
    packed = os.path.join(trace_dir, "traces.tar.gz")
    if os.path.exists(packed):
        with tarfile.open(packed) as t:
            return [(m.name, io.StringIO(t.extractfile(m).read().decode()))
                    for m in sorted(t.getmembers(), key=lambda m: m.name) if m.isfile()]
    sys.exit("trace_compare: no trace.*.csv or traces.tar.gz in %s (run with GENCOLL_TRACE=%s)" % (trace_dir, trace_dir))


def read_traces(trace_dir):
    """{config: {rank: [{op: (kind, peer, bytes, start, done)} per call]}};
    a configuration: (collective, algorithm, k, bytes, element bytes, ranks, root)"""
    configs = collections.OrderedDict()
    for _, fh in trace_files(trace_dir):
        calls = collections.OrderedDict()  # (call id) -> (config, rank, ops)
        with fh:
            for row in csv.DictReader(fh):
                key = (row["collective"], row["algorithm"], int(row["k"]), int(row["bytes"]), int(row["elem_bytes"]),
                       int(row["ranks"]), int(row["root"]))
                call = calls.setdefault(row["call"], (key, int(row["rank"]), {}))
                call[2][int(row["op"])] = (row["kind"], int(row["peer"]), int(row["op_bytes"]),
                                           float(row["start_us"]), float(row["done_us"]))
        for key, rank, ops in calls.values():
            configs.setdefault(key, collections.defaultdict(list))[rank].append(ops)
    return configs


def simulate(sim, profile, key):
    coll, alg, k, nbytes, elem, ranks, root = key
    cmd = [sim, "--profile", profile, "--ranks", str(ranks), "-c", coll, "-a", alg, "-k", str(k),
           "-m", str(nbytes), "--elem-bytes", str(elem), "--root", str(root), "--timeline", "-"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("trace_compare: %s failed: %s" % (" ".join(cmd), out.stderr.strip()))
    lines = out.stdout.splitlines()
    time_us = next(float(l.split()[1]) for l in lines if l.startswith("time_us:"))
    head = lines.index("rank,step,kind,peer,op_bytes,start_us,done_us")
    steps = {}
    for row in csv.DictReader(lines[head:]):
        steps[(int(row["rank"]), int(row["step"]))] = (row["kind"], int(row["peer"]), int(row["op_bytes"]),
                                                       float(row["start_us"]), float(row["done_us"]))
    return time_us, steps


def describe(kind, peer, nbytes):
    what = {"send": "send to %d" % peer, "recv": "recv from %d" % peer}.get(kind, kind)
    return "%s (%d B)" % (what, nbytes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace_dir")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--sim", default=os.path.join(os.path.dirname(__file__), "..", "build", "selection", "gencoll-sim"))
    ap.add_argument("--skip", type=int, default=3, help="first calls of each configuration left out (default 3)")
    ap.add_argument("--top", type=int, default=8, help="ops listed where time was lost (default 8)")
    ap.add_argument("--rank", type=int, help="list every op of this rank")
    a = ap.parse_args()

    for key, by_rank in read_traces(a.trace_dir).items():
        coll, alg, k, nbytes, _, ranks, _ = key
        if len(by_rank) != ranks:
            print("%s %s k=%d %d B: traces of %d of %d ranks, skipped" % (coll, alg, k, nbytes, len(by_rank), ranks))
            continue
        ncalls = min(len(c) for c in by_rank.values())
        use = range(min(a.skip, ncalls - 1), ncalls)
        # The op's median start and finish over the calls used.
        measured = {}
        for r, calls in by_rank.items():
            for op in calls[0]:
                kind, peer, ob = calls[0][op][:3]
                measured[(r, op)] = (kind, peer, ob, statistics.median(calls[c][op][3] for c in use),
                                     statistics.median(calls[c][op][4] for c in use))
        call_us = statistics.median(max(max(o[4] for o in by_rank[r][c].values()) for r in by_rank) for c in use)
        model_us, steps = simulate(a.sim, a.profile, key)
        print("%s %s k=%d %d B on %d ranks, %d calls used: measured %.1f us, model %.1f us (%.2fx)" %
              (coll, alg, k, nbytes, ranks, len(use), call_us, model_us, call_us / model_us if model_us else 0))
        if set(measured) != set(steps) or any(measured[x][:3] != steps[x][:3] for x in measured):
            print("  the trace's ops are not the simulated schedule's (another gencoll version?)")
            continue
        rows = []
        for (r, op), (kind, peer, ob, ms, md) in measured.items():
            _, _, _, ps, pd = steps[(r, op)]
            rows.append((r, op, kind, peer, ob, ms, md, ps, pd, (md - ms) - (pd - ps)))
        print("  %-4s %-5s %-26s %11s %11s %11s %11s %11s" %
              ("rank", "op", "", "start", "model", "done", "model", "lost here"))
        fmt = "  %-4d %-5d %-26s %11.1f %11.1f %11.1f %11.1f %11.1f"
        for x in sorted(rows, key=lambda x: -x[9])[:a.top]:
            print(fmt % (x[0], x[1], describe(x[2], x[3], x[4]), x[5], x[7], x[6], x[8], x[9]))
        if a.rank is not None:
            print("  rank %d, every op by measured start:" % a.rank)
            for x in sorted((x for x in rows if x[0] == a.rank), key=lambda x: (x[5], x[1])):
                print(fmt % (x[0], x[1], describe(x[2], x[3], x[4]), x[5], x[7], x[6], x[8], x[9]))


if __name__ == "__main__":
    main()
