#!/usr/bin/env python3
"""Holds commlens analyze against Holistic Trace Analysis (HTA) on the same traces.

For each trace directory it runs, in one process each and in the same run:
  - HTA's temporal breakdown and comm-comp overlap (TraceAnalysis with
    include_last_profiler_step=True), once as HTA ships (timestamps rounded to whole
    microseconds) and once with HTA_DISABLE_NS_ROUNDING=1 (nanosecond timestamps);
  - commlens analyze --json.
It prints the per-rank columns side by side, the largest difference, and the wall time
and peak memory of each tool (commlens: the median of --runs runs after an untimed one;
HTA: one run, 20+ s, whose own spread is far below the ratio's). It exits 1 when commlens and HTA (nanosecond mode) differ
by more than --tolerance percentage points in any column.

The peak memory is the largest resident set of the process tree's biggest process (GNU
time's %M; HTA forks one parser per rank, so its figure is one parser's). HTA is not
part of commlens: point --hta-src at a checkout of
github.com/facebookresearch/HolisticTraceAnalysis (its Python dependencies come from
Debian: python3-pandas python3-plotly python3-networkx python3-psutil).

  scripts/compare_hta.py --hta-src ~/src/HolisticTraceAnalysis examples/traces/ddp ...
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

COLUMNS = ["idle_pct", "compute_pct", "non_compute_pct", "overlap_pct"]

HTA_RUNNER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import logging
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
t0 = time.time()
a = TraceAnalysis(trace_dir=sys.argv[2], include_last_profiler_step=True)
tb = a.get_temporal_breakdown(visualize=False)
ov = a.get_comm_comp_overlap(visualize=False)
out = {}
for _, row in tb.iterrows():
    out[int(row["rank"])] = {"idle_pct": row["idle_time_pctg"], "compute_pct": row["compute_time_pctg"],
                            "non_compute_pct": row["non_compute_time_pctg"]}
for _, row in ov.iterrows():
    v = row["comp_comm_overlap_pctg"]
    out[int(row["rank"])]["overlap_pct"] = None if v != v else v
print(json.dumps({"ranks": out, "seconds": time.time() - t0}))
"""


def run_measured(cmd, env=None):
    """Runs |cmd| under GNU time; returns (stdout, wall seconds, peak RSS MiB)."""
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        t0 = time.time()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name] + cmd, env=env,
                              capture_output=True, text=True)
        wall = time.time() - t0
        if proc.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
        peak_kib = int(open(tf.name).read().split()[-1])
    return proc.stdout, wall, peak_kib / 1024.0


def hta(hta_src, trace_dir, python, ns_mode):
    env = dict(os.environ)
    if ns_mode:
        env["HTA_DISABLE_NS_ROUNDING"] = "1"
    else:
        env.pop("HTA_DISABLE_NS_ROUNDING", None)
    out, wall, rss = run_measured([python, "-c", HTA_RUNNER, hta_src, trace_dir], env)
    result = json.loads(out.strip().splitlines()[-1])
    return {int(k): v for k, v in result["ranks"].items()}, wall, rss


def commlens(binary, trace_dir, runs):
    """One untimed run (the files into the page cache, as HTA finds them after it), then
    |runs| timed ones: the median wall time and the largest peak."""
    walls, rss = [], 0.0
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        for i in range(runs + 1):
            _, wall, peak = run_measured([binary, "analyze", trace_dir, "--json", f.name, "--quiet"])
            if i > 0:
                walls.append(wall)
                rss = max(rss, peak)
        doc = json.load(open(f.name))
    walls.sort()
    return {r["rank"]: {c: r[c] for c in COLUMNS} for r in doc["ranks"]}, walls[len(walls) // 2], rss


def diff(a, b):
    if a is None or b is None:
        return 0.0 if a is None and b is None else math.inf
    return abs(a - b)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("traces", nargs="+", help="trace directories (one Kineto file per rank)")
    p.add_argument("--hta-src", required=True, help="HTA source checkout")
    p.add_argument("--commlens", default="build/src/cli/commlens")
    p.add_argument("--python", default="/usr/bin/python3", help="python with pandas (Debian's)")
    p.add_argument("--tolerance", type=float, default=0.5, help="percentage points")
    p.add_argument("--runs", type=int, default=5, help="timed commlens runs (the median is reported)")
    p.add_argument("--write-reference", metavar="FILE",
                   help="also write HTA's (ns) numbers as JSON {dir name: {rank: columns}}, "
                        "the form tests/golden/hta_reference.json holds")
    args = p.parse_args()
    reference = {}

    worst = 0.0
    for trace_dir in args.traces:
        ours, c_wall, c_rss = commlens(args.commlens, trace_dir, args.runs)
        ns, h_wall, h_rss = hta(args.hta_src, trace_dir, args.python, True)
        rounded, hr_wall, _ = hta(args.hta_src, trace_dir, args.python, False)
        reference[os.path.basename(os.path.normpath(trace_dir))] = {str(k): v for k, v in ns.items()}
        print(f"\n## {trace_dir}\n")
        print("| rank | column | commlens | HTA (ns) | HTA (default, us-rounded) | diff vs HTA ns |")
        print("|---|---|---|---|---|---|")
        for rank in sorted(ours):
            for c in COLUMNS:
                a, b, r = ours[rank].get(c), ns.get(rank, {}).get(c), rounded.get(rank, {}).get(c)
                d = diff(a, b)
                worst = max(worst, d)
                print(f"| {rank} | {c} | {a} | {b} | {r} | {d:.2f} |")
        print(f"\ncommlens: {c_wall:.3f} s wall (median of {args.runs}), {c_rss:.0f} MiB peak; "
              f"HTA (ns): {h_wall:.2f} s, {h_rss:.0f} MiB peak; HTA (default): {hr_wall:.2f} s; "
              f"speed-up {h_wall / c_wall:.1f}x")
    if args.write_reference:
        with open(args.write_reference, "w") as f:
            json.dump(reference, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"\nlargest difference vs HTA (ns timestamps): {worst:.2f} percentage points "
          f"(tolerance {args.tolerance})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
