#!/usr/bin/env python3
"""Scores the simulator against a sweep alone (a main-job run cut short, with
no tuned-file run for analyze.py): per collective and size of at least
MIN_BYTES, the simulator's pick among the measured configurations, the
selection quality (best measured / measured time of the pick), Spearman's rank
correlation of predicted and measured times, and measured / predicted of the
pick; then their summary.

usage: score_sweep.py SWEEP_CSV PREDICTED_CSV [MIN_BYTES]
  SWEEP_CSV      a main job's sweep.csv (gencoll-bench --csv)
  PREDICTED_CSV  gencoll-tune's NAME.csv for the same profile and shape
  MIN_BYTES      smallest size scored (default 32768)
"""
import collections
import sys

from analyze import geomean, read_csv, spearman


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sweep, predicted = sys.argv[1], sys.argv[2]
    min_bytes = int(sys.argv[3]) if len(sys.argv) > 3 else 32768
    pred = {}
    for r in read_csv(predicted, ["collective", "algorithm", "radix", "size_bytes", "time_us"]):
        pred[(r["collective"], r["algorithm"], int(r["radix"]), int(r["size_bytes"]))] = float(r["time_us"])
    # MPICH's fixed-radix algorithms are simulated at their one radix.
    radix_of = {(c, a, b): k for (c, a, k, b) in pred}
    points = collections.defaultdict(dict)  # (collective, bytes) -> config -> (measured, predicted)
    for r in read_csv(sweep, ["collective", "config", "bytes", "median_us"]):
        c, cfg, b = r["collective"], r["config"], int(r["bytes"])
        if cfg == "native" or b < min_bytes:
            continue
        if cfg.startswith("mpich:"):
            alg = cfg[len("mpich:"):]
            key = (c, alg, radix_of.get((c, alg, b)), b)
        else:
            alg, k = cfg.split(":")
            key = (c, alg, int(k), b)
        if key in pred:
            points[(c, b)][cfg] = (float(r["median_us"]), pred[key])
    quality, rhos, ratio = [], [], []
    for (c, b), d in sorted(points.items()):
        pick = min(d, key=lambda x: d[x][1])
        measured, predicted_us = d[pick]
        q = min(m for m, _ in d.values()) / measured
        rho = spearman([m for m, _ in d.values()], [p for _, p in d.values()])
        quality.append(q)
        ratio.append(measured / predicted_us)
        if rho is not None:
            rhos.append(rho)
        print(f"{c:9s} {b:8d} pick {pick:34s} q {q:.3f} rho {rho if rho is not None else float('nan'):.2f} "
              f"meas/pred {measured / predicted_us:.2f}")
    if not quality:
        sys.exit(f"score_sweep.py: no configuration of {sweep} at {min_bytes} B or more has a prediction in {predicted}")
    print(f"quality gm {geomean(quality):.3f} worst {min(quality):.3f}; rho mean {sum(rhos) / len(rhos):.2f} "
          f"worst {min(rhos):.2f}; meas/pred gm {geomean(ratio):.2f}, "
          f"within 15% {sum(1 for x in ratio if abs(x - 1) <= 0.15)}/{len(ratio)}")


if __name__ == "__main__":
    main()
