#!/usr/bin/env python3
"""Turns criterion's throughput results into the ratio table of README.md.

usage: benches/ratios.py TARGET_DIR [BASELINE ...]

Reads TARGET_DIR/criterion/<group>/<pool>/<threads>/<baseline>/estimates.json
for each baseline (default: "new"), takes the median over baselines of each
benchmark's median time, and prints, per group and thread count, jobs/s of
every pool and the ratio of this crate's pools to each peer (> 1: this
crate is faster).
"""
import json
import pathlib
import statistics
import sys

JOBS = {"trivial_1producer": 50_000, "trivial_2producers": 50_000, "work1us_1producer": 20_000}
PEERS = ["crossbeam_pool", "threadpool", "rusty_pool", "rayon", "mutex_binaryheap"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
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
