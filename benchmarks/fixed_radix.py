#!/usr/bin/env python3
"""The cost of generality: gencoll at the fixed radix against the MPI's own
hand-written algorithm of the same schedule, measured side by side in one
gencoll-bench run (seed 001 section VI-C-1; issues 16 and 19). Prints one
table per collective: per size, gencoll's median / the MPI's median for each
pair the CSV holds, and each pair's geometric mean and worst ratio.
Python standard library only (and analyze.py beside it).

usage: fixed_radix.py BENCH.csv [--title TEXT] [--rate R]
  BENCH.csv  gencoll-bench --csv output (several runs told apart by the
             label column: each configuration's time at a size is then its
             best over the runs, as gencoll-bench keeps its best round, and
             the table says how many runs) whose --sweep holds, per collective,
             gencoll's configurations and the MPI's own (mpich:NAME or
             ompi:NAME), e.g. for Open MPI with the component loaded:
               --sweep recursive_multiplying:2,ompi:recursive_doubling,kring:P,ompi:ring,
                       knomial:2,ompi:binomial
             (P the rank count); pairs whose two configurations are both in
             the CSV are reported.
  --rate R   the link's rate, a tc rate such as 1gbit or bytes per second (an
             emulated cluster's NICs; analyze.py's --link-rate): also the
             geometric mean and worst over the network-bound sizes of each
             pair, those whose time on one link (bytes / rate) is at least 10x
             the MPI's own smallest-size latency (the main job's definition)
"""
import argparse
import csv
import sys
from collections import defaultdict

from analyze import geomean, link_rate
from results_io import open_text

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
    ap.add_argument("--rate", type=link_rate, default=0)
    a = ap.parse_args()
    try:
        with open_text(a.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit("fixed_radix.py: %s: %s" % (a.csv, e.strerror))
    need = {"collective", "config", "bytes", "median_us", "ranks", "mpi"}
    if not rows or not need <= set(rows[0]):
        sys.exit("fixed_radix.py: %s: not a gencoll-bench CSV (columns %s)" % (a.csv, ", ".join(sorted(need))))
    # (collective, config) -> bytes -> run -> median. A run is one launch
    # (its label). On a VM a launch can leave one configuration 0.35-0.4 us
    # slower at a size up to a few KiB through all its interleaved rounds
    # (either MPI's or gencoll's, in either order, with or without address
    # randomization; 2026-11-28): the time kept is the configuration's best
    # over the runs, as a run keeps its best round, for other work only ever
    # adds time.
    t = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        t[(r["collective"], r["config"])][int(r["bytes"])][r.get("label", "")] = float(r["median_us"])
    runs = sorted({r.get("label", "") for r in rows})
    p = rows[0]["ranks"]
    mpi = rows[0]["mpi"]
    if a.title:
        print("# " + a.title + "\n")
    print("gencoll / %s at the fixed radix, %s ranks (median latency ratio%s; < 1: gencoll faster)\n" %
          (mpi, p, "" if len(runs) == 1 else ", each the best of %d runs" % len(runs)))
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
        bound = defaultdict(list)  # the network-bound sizes' ratios
        # The MPI's own latency at its smallest size, in seconds (best run).
        floor = {(g, o): min(t[(coll, o)][min(t[(coll, o)])].values()) * 1e-6 for g, o in cols}
        sizes = sorted(set().union(*(set(t[(coll, g)]) & set(t[(coll, o)]) for g, o in cols)))
        for b in sizes:
            cells = []
            for g, o in cols:
                tg, to = t[(coll, g)].get(b), t[(coll, o)].get(b)
                if tg and to and min(to.values()) > 0:
                    x = min(tg.values()) / min(to.values())
                    ratios[(g, o)].append(x)
                    if a.rate > 0 and b / a.rate >= 10 * floor[(g, o)]:
                        bound[(g, o)].append((b, x))
                    cells.append("%.2f" % x)
                else:
                    cells.append("-")
            print("| %d | %s |" % (b, " | ".join(cells)))
        print("| geometric mean | " + " | ".join("%.2f" % geomean(ratios[c]) if ratios[c] else "-" for c in cols) + " |")
        print("| worst | " + " | ".join("%.2f" % max(ratios[c]) if ratios[c] else "-" for c in cols) + " |")
        print("| sizes above 1.05 | " + " | ".join(
            "%d of %d" % (sum(x > 1.05 for x in ratios[c]), len(ratios[c])) for c in cols) + " |")
        if a.rate > 0:
            print("| network-bound: from, geometric mean, worst | " + " | ".join(
                "%d B, %.2f, %.2f" % (bound[c][0][0], geomean([x for _, x in bound[c]]), max(x for _, x in bound[c]))
                if bound[c] else "none" for c in cols) + " |")
        print()
    if not found:
        sys.exit("fixed_radix.py: %s holds no pair of gencoll and the MPI's own configuration" % a.csv)


if __name__ == "__main__":
    main()
