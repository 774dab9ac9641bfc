#!/usr/bin/env python3
"""Ratio tables for benches/README.md.

usage: benches/ratios.py TARGET_DIR [BASELINE ...]
       benches/ratios.py --interleaved OUTPUT ...

The first form reads criterion's results,
TARGET_DIR/criterion/<group>/<pool>/<threads>/<baseline>/estimates.json for
each baseline (default: "new"), takes the median over baselines of each
benchmark's median time, and prints, per group and thread count, jobs/s of
every pool and its ratio to each peer (> 1: the row is faster).

The second form reads saved outputs of `cargo bench --bench interleaved`
and prints each cell's median over them, with the range for this crate's
rows: the README's tables.
"""
import collections
import json
import pathlib
import re
import statistics
import sys

JOBS = {"trivial_1producer": 50_000, "trivial_2producers": 50_000, "work1us_1producer": 20_000}
PEERS = ["crossbeam_pool", "threadpool", "rusty_pool", "rayon", "mutex_binaryheap"]


def interleaved(paths):
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    groups, pools, header = [], [], None
    for path in paths:
        group = None
        for line in open(path):
            m = re.match(r"^((trivial|work)\S+, \d+ threads)", line)
            if m:
                group = m.group(1)
                if group not in groups:
                    groups.append(group)
            elif line.startswith("| pool"):
                header = [c.strip() for c in line.strip().strip("|").split("|")]
            elif line.startswith("| ") and group:
                row = [c.strip() for c in line.strip().strip("|").split("|")]
                if row[0] not in pools:
                    pools.append(row[0])
                for col, v in zip(header[1:], row[1:]):
                    cells[(group, row[0])][col].append(float(v))
    for group in groups:
        print(f"**{group}** (median over {len(paths)} runs; range for this crate)\n")
        print("| " + " | ".join(header) + " |")
        print("|---|" + "---:|" * (len(header) - 1))
        for pool in pools:
            out = []
            for col in header[1:]:
                xs = cells[(group, pool)][col]
                med = statistics.median(xs)
                if col.startswith("vs") and pool.startswith("this_crate"):
                    out.append(f"{med:.2f} ({min(xs):.2f}-{max(xs):.2f})")
                else:
                    out.append(f"{med:.2f}")
            print(f"| {pool} | " + " | ".join(out) + " |")
        print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--interleaved":
        return interleaved(sys.argv[2:])
    root = pathlib.Path(sys.argv[1]) / "criterion"
    baselines = sys.argv[2:] or ["new"]
    # group -> threads -> pool -> [median ns per iteration, one per baseline]
    found = {}
    for group in sorted(JOBS):
        for est in root.glob(f"{group}/*/*/*/estimates.json"):
            baseline, threads, pool = est.parent.name, est.parent.parent.name, est.parent.parent.parent.name
            if baseline not in baselines:
                continue
            ns = json.loads(est.read_text())["median"]["point_estimate"]
            found.setdefault(group, {}).setdefault(threads, {}).setdefault(pool, []).append(ns)
    for group, by_threads in found.items():
        for threads, pools in sorted(by_threads.items()):
            rate = {p: JOBS[group] / (statistics.median(v) / 1e9) for p, v in pools.items()}
            runs = min(len(v) for v in pools.values())
            print(f"\n{group}, {threads} (median of {runs} runs)")
            print("| pool | M jobs/s | " + " | ".join(f"vs {p}" for p in PEERS if p in rate) + " |")
            print("|---|---:|" + "---:|" * sum(p in rate for p in PEERS))
            for pool in sorted(rate, key=lambda p: (not p.startswith("this_crate"), p)):
                cells = [f"{rate[pool] / rate[p]:.2f}" for p in PEERS if p in rate]
                print(f"| {pool} | {rate[pool] / 1e6:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
