#!/usr/bin/env python3
"""The cost of generality: gencoll at the fixed radix against the MPI's own
hand-written algorithm of the same schedule, measured side by side in one
gencoll-bench run (seed 001 section VI-C-1; issues 16 and 19). Prints one
table per collective: per size, gencoll's median / the MPI's median for each
pair the CSV holds, and each pair's geometric mean and worst ratio.
Python standard library only.

usage: fixed_radix.py BENCH.csv [--title TEXT]
  BENCH.csv  gencoll-bench --csv output whose --sweep holds, per collective,
             gencoll's configurations and the MPI's own (mpich:NAME or
             ompi:NAME), e.g. for Open MPI with the component loaded:
               --sweep recursive_multiplying:2,ompi:recursive_doubling,kring:P,ompi:ring,
                       knomial:2,ompi:binomial
             (P the rank count); pairs whose two configurations are both in
             the CSV are reported.
"""
import argparse
import csv
import math
import sys
from collections import defaultdict

# gencoll at the radix that makes it the MPI's algorithm ("p": the rank count);
# "a|b": MPICH's name, then Open MPI's where they differ.
PAIRS = {
    "allgather": [("recursive_multiplying:2", "recursive_doubling"), ("kring:p", "ring"), ("kbruck:2", "brucks|bruck")],
    "allreduce": [("recursive_multiplying:2", "recursive_doubling"), ("kring:p", "ring"),
                  ("rabenseifner:2", "reduce_scatter_allgather|rabenseifner")],
    "bcast": [("knomial:2", "binomial")],
    "reduce": [("knomial:2", "binomial"), ("rabenseifner:2", "reduce_scatter_gather|rabenseifner")],
    "reduce_scatter_block": [("recursive_multiplying:2", "recursive_halving"), ("recursive_multiplying:p", "pairwise")],
    "reduce_scatter": [("recursive_multiplying:2", "recursive_halving"), ("recursive_multiplying:p", "pairwise")],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        with open(a.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit("fixed_radix.py: %s: %s" % (a.csv, e.strerror))
    need = {"collective", "config", "bytes", "median_us", "ranks", "mpi"}
    if not rows or not need <= set(rows[0]):
        sys.exit("fixed_radix.py: %s: not a gencoll-bench CSV (columns %s)" % (a.csv, ", ".join(sorted(need))))
    t = defaultdict(dict)  # (collective, config) -> bytes -> median
    for r in rows:
        t[(r["collective"], r["config"])][int(r["bytes"])] = float(r["median_us"])
    p = rows[0]["ranks"]
    mpi = rows[0]["mpi"]
    if a.title:
        print("# " + a.title + "\n")
    print("gencoll / %s at the fixed radix, %s ranks (median latency ratio; < 1: gencoll faster)\n" % (mpi, p))
    found = 0
    for coll, pairs in PAIRS.items():
        cols = []
        for g, own in pairs:
            g = g.replace(":p", ":" + p)
            names = own.split("|")
            for prefix, name in (("mpich:", names[0]), ("ompi:", names[-1])):
                if (coll, g) in t and (coll, prefix + name) in t:
                    cols.append((g, prefix + name))
        if not cols:
            continue
        found += 1
        print("## %s\n" % coll)
        print("| bytes | " + " | ".join("%s / %s" % c for c in cols) + " |")
        print("|---|" + "---|" * len(cols))
        ratios = defaultdict(list)
        sizes = sorted(set().union(*(set(t[(coll, g)]) & set(t[(coll, o)]) for g, o in cols)))
        for b in sizes:
            cells = []
            for g, o in cols:
                if b in t[(coll, g)] and b in t[(coll, o)] and t[(coll, o)][b] > 0:
                    x = t[(coll, g)][b] / t[(coll, o)][b]
                    ratios[(g, o)].append(x)
                    cells.append("%.2f" % x)
                else:
                    cells.append("-")
            print("| %d | %s |" % (b, " | ".join(cells)))
        print("| geometric mean | " + " | ".join(
            "%.2f" % math.exp(sum(map(math.log, ratios[c])) / len(ratios[c])) if ratios[c] else "-" for c in cols) + " |")
        print("| worst | " + " | ".join("%.2f" % max(ratios[c]) if ratios[c] else "-" for c in cols) + " |\n")
    if not found:
        sys.exit("fixed_radix.py: %s holds no pair of gencoll and the MPI's own configuration" % a.csv)


if __name__ == "__main__":
    main()
