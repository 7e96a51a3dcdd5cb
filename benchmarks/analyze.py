#!/usr/bin/env python3
"""Scores the main job's measurements (gencoll-bench CSVs) against the tuner's
predictions and prints the report: per collective and size, MPICH's default,
the tuned selection file, the best measured configuration and the simulator's
choice; selection quality as seed 000 section V-E defines it (measured time of
the simulator-chosen configuration over the best measured one, among the
configurations the simulator chooses from), the rank correlation of predicted
and measured times, and the cost of generalization as seed 001 section VI-C-1
defines it (gencoll at the fixed radix against MPICH's own fixed-radix
algorithm, measured in the same run). Python standard library only.

usage: analyze.py --sweep SWEEP.csv [--tuned TUNED.csv] --picks PICKS.csv
                  --predicted SIM.csv --out DIR [--title TEXT] [--link-rate RATE]
                  [--apps APPS.csv]
       analyze.py --apps APPS.csv --out DIR     (the applications alone: DIR/apps.md)
  SWEEP.csv      gencoll-bench --sweep all (native, mpich:*, gencoll ALG:K)
  TUNED.csv      gencoll-bench --sweep native under the tuned selection file
                 (left out where a run was cut before it: the rest is scored,
                 the report says the tuned file was not measured)
  PICKS.csv      gencoll-tune's NAME-picks.csv
  SIM.csv        gencoll-tune's NAME.csv (every simulated point)
  --link-rate    one NIC's rate, in bytes per second or as tc writes it (1gbit,
                 100mbit, 125mbps): the summary is repeated over the
                 network-bound sizes, those whose time on the link (bytes /
                 rate) is at least 10x the collective's smallest-size latency
                 under MPICH's default, with the simulator's error there
  APPS.csv       benchmarks/app_proxy.c's rows (label default or tuned, one
                 job a row): per application the median time per step under
                 each and the speedup, the whole applications' view
Writes DIR/report.md, DIR/speedup.dat, DIR/speedup.gp and, with gnuplot,
DIR/speedup.png, and with --link-rate DIR/model-misses.csv (every gencoll
configuration at the network-bound sizes, farthest from its prediction
first: what main-job.sh --trace traces); prints the report.
"""
import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

COLLS = ["allgather", "allreduce", "bcast", "reduce"]
# Seed 001 VI-C-1: each generalized algorithm at its default radix against the
# fixed-radix MPICH algorithm it generalizes, logically the same schedule.
# "p" stands for the communicator size (k-ring with one group is the ring).
GENERALIZATION_PAIRS = {
    "allgather": [("recursive_multiplying:2", "mpich:recursive_doubling"), ("kring:p", "mpich:ring")],
    "allreduce": [("recursive_multiplying:2", "mpich:recursive_doubling"),
                  ("rabenseifner:2", "mpich:reduce_scatter_allgather")],
    "bcast": [("knomial:2", "mpich:binomial")],
    "reduce": [("knomial:2", "mpich:binomial"), ("rabenseifner:2", "mpich:reduce_scatter_gather")],
}
BASELINE_AS_MODULE = {"binomial": ("knomial", 2), "recursive_doubling": ("recursive_multiplying", 2),
                      "reduce_scatter_allgather": ("rabenseifner", 2), "reduce_scatter_gather": ("rabenseifner", 2)}


def die(msg):
    sys.exit("analyze.py: " + msg)


def read_csv(path, need):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    if not rows:
        die("%s: no rows" % path)
    missing = [c for c in need if c not in rows[0]]
    if missing:
        die("%s: missing column(s) %s" % (path, ", ".join(missing)))
    return rows


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def median(xs):
    s = sorted(xs)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def ranks(xs):
    """Average ranks (ties share the mean rank), as Spearman's rho needs."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va > 0 and vb > 0 else None


def rounds_rho(per_config):
    """How alike the sweep's rounds rank the configurations: Spearman's rho
    between each two rounds' medians, averaged over the pairs of rounds. The
    most a model's ranking can be expected to match, since the measurement
    does not repeat its own better. None without two rounds of every
    configuration."""
    if not per_config or any(r is None for r in per_config):
        return None
    n = min(len(r) for r in per_config)
    rhos = [spearman([r[i] for r in per_config], [r[j] for r in per_config])
            for i in range(n) for j in range(i + 1, n)]
    rhos = [x for x in rhos if x is not None]
    return sum(rhos) / len(rhos) if rhos else None


def module_name(alg, k):
    """The bench configuration a simulated (algorithm, effective radix) runs as;
    MPICH's node-aware compositions keep their "smp+" prefix (k: the leaders')."""
    smp = "smp+" if alg.startswith("smp+") else ""
    alg = alg[len(smp):]
    if alg in BASELINE_AS_MODULE:
        alg, k = BASELINE_AS_MODULE[alg]
    elif alg == "ring":
        alg = "kring"  # k: the effective radix, the ring's length (p, or the nodes under smp)
    return "%s%s:%d" % (smp, alg, max(2, int(k)))


def link_rate(text):
    """Bytes per second from a number of them or from a tc rate (SI prefixes)."""
    try:
        return float(text)
    except ValueError:
        pass
    m = re.fullmatch(r"([0-9.]+)([kmgt]?)(bit|bps)", text)
    if not m:
        raise argparse.ArgumentTypeError("%s: expected bytes per second or a tc rate such as 1gbit" % text)
    return float(m[1]) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m[2]] / (8 if m[3] == "bit" else 1)


def summarize(points, out):
    """The summary lines over POINTS (dicts made in main)."""
    quality = [pt["quality"] + (pt["coll"], pt["bytes"]) for pt in points if "quality" in pt]
    if quality:
        worst = min(quality)
        out("- selection quality: geometric mean %.3f, worst %.3f (%s, %d B: chose %s, best was %s), %d points"
            % (geomean([q[0] for q in quality]), worst[0], worst[3], worst[4], worst[1], worst[2], len(quality)))
    else:
        out("- selection quality: no point where the simulator's choice was measured")
    rhos = sorted(pt["rho"] for pt in points if "rho" in pt)
    if rhos:
        out("- rank correlation of predicted and measured times (Spearman, per collective and size): mean %.2f, "
            "median %.2f, worst %.2f over %d points" % (sum(rhos) / len(rhos), rhos[len(rhos) // 2], rhos[0], len(rhos)))
    own = sorted(pt["rounds_rho"] for pt in points if "rounds_rho" in pt)
    if own:
        out("- the same between the sweep's rounds (how well the measurement ranks alike twice): mean %.2f, "
            "median %.2f, worst %.2f over %d points" % (sum(own) / len(own), own[len(own) // 2], own[0], len(own)))
    speedups = [pt["speedup"] for pt in points if "speedup" in pt]
    if speedups:
        out("- tuned file vs MPICH default: geometric-mean speedup %.3fx (min %.2fx, max %.2fx) over %d points"
            % (geomean(speedups), min(speedups), max(speedups), len(speedups)))
    errs = [pt["error"] for pt in points if "error" in pt]
    if errs:
        within = sum(1 for e in errs if abs(e - 1) <= 0.15)
        out("- measured / predicted time of the chosen schedule: geometric mean %.3f, range %.2f..%.2f, "
            "%d of %d within 15%%" % (geomean(errs), min(errs), max(errs), within, len(errs)))


def targets(points, out):
    """Issue 14's targets at the network-bound sizes, each with its verdict."""
    def line(name, ok, got):
        out("- %s: %s (%s)" % (name, "met" if ok else "NOT met", got))
    out("")
    out("Targets at these sizes:")
    out("")
    q = [pt["quality"][0] for pt in points if "quality" in pt]
    if q:
        line("selection quality >= 0.97 geometric mean and >= 0.90 worst", geomean(q) >= 0.97 and min(q) >= 0.90,
             "%.3f, %.3f" % (geomean(q), min(q)))
    rhos = [pt for pt in points if "rho" in pt]
    if rhos:
        low = [pt for pt in rhos if pt["rho"] < 0.9]
        got = "%d of %d sizes below, worst %.2f" % (len(low), len(rhos), min(pt["rho"] for pt in rhos))
        # Where two rounds of the sweep rank below 0.9 themselves, the
        # measurement does not repeat its own order there (ties at a bound).
        known = [pt for pt in low if "rounds_rho" in pt]
        if known:
            got += "; at %d of those the rounds' own rho is below 0.9 too" % sum(
                1 for pt in known if pt["rounds_rho"] < 0.9)
        line("Spearman >= 0.9 at every size", not low, got)
    sp = [(pt["speedup"], pt["coll"], pt["bytes"]) for pt in points if "speedup" in pt]
    if sp:
        worst = min(sp)
        line("tuned file never more than 3% slower than MPICH's default", worst[0] >= 0.97,
             "worst %.2fx, %s %d B" % worst)
    errs = [pt["error"] for pt in points if "error" in pt]
    if errs:
        off = sum(1 for e in errs if abs(e - 1) > 0.15)
        line("predicted time of the chosen schedule within 15% of the measured", off == 0,
             "%d of %d outside" % (off, len(errs)))


APP_COLS = ["label", "app", "ranks", "bytes", "bucket", "rows", "compute_us", "steps", "round", "us_per_step"]


def applications(path, out):
    """The application proxies' section: median time per step of the jobs
    under MPICH's default and under the tuned file, and their ratio."""
    # (app, ranks, bytes, bucket, rows, compute) -> label -> us per step, one per job:
    # runs of other sizes or shapes are never pooled.
    runs = defaultdict(lambda: defaultdict(list))
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    for n, row in enumerate(rows, 1):
        try:
            if len(row) != len(APP_COLS):
                raise ValueError("%d fields" % len(row))
            r = dict(zip(APP_COLS, row))
            key = (r["app"], int(r["ranks"]), int(r["bytes"]), int(r["bucket"]), int(r["rows"]), int(r["compute_us"]))
            runs[key][r["label"]].append(float(r["us_per_step"]))
        except ValueError as e:
            die("%s, line %d: %s; expected %s" % (path, n, e, ",".join(APP_COLS)))
    out("")
    out("## Applications, unchanged (benchmarks/app_proxy.c; time per step, median of the jobs)")
    out("")
    out("| application | ranks | sizes | MPICH default (us) | tuned file (us) | speedup | jobs each |")
    out("|---|---:|---|---:|---:|---:|---:|")
    speedups = []
    for key in sorted(runs):
        app, p, nbytes, bucket, nrows, compute = key
        sizes = {"ddp": "%d B in %d B buckets" % (nbytes, bucket), "cg": "%d rows a rank" % nrows,
                 "master": "%d B" % nbytes}.get(app, "")
        sizes += ", %d us compute" % compute
        d, t = runs[key].get("default", []), runs[key].get("tuned", [])
        if not d or not t:
            out("| %s | %d | %s | %s | %s | - | %d / %d |" % (app, p, sizes, "%.1f" % median(d) if d else "-",
                                                             "%.1f" % median(t) if t else "-", len(d), len(t)))
            continue
        s = median(d) / median(t)
        speedups.append(s)
        out("| %s | %d | %s | %.1f | %.1f | %.2fx | %d |" % (app, p, sizes, median(d), median(t), s, min(len(d), len(t))))
    if speedups:
        out("")
        out("- applications: tuned file vs MPICH default, geometric mean %.3fx (%.2fx-%.2fx)"
            % (geomean(speedups), min(speedups), max(speedups)))


def main():
    ap = argparse.ArgumentParser(add_help=True)
    ap.add_argument("--out", required=True)
    for name in ("--sweep", "--picks", "--predicted"):
        ap.add_argument(name)
    ap.add_argument("--tuned")
    ap.add_argument("--title", default="")
    ap.add_argument("--link-rate", type=link_rate, default=0)
    ap.add_argument("--apps")
    a = ap.parse_args()
    if not (a.sweep and a.picks and a.predicted):
        if a.sweep or a.picks or a.predicted or not a.apps:
            die("give --sweep, --picks and --predicted (the main job's report), or --apps alone (its applications)")
        # The applications alone (a rerun of the main job's step 5): DIR/apps.md.
        lines = []
        applications(a.apps, lines.append)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "apps.md"), "w") as f:
            f.write("\n".join(lines[1:]) + "\n")
        print("\n".join(lines[1:]))
        return

    bench_cols = ["collective", "config", "bytes", "median_us", "ranks"]
    sweep = read_csv(a.sweep, bench_cols)
    tuned = read_csv(a.tuned, bench_cols) if a.tuned else []
    picks = read_csv(a.picks, ["collective", "p", "bytes", "algorithm", "k", "predicted_us"])
    sim = read_csv(a.predicted, ["ranks", "collective", "algorithm", "effective_radix", "size_bytes", "time_us"])
    p = int(sweep[0]["ranks"])

    measured = defaultdict(dict)  # (coll, bytes) -> config -> us
    rounds = defaultdict(dict)  # (coll, bytes) -> config -> each round's median (sweeps since 2026-11-28)
    for r in sweep:
        key = (r["collective"], int(r["bytes"]))
        measured[key][r["config"]] = float(r["median_us"])
        if r.get("round_medians_us"):
            rounds[key][r["config"]] = [float(x) for x in r["round_medians_us"].split(";")]
    tuned_us = {(r["collective"], int(r["bytes"])): float(r["median_us"]) for r in tuned if r["config"] == "native"}
    choice = {}
    for r in picks:
        if int(r["p"]) == p:
            choice[(r["collective"], int(r["bytes"]))] = "%s:%s" % (r["algorithm"], r["k"])
    predicted = defaultdict(dict)  # (coll, bytes) -> config -> predicted us (fastest of what maps to it)
    for r in sim:
        if int(r["ranks"]) != p or r.get("error"):
            continue
        key = (r["collective"], int(r["size_bytes"]))
        name = module_name(r["algorithm"], r["effective_radix"])
        t = float(r["time_us"])
        predicted[key][name] = min(t, predicted[key].get(name, t))

    lines = []
    out = lines.append
    if a.title:
        out("# " + a.title)
        out("")
    points = []  # one per collective and size: what the summaries are made of
    dat = defaultdict(list)
    for coll in COLLS:
        keys = sorted(k for k in measured if k[0] == coll)
        if not keys:
            continue
        out("## %s, %d ranks (median latency, us)" % (coll, p))
        out("")
        out("| bytes | MPICH default | tuned file | speedup | best measured | simulator's choice | its time | quality "
            "| rho | rounds' rho |")
        out("|---:|---:|---:|---:|---|---|---:|---:|---:|---:|")
        for key in keys:
            m = measured[key]
            gencoll = {c: t for c, t in m.items() if not c.startswith(("native", "mpich:"))}
            best_cfg = min(m, key=m.get)
            ch = choice.get(key)
            q = rho = err = None
            pt = {"coll": coll, "bytes": key[1]}
            if ch and ch in m and gencoll:
                q = min(gencoll.values()) / m[ch]  # <= 1: fraction of the best achievable
                pt["quality"] = (q, ch, min(gencoll, key=gencoll.get))
                if ch in predicted.get(key, {}):
                    err = m[ch] / predicted[key][ch]  # measured / predicted of the chosen schedule
                    pt["error"] = err
            common = [c for c in gencoll if c in predicted.get(key, {})]
            if len(common) >= 3:
                rho = spearman([predicted[key][c] for c in common], [gencoll[c] for c in common])
                if rho is not None:
                    pt["rho"] = rho
                own = rounds_rho([rounds[key].get(c) for c in common])
                if own is not None:
                    pt["rounds_rho"] = own
            d = m.get("native")
            t = tuned_us.get(key)
            s = d / t if d and t else None
            if s:
                pt["speedup"] = s
                dat[coll].append((key[1], s))
            points.append(pt)
            fmt = lambda x, f="%.2f": (f % x) if x is not None else "-"
            out("| %d | %s | %s | %s | %s (%.2f) | %s | %s | %s | %s | %s |" % (
                key[1], fmt(d), fmt(t), fmt(s, "%.2fx"), best_cfg, m[best_cfg], ch or "-",
                fmt(m.get(ch) if ch else None), fmt(q, "%.3f"), fmt(rho, "%.2f"), fmt(pt.get("rounds_rho"), "%.2f")))
        out("")

    out("## Generalization cost (gencoll at the fixed radix / MPICH's fixed-radix algorithm)")
    out("")
    out("| collective | gencoll | MPICH | geometric mean | worst (size) |")
    out("|---|---|---|---:|---:|")
    gen_all = []
    for coll in COLLS:
        for g, n in GENERALIZATION_PAIRS[coll]:
            g = g.replace(":p", ":%d" % max(2, p))
            ratios = [(m[g] / m[n], key[1]) for key, m in sorted(measured.items())
                      if key[0] == coll and g in m and n in m]
            if not ratios:
                continue
            gen_all += [r for r, _ in ratios]
            w = max(ratios)
            out("| %s | %s | %s | %.3fx | %.3fx (%d B) |" % (coll, g, n, geomean([r for r, _ in ratios]), w[0], w[1]))
    out("")

    out("## Summary")
    out("")
    if not a.tuned:
        out("- tuned file: not measured in this run")
    summarize(points, out)
    if gen_all:
        out("- generalization cost: geometric mean %.3fx, worst %.3fx over %d points"
            % (geomean(gen_all), max(gen_all), len(gen_all)))
    if a.link_rate > 0:
        small = {}
        for (coll, b), m in measured.items():
            if "native" in m and (coll not in small or b < small[coll][0]):
                small[coll] = (b, m["native"])
        bound = [pt for pt in points
                 if pt["coll"] in small and pt["bytes"] / a.link_rate * 1e6 >= 10 * small[pt["coll"]][1]]
        out("")
        out("## Network-bound sizes (time on a %.3g Gbit/s link >= 10x the smallest size's latency)" % (a.link_rate * 8e-9))
        out("")
        for coll in COLLS:
            bs = [pt["bytes"] for pt in bound if pt["coll"] == coll]
            if bs:
                out("- %s: %d B and up (%d sizes)" % (coll, min(bs), len(bs)))
        summarize(bound, out)
        targets(bound, out)
        # Where the model is off, by algorithm: a family whose measured times
        # stand above its predictions at every radix points at the model (or
        # the transport) rather than at one configuration.
        ratios = defaultdict(list)  # (coll, algorithm) -> measured / predicted
        for pt in bound:
            key = (pt["coll"], pt["bytes"])
            for c, t in measured[key].items():
                if not c.startswith(("native", "mpich:")) and c in predicted.get(key, {}):
                    ratios[(pt["coll"], c.split(":")[0])].append(t / predicted[key][c])
        misses = sorted(((pt["coll"], c, pt["bytes"], t, predicted[(pt["coll"], pt["bytes"])][c])
                         for pt in bound for c, t in measured[(pt["coll"], pt["bytes"])].items()
                         if not c.startswith(("native", "mpich:", "smp+"))
                         and c in predicted.get((pt["coll"], pt["bytes"]), {})),
                        key=lambda x: -abs(math.log(x[3] / x[4])))
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "model-misses.csv"), "w") as f:
            f.write("collective,config,bytes,measured_us,predicted_us,ratio\n")
            for coll, c, b, t, pr in misses:
                f.write("%s,%s,%d,%.6g,%.6g,%.4f\n" % (coll, c, b, t, pr, t / pr))
        if ratios:
            out("")
            out("Measured / predicted by algorithm at these sizes (every radix):")
            out("")
            out("| collective | algorithm | geometric mean | range | points |")
            out("|---|---|---:|---:|---:|")
            for (coll, alg), rs in sorted(ratios.items(), key=lambda kv: (COLLS.index(kv[0][0]), kv[0][1])):
                out("| %s | %s | %.2f | %.2f-%.2f | %d |" % (coll, alg, geomean(rs), min(rs), max(rs), len(rs)))
    if a.apps:
        applications(a.apps, out)
    report = "\n".join(lines) + "\n"

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(report)
    with open(os.path.join(a.out, "speedup.dat"), "w") as f:
        for coll in COLLS:
            if dat[coll]:
                f.write("# %s\n" % coll)
                for b, s in dat[coll]:
                    f.write("%d %.4f\n" % (b, s))
                f.write("\n\n")
    plotted = [c for c in COLLS if dat[c]]
    gp = os.path.join(a.out, "speedup.gp")
    with open(gp, "w") as f:
        f.write("set terminal pngcairo size 900,540 noenhanced\n")
        # Paths relative to the results directory, so that the directory can move.
        f.write("set output 'speedup.png'\n")
        f.write('set title "%s"\n' % (a.title or "measured speedup of the tuned selection over MPICH's default").replace('"', "'"))
        f.write("set logscale x 2\nset format x '%.0b%BB'\nset xlabel 'message size'\n")
        f.write("set ylabel 'speedup over MPICH default (MPICH time / tuned time)'\n")
        f.write("set grid\nset key outside right\nf(x)=1\n")
        series = ["'speedup.dat' index %d using 1:2 with linespoints title '%s'" % (i, c)
                  for i, c in enumerate(plotted)]
        f.write("plot " + ", ".join(series + ["f(x) with lines dt 2 lc rgb 'gray' title '1.0'"]) + "\n")
    if plotted and shutil.which("gnuplot"):
        subprocess.run(["gnuplot", "speedup.gp"], cwd=a.out, check=False)
    print(report, end="")


if __name__ == "__main__":
    main()
