#!/usr/bin/env python3
"""Synthesizes large Kineto (PyTorch profiler) traces from the small real ones, for benchmarks.

  scripts/synth_traces.py SRC_DIR OUT_DIR [--repeat N | --target-mb MB] [--ranks R] [--gzip]
                          [--shift-us US]

Benchmark inputs this makes from examples/traces/{ddp,fsdp,moe} (4 x H200, 4 profiled steps):
  4 ranks x ~65 MB, like the large DDP traces:  synth_traces.py examples/traces/ddp OUT --target-mb 65
  one rank of 1 GB:                             ... --target-mb 1024 --ranks 1
  1024 ranks:                                   ... --repeat 1 --ranks 1024

The output is synthesized from real traces, not a real run: each rank file holds the
original events, then N-1 copies of its steady part (first ProfilerStep start to last
ProfilerStep end), each shifted by one period so it starts after the previous copy ends.
In the copies ProfilerStep#N continues counting, and ids that must stay unique
(correlation and flow ids, External id, Ev Idx, Record function id, Sequence number, Seq)
are offset. The period is the same on every rank (longest steady span + mean gap between
steps), so ranks keep their real relative timing; events after the last step (the final
sync, Record Window End) move to after the last copy. --ranks R cycles the sources
(rank r copies source r % count), rewrites rank, world_size and process group "0" to R
ranks and shifts rank r by (r * 7 % 13) * US microseconds. Numbers are decimal MB (1e6 B).
Memory is bounded by one input trace; the output is streamed event by event.
"""
import argparse
import gzip
import json
import math
import os
import re
import sys
import time

STEP = "ProfilerStep#"
ID_KEYS = ("External id", "Ev Idx", "Record function id", "Sequence number")
SEP = (",", ":")


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def source_files(src_dir):
    found = {}
    for name in os.listdir(src_dir):
        m = re.fullmatch(r"rank(\d+)\.json(\.gz)?", name)
        if m:
            found[int(m.group(1))] = os.path.join(src_dir, name)
    if not found:
        sys.exit(f"no rank<K>.json[.gz] in {src_dir}")
    return sorted(found.items())  # (K, path)


def ns(us):  # Kineto times are microseconds with 3 decimals: whole nanoseconds are exact
    return round(us * 1000)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_cpu_step(e):
    return (e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op")
            and str(e.get("name", "")).startswith(STEP))


def analyze(doc, sizes=False):
    """Splits one trace into pre/steady/post events and finds what copying needs."""
    ev = doc["traceEvents"]
    steps = sorted((ns(e["ts"]), ns(e["ts"] + e["dur"])) for e in ev if is_cpu_step(e))
    if not steps:
        sys.exit("no ProfilerStep# events: nothing to repeat")
    s0, s1 = steps[0][0], max(end for _, end in steps)
    gaps = [b[0] - a[1] for a, b in zip(steps, steps[1:])]
    in_span = [e for e in ev if e.get("ph") != "M" and s0 <= ns(e["ts"]) <= s1]
    corr = {e["args"]["correlation"] for e in in_span if "correlation" in e.get("args", {})}
    ext = {e["args"]["External id"] for e in in_span if "External id" in e.get("args", {})}

    def role(e):  # metadata and what precedes the first step are written once
        if e.get("ph") == "M" or "ts" not in e or ns(e["ts"]) < s0:
            return "pre"
        if ns(e["ts"]) <= s1:
            return "steady"
        a = e.get("args", {})  # GPU work still running after the last step, launched in it
        linked = (a.get("correlation") in corr or (e.get("cat") == "ac2g" and e.get("id") in corr)
                  or (e.get("cat") == "gpu_user_annotation" and a.get("External id") in ext))
        return "steady" if linked else "post"

    maxes = {k: -1 for k in ID_KEYS + ("correlation", "Seq", "flow")}
    for e in ev:
        for k, v in e.get("args", {}).items():
            if k in maxes and is_int(v):
                maxes[k] = max(maxes[k], v)
        if e.get("ph") in ("s", "f") and is_int(e.get("id")):
            maxes["flow"] = max(maxes["flow"], e["id"])
    # ac2g flow ids are correlation ids: one offset for both keeps them equal in the copies
    maxes["correlation"] = maxes["flow"] = max(maxes["correlation"], maxes["flow"])
    numbers = {e["name"] for e in ev if is_cpu_step(e)}
    info = {"roles": [role(e) for e in ev], "s0": s0, "span": s1 - s0, "gaps": gaps,
            "nsteps": len(numbers), "offsets": {k: v + 1 for k, v in maxes.items()}}
    if sizes:
        size = [len(json.dumps(e, separators=SEP)) + 1 for e in ev]
        info["bytes"] = sum(size)
        info["copy_bytes"] = sum(s for s, r in zip(size, info["roles"]) if r == "steady")
    return info


def transform(e, k, dt, ctx, extend=0):
    """Event e of copy k (0: the original), shifted by dt ns, with ids offset for copy k."""
    regroup = ctx["ranks"] is not None and e.get("args", {}).get("Process Group Name") == "0"
    extend = extend if e.get("cat") == "Trace" else 0  # the profiler's whole-window span
    if not (k or dt or extend or regroup):
        return e
    e = dict(e)
    if dt and "ts" in e:
        e["ts"] = (ns(e["ts"]) + dt) / 1000
    if extend and "dur" in e:
        e["dur"] = (ns(e["dur"]) + extend) / 1000
    offs = ctx["info"]["offsets"]
    if k:
        name = e.get("name")
        if isinstance(name, str) and name.startswith(STEP) and name[len(STEP):].isdigit():
            e["name"] = STEP + str(int(name[len(STEP):]) + k * ctx["info"]["nsteps"])
        if e.get("ph") in ("s", "f") and is_int(e.get("id")):
            e["id"] += k * offs["flow"]
    if "args" in e and (k or regroup):
        a = e["args"] = dict(e["args"])
        for key in ID_KEYS + ("correlation",):
            v = a.get(key)
            if is_int(v) and v >= (1 if key == "Record function id" else 0):
                a[key] = v + k * offs[key]
        if is_int(a.get("Seq")) and a["Seq"] >= 0:
            a["Seq"] += k * ctx["seq_offset"]  # same on all ranks: cross-rank matching holds
        if regroup:  # the default group now spans the R ranks; "Rank" is this rank
            new = {"Group size": ctx["ranks"], "Process Group Ranks": str(list(range(ctx["ranks"]))),
                   "Rank": ctx["rank"]}
            a.update((key, v) for key, v in new.items() if key in a)
    return e


def write_events(f, ev, ctx):
    """Writes the events one by one; returns (events, characters) written."""
    period, repeat, off, roles = ctx["period"], ctx["repeat"], ctx["offset"], ctx["info"]["roles"]
    last, n, size, buf = (repeat - 1) * period, 0, 0, []

    def put(e, flush=False):
        nonlocal n, size, buf
        if e is not None:
            buf.append(("," if n else "") + json.dumps(e, separators=SEP))
            n, size = n + 1, size + len(buf[-1])
        if flush or len(buf) >= 4096:  # a few big writes rather than one per event
            f.write("".join(buf))
            buf = []

    for e, r in zip(ev, roles):  # the original, minus what comes after its last step
        if r != "post":
            put(transform(e, 0, off, ctx, extend=last))
    for k in range(1, repeat):
        for e, r in zip(ev, roles):
            if r == "steady":
                put(transform(e, k, off + k * period, ctx))
    for e, r in zip(ev, roles):  # the final sync and window end, after the last copy
        if r == "post":
            put(transform(e, 0, off + last, ctx))
    put(None, flush=True)
    return n, size


def write_rank(path, doc, ctx):
    t0, size = time.time(), 2
    f = gzip.open(path, "wt", compresslevel=6) if path.endswith(".gz") else open(path, "w")
    f.write("{")
    for i, (key, value) in enumerate(doc.items()):
        head = ("," if i else "") + json.dumps(key) + ":"
        if key == "traceEvents":
            f.write(head + "[")
            n, chars = write_events(f, value, ctx)
            f.write("]")
            size += len(head) + 2 + chars
            continue
        if key == "distributedInfo" and ctx["ranks"] is not None and isinstance(value, dict):
            value = dict(value, rank=ctx["rank"], world_size=ctx["ranks"])
            if isinstance(value.get("pg_config"), list):
                value["pg_config"] = [
                    dict(g, pg_size=ctx["ranks"], ranks=list(range(ctx["ranks"])))
                    if isinstance(g, dict) and g.get("pg_name") == "0" else g
                    for g in value["pg_config"]]
        # Kineto writes these with spaces ("rank": 3); readers that find the rank with a
        # pattern (HTA's '"rank":\s+(\d+)') depend on it.
        text = head + " " + json.dumps(value)
        f.write(text)
        size += len(text)
    f.write("}")
    f.close()
    print(f"{path} {n} events {size / 1e6:.1f} MB ({time.time() - t0:.1f} s)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src_dir")
    p.add_argument("out_dir")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--repeat", type=int, default=None, help="N: original + N-1 copies")
    g.add_argument("--target-mb", type=float, help="pick N so each rank is >= MB (uncompressed)")
    p.add_argument("--ranks", type=int, help="write R ranks, cycling through the sources")
    p.add_argument("--gzip", action="store_true", help="write rank<K>.json.gz")
    p.add_argument("--shift-us", type=float, default=1.0, help="scale of the per-rank offset")
    args = p.parse_args()
    if (args.repeat is not None and args.repeat < 1) or (args.ranks is not None and args.ranks < 1):
        p.error("--repeat and --ranks must be >= 1")

    sources = source_files(args.src_dir)[:args.ranks]  # --ranks 1 needs only the first
    # Pass 1: a period and a repeat count common to all ranks, so steps and collectives line up.
    stats = [analyze(load(s), sizes=args.target_mb is not None) for _, s in sources]
    gaps = [g for st in stats for g in st["gaps"]]
    period = max(st["span"] for st in stats) + (round(sum(gaps) / len(gaps)) if gaps else 0)
    repeat = args.repeat or 1
    if args.target_mb is not None:
        want = args.target_mb * 1e6
        repeat = max(1 + math.ceil(max(0, want - st["bytes"]) / st["copy_bytes"]) for st in stats)
    if len({st["nsteps"] for st in stats}) > 1:
        print("warning: sources differ in their number of steps", file=sys.stderr)
    seq_offset = max(st["offsets"]["Seq"] for st in stats)
    del stats
    count = args.ranks or len(sources)
    print(f"{len(sources)} sources -> {count} ranks, repeat {repeat}, period {period / 1000:.3f} us",
          flush=True)

    os.makedirs(args.out_dir, exist_ok=True)
    ext = ".json.gz" if args.gzip else ".json"
    # Pass 2: one source in memory at a time, every output rank made from it.
    for si, (k, src) in enumerate(sources):
        doc = load(src)
        info = analyze(doc)
        for r in range(si, count, len(sources)) if args.ranks else [k]:
            ctx = {"info": info, "period": period, "repeat": repeat, "seq_offset": seq_offset,
                   "ranks": args.ranks, "rank": r,
                   "offset": round((r * 7 % 13) * args.shift_us * 1000) if args.ranks else 0}
            write_rank(os.path.join(args.out_dir, f"rank{r}{ext}"), doc, ctx)


if __name__ == "__main__":
    main()
