#!/usr/bin/env python3
"""Checks what ddp_plugin_check.py produced (standard library only).

  ddp_plugin_compare.py OUT [--summary FILE]

OUT holds native/*.cltrace (the plugin's traces), kineto/rank<R>.json.gz (PyTorch
profiler traces of the same run), steps/rank<R>.tsv and meta/rank<R>.json. Per rank:

  count     every NCCL kernel in the Kineto trace is matched to one recorded op of the
            same collective (nearest GPU start after removing the median clock offset),
            and the recorder has no extra op inside the Kineto window;
  duration  median relative difference of the GPU durations of matched pairs (<= 5%);
  overhead  median step time recording on vs off, alternating in the same run (<= 1%);
  crash     the trace of the SIGKILLed process reads without an end record and holds
            every op of the Kineto window (flushed before the kill).

Prints one line per rank and check, then PASS/FAIL per check; exit status 1 on a FAIL.
"""
import argparse
import glob
import gzip
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from native_trace import NativeTrace  # noqa: E402

MATCH_TOLERANCE_NS = 300_000
SEARCH_NS = 50_000_000
WINDOW_MARGIN_NS = 20_000


def canonical_op(name):
    """'AllReduce', 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)' -> 'allreduce'."""
    for op in ("AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "AllToAll", "Broadcast",
               "SendRecv", "Send", "Recv", "Reduce", "Gather", "Scatter"):
        if op in name:
            return op.lower()
    return name.lower()


def kineto_nccl_kernels(path):
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    base = int(trace.get("baseTimeNanoseconds", 0))
    out = []
    for e in trace.get("traceEvents", []):
        if e.get("cat") != "kernel" or e.get("ph") != "X" or not e.get("name", "").startswith("nccl"):
            continue
        start = base + round(float(e["ts"]) * 1000)
        out.append({"op": canonical_op(e["name"]), "start": start, "dur": round(float(e["dur"]) * 1000),
                    "name": e["name"]})
    out.sort(key=lambda k: k["start"])
    return out


def nearest_index(starts, t):
    """Index of the value of the sorted list |starts| nearest to |t|."""
    lo, hi = 0, len(starts)
    while lo < hi:
        mid = (lo + hi) // 2
        if starts[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return min((i for i in (lo - 1, lo) if 0 <= i < len(starts)), key=lambda i: abs(starts[i] - t))


def pair_up(kernels, ops, starts, offset):
    """Greedy one-to-one pairs (kernel, op) of the same collective within the tolerance."""
    used, pairs = set(), []
    for k in kernels:
        t = k["start"] - offset
        i = nearest_index(starts, t)
        candidates = [j for j in range(max(0, i - 3), min(len(ops), i + 4))
                      if j not in used and ops[j]["op"] == k["op"] and abs(starts[j] - t) <= MATCH_TOLERANCE_NS]
        if candidates:
            j = min(candidates, key=lambda j: abs(starts[j] - t))
            used.add(j)
            pairs.append((k, ops[j]))
    return pairs


def match(kernels, ops):
    """Pairs Kineto kernels with recorded ops. Returns (pairs, offset, ops in window).

    The offset between the two clocks is searched, not assumed: every alignment of the
    first kernel with a recorded op of the same collective within SEARCH_NS is scored by
    how many kernels it pairs, and the best one is refined to the median difference of its
    pairs. A recorder clock conversion off by more than SEARCH_NS fails the check."""
    if not kernels or not ops:
        return [], 0, []
    starts = [o["start_ns"] for o in ops]
    k0 = kernels[0]
    candidates = [k0["start"] - o["start_ns"] for o in ops
                  if o["op"] == k0["op"] and abs(k0["start"] - o["start_ns"]) <= SEARCH_NS] or [0]
    best = max(candidates, key=lambda off: len(pair_up(kernels, ops, starts, off)))
    pairs = pair_up(kernels, ops, starts, best)
    offset = statistics.median(k["start"] - o["start_ns"] for k, o in pairs) if pairs else best
    pairs = pair_up(kernels, ops, starts, offset)
    lo = kernels[0]["start"] - offset - WINDOW_MARGIN_NS
    hi = max(k["start"] + k["dur"] for k in kernels) - offset + WINDOW_MARGIN_NS
    in_window = [o for o in ops if lo <= o["start_ns"] <= hi]
    return pairs, offset, in_window


def read_steps(path):
    rows = []
    with open(path) as f:
        next(f)
        for line in f:
            ph, on, s = line.split("\t")
            rows.append((ph, int(on), float(s)))
    return rows


def rank_of(path):
    m = re.search(r"rank(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else -1


def check_rank(out, native_path, lines):
    """Returns dict of per-check results for one rank."""
    trace = NativeTrace(native_path)
    summary = trace.summary()
    rank = summary["rank"]
    ops = [dict(o, op=canonical_op(o["func"])) for o in summary["ops"] if o["gpu_timed"]]
    res = {"rank": rank}
    kpath = os.path.join(out, "kineto", f"rank{rank}.json.gz")
    kernels = kineto_nccl_kernels(kpath) if os.path.exists(kpath) else []
    pairs, offset, in_window = match(kernels, ops)
    mismatched_ops = sum(1 for k, o in pairs if k["op"] != o["op"])
    res["count_ok"] = bool(kernels) and len(pairs) == len(kernels) == len(in_window) and mismatched_ops == 0
    rel = [(o["end_ns"] - o["start_ns"] - k["dur"]) / k["dur"] for k, o in pairs if k["dur"] > 0]
    res["dur_median_abs_rel"] = statistics.median(abs(r) for r in rel) if rel else float("nan")
    res["dur_median_rel"] = statistics.median(rel) if rel else float("nan")
    start_err = [abs(k["start"] - o["start_ns"]) for k, o in pairs]
    ops_by_kind = {}
    for k in kernels:
        ops_by_kind[k["op"]] = ops_by_kind.get(k["op"], 0) + 1
    lines.append(
        f"rank {rank}: kineto NCCL kernels {len(kernels)} {ops_by_kind}, recorded ops in window {len(in_window)}, "
        f"matched {len(pairs)} (op mismatches {mismatched_ops}); recorded total {len(summary['ops'])} "
        f"(GPU-timed {summary['gpu_timed_ops']}), dropped {summary['dropped']}, abi v{summary['abi_version']}")
    if pairs:
        kd = statistics.median(k["dur"] for k, _ in pairs) / 1e3
        nd = statistics.median(o["end_ns"] - o["start_ns"] for _, o in pairs) / 1e3
        lines.append(
            f"rank {rank}: duration median kineto {kd:.1f} us, recorder {nd:.1f} us; per-op relative difference "
            f"median {res['dur_median_rel'] * 100:+.2f}%, median |.| {res['dur_median_abs_rel'] * 100:.2f}%")
        lines.append(
            f"rank {rank}: start times vs CUPTI: median |difference| {statistics.median(start_err) / 1e3:.1f} us, "
            f"median offset {offset / 1e3:+.1f} us (recorder GPU clock offset {summary['clock_offset_ns']} ns from "
            f"{summary['clock_samples']} samples)")
    res["dropped"] = summary["dropped"]

    meta_path = os.path.join(out, "meta", f"rank{rank}.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    if meta.get("killed"):
        flushed = meta["flushed_before_ns"]
        late = [o for o in summary["ops"] if o["host_start_ns"] >= flushed]
        before = [o for o in summary["ops"] if o["host_start_ns"] < flushed]
        res["crash_ok"] = (not summary["ended"]) and summary["status"] in ("end", "truncated") and \
            len(pairs) == len(kernels) and len(before) > 0
        lines.append(
            f"rank {rank}: killed with SIGKILL: trace status '{summary['status']}', end record "
            f"{'present' if summary['ended'] else 'absent'}, {len(before)} ops before the last flush wait, "
            f"{len(late)} after it (a barrier and {meta['late_ops']} all-reduces, which the kill may lose)")

    steps_path = os.path.join(out, "steps", f"rank{rank}.tsv")
    if os.path.exists(steps_path):
        rows = read_steps(steps_path)
        on = [s for ph, r, s in rows if ph == "overhead" and r]
        off = [s for ph, r, s in rows if ph == "overhead" and not r]
        if on and off:
            m_on, m_off = statistics.median(on), statistics.median(off)
            res["overhead"] = m_on / m_off - 1
            lines.append(
                f"rank {rank}: step time median recording {m_on * 1e3:.3f} ms ({len(on)} steps), off "
                f"{m_off * 1e3:.3f} ms ({len(off)} steps): overhead {res['overhead'] * 100:+.2f}%")
    return res


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--summary", help="also write the report here")
    args = p.parse_args(argv)
    natives = sorted(glob.glob(os.path.join(args.out, "native", "*.cltrace")), key=rank_of)
    lines = []
    if not natives:
        lines.append(f"FAIL: no native traces in {args.out}/native")
    results = []
    for path in natives:
        try:
            results.append(check_rank(args.out, path, lines))
        except (OSError, ValueError, KeyError) as e:
            lines.append(f"FAIL: {path}: {e}")
            results.append({"rank": rank_of(path)})

    def verdict(name, ok, detail):
        lines.append(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
        return ok

    ok = bool(results)
    ok &= verdict("count", all(r.get("count_ok") for r in results),
                  "every Kineto NCCL kernel matched one recorded op of the same collective, none extra")
    durs = [r.get("dur_median_abs_rel", float("nan")) for r in results]
    ok &= verdict("duration", bool(durs) and all(d <= 0.05 for d in durs),
                  "median |relative duration difference| per rank " + ", ".join(f"{d * 100:.2f}%" for d in durs))
    ovh = [r["overhead"] for r in results if "overhead" in r]
    if ovh:
        ok &= verdict("overhead", statistics.median(ovh) <= 0.01,
                      "median step time recording vs off, per rank " + ", ".join(f"{o * 100:+.2f}%" for o in ovh))
    crash = [r["crash_ok"] for r in results if "crash_ok" in r]
    if crash:
        ok &= verdict("crash", all(crash), "SIGKILLed traces readable up to the last flush")
    ok &= verdict("drops", all(r.get("dropped", 1) == 0 for r in results), "no event dropped")
    text = "\n".join(lines)
    print(text)
    if args.summary:
        with open(args.summary, "w") as f:
            f.write(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
