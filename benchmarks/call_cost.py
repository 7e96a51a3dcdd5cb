#!/usr/bin/env python3
"""Instructions per collective call, from callgrind profiles of rank 0
(benchmarks/call_cost.sh). Timing a 0.4 us call on a shared 2-core VM varies
2x run to run; the instructions a call executes do not, so this table says
where a fixed cost goes and whether a change removed it.

usage: call_cost.py [--top N] [--entry PMPI|MPI] PROFILE...   (callgrind.out
files, one per configuration, each collected with --toggle-collect=PMPI_<Coll>,
or MPI_<Coll> with --entry MPI: the interposition library's entry points)

For each profile: instructions per call (the entry inclusive / its calls),
then the functions with the largest self cost per call, grouped by where they
live (the collective layer, the point-to-point transport, the rest)."""
import re
import subprocess
import sys

# Self cost by function name: what belongs to the collective layer (the
# selection, the algorithm, the schedule runner), what to the point-to-point
# layer and progress engine both configurations share.
COLLECTIVE = re.compile(r"gencoll|Gencoll|MPIR_(Allgather|Allreduce|Bcast|Reduce)|ompi_coll_|mca_coll_|"
                        r"coll_gencoll|^run$|^run_alone|^decide$|^served$|same_call|memo_entry|MPII_|MPIR_Csel|MPIC_")
# Waiting: the wait loops and the progress engines they spin (rank 0 runs
# under callgrind, so little of it is polling; most is receiving).
WAIT = re.compile(r"[Ww]ait|[Pp]rogress")


def annotate(path, *opts):
    return subprocess.run(["callgrind_annotate", *opts, path], check=True, capture_output=True,
                          text=True).stdout


def parse(path, top, prefix="PMPI"):
    # Calls of the profiled entry point: the toggle collects inside it only,
    # so its callers' lines carry the count.
    lines = annotate(path, "--tree=caller").splitlines()
    entry = None
    calls = 0
    for i, line in enumerate(lines):
        m = re.search(r"\*\s+\S*:(" + prefix + r"_\w+) \[", line)
        if not m:
            continue
        entry = m.group(1)
        # The caller lines sit just above the '*' line of the entry.
        for caller in reversed(lines[:i]):
            if "<" not in caller:
                break
            n = re.search(r"\((\d[\d,]*)x\)", caller)
            if n:
                calls += int(n.group(1).replace(",", ""))
        break
    if entry and calls == 0:
        # A caller that reaches the entry by a jump (the benchmark's call
        # made in tail position, as with the interposed MPI_<Coll>) leaves no
        # caller line: every call of the entry calls on (into gencoll or the
        # MPI), so the entry's busiest arc out counts its calls.
        out = re.compile(r"<\s+\S*:" + entry + r" \((\d[\d,]*)x\)")
        calls = max((int(n.group(1).replace(",", "")) for n in map(out.search, lines) if n), default=0)
    if not entry or calls == 0:
        raise SystemExit(f"call_cost.py: {path}: no calls of a {prefix}_ entry point (collected with --toggle-collect?)")
    flat = annotate(path)
    total = 0
    selfs = []
    section = False
    for line in flat.splitlines():
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
        if line.startswith("Ir") and "file:function" in line:
            section = True
            continue
        if section:
            if line.startswith("-- "):
                break
            m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S+)", line)
            if m:
                name = m.group(2).split(":", 1)[-1]
                selfs.append((int(m.group(1).replace(",", "")) / calls, name))
    wait = sum(c for c, n in selfs if WAIT.search(n))
    coll = sum(c for c, n in selfs if COLLECTIVE.search(n) and not WAIT.search(n))
    return entry, calls, total / calls, coll, wait, selfs[:top]


def main(argv):
    top = 12
    prefix = "PMPI"
    while argv[:1] in (["--top"], ["--entry"]):
        if argv[0] == "--top":
            top = int(argv[1])
        elif argv[1] in ("PMPI", "MPI"):
            prefix = argv[1]
        else:
            raise SystemExit(f"call_cost.py: --entry takes PMPI or MPI, not '{argv[1]}'")
        argv = argv[2:]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 1
    rows = []
    for path in argv:
        entry, calls, per_call, coll, wait, selfs = parse(path, top, prefix)
        rows.append((path, entry, per_call, coll, wait))
        print(f"## {path}: {entry}, {calls} calls, {per_call:.0f} instructions per call "
              f"({coll:.0f} in the collective layer, {wait:.0f} waiting)")
        for cost, name in selfs:
            group = "wait " if WAIT.search(name) else "coll " if COLLECTIVE.search(name) else "     "
            print(f"  {cost:8.1f}  {group}{name}")
        print()
    print("| entry | profile | instructions / call | collective layer | waiting | transport and the rest |")
    print("|---|---|---|---|---|---|")
    for path, entry, per_call, coll, wait in rows:
        name = path.rsplit("/", 1)[-1].removeprefix("callgrind.")
        print(f"| {entry} | {name} | {per_call:.0f} | {coll:.0f} | {wait:.0f} | {per_call - coll - wait:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
