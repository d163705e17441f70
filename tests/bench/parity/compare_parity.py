#!/usr/bin/env python3
"""Compares `commlens bench` with nccl-tests, size by size (run by scripts/device/bench.sh).

Reads a folder of raw outputs:
  nccl-tests_<coll>.txt         nccl-tests' stdout (its text table)
  commlens_<coll>.json          `commlens bench <coll> --json` (schema commlens.bench v1)
  commlens_mp_all_reduce.json   optional: the multi-process run (env/TCP rendezvous)
  commlens_mpirun_all_reduce.json optional: the same under mpirun
  nccl-tests_graph_all_reduce.txt, commlens_graph_all_reduce.json   optional: CUDA graphs
  gpu_tests.txt                 optional: output of the bench GPU tests
and writes a markdown report. Repetitions are files named <stem>.<tag>.<ext> (for example
nccl-tests_all_gather.small3.txt; scripts/device/bench.sh runs the two tools interleaved,
in sweeps of different sizes and iteration counts). Each size is compared on the median
of the runs that cover it (--stat best takes each tool's best instead), and each tool's
spread over its runs, (max - min) / median of busbw, is shown beside it: the noise floor
the comparison is read against. Several raw folders (from separate calls) may be given.
Criteria (docs/bench.md): for every size >= 1 MiB, our busbw
within 2% of nccl-tests' (out-of-place and in-place); small-message latency (mean
out-of-place time over the non-empty sizes <= 1 KiB) no worse than nccl-tests' + 3%.

Python 3 standard library only. Exit status: 0 parity holds, 1 it does not, 2 inputs missing.
"""

import argparse
import glob
import json
import os
import random
import re
import statistics
import sys

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce",
               "sendrecv"]
BW_TOLERANCE = 0.02
BW_MIN_SIZE = 1 << 20
LATENCY_MAX_SIZE = 1024
LATENCY_TOLERANCE = 0.03
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_MIN_RUNS = 3


def bootstrap_ci(ours, theirs, seed):
    """95% bootstrap interval of (median(ours) / median(theirs) - 1) in %, resampling each
    tool's runs with replacement; None with fewer than BOOTSTRAP_MIN_RUNS runs a side."""
    if len(ours) < BOOTSTRAP_MIN_RUNS or len(theirs) < BOOTSTRAP_MIN_RUNS:
        return None
    rng = random.Random(seed)
    diffs = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        o = statistics.median(rng.choices(ours, k=len(ours)))
        t = statistics.median(rng.choices(theirs, k=len(theirs)))
        if t > 0:
            diffs.append((o / t - 1.0) * 100.0)
    diffs.sort()
    if not diffs:
        return None
    return diffs[int(0.025 * len(diffs))], diffs[int(0.975 * len(diffs)) - 1]


def _number(text):
    return None if text == "N/A" else float(text)


def parse_nccl_tests(text):
    """nccl-tests' table: {size: row}, plus the version line and the footer."""
    out = {"rows": {}, "version": None, "avg_busbw": None, "wrong": None}
    for line in text.splitlines():
        if line.startswith("# nccl-tests version"):
            out["version"] = line[2:].strip()
        elif line.startswith("# Avg bus bandwidth"):
            out["avg_busbw"] = float(line.split(":")[1].split()[0])
        elif line.startswith("# Out of bounds values"):
            out["wrong"] = int(line.split(":")[1].split()[0])
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        if len(f) < 13 or not f[0].isdigit():
            continue
        side = lambda i: {"time": float(f[i]), "algbw": float(f[i + 1]), "busbw": float(f[i + 2]),
                          "wrong": _number(f[i + 3]), "p50": None, "p99": None}
        out["rows"][int(f[0])] = {"size": int(f[0]), "count": int(f[1]), "oop": side(5),
                                  "ip": side(9)}
    return out


def parse_commlens(doc, name=None):
    """One collective of a commlens.bench JSON document, in parse_nccl_tests' shape."""
    if doc.get("schema") != "commlens.bench":
        raise ValueError("not a commlens.bench document")
    colls = doc["collectives"]
    coll = next((c for c in colls if name is None or c["name"] == name), None)
    if coll is None:
        raise ValueError(f"no collective {name} in the document")
    rows = {}
    for r in coll["results"]:
        side = lambda p: {"time": p["time_us"], "algbw": p["algbw_gbps"], "busbw": p["busbw_gbps"],
                          "wrong": p["wrong"], "p50": p["p50_us"], "p99": p["p99_us"]}
        rows[r["size_bytes"]] = {"size": r["size_bytes"], "count": r["count"],
                                 "oop": side(r["out_of_place"]), "ip": side(r["in_place"])}
    return {"rows": rows, "summary": coll["summary"], "doc": doc}


def diff_pct(ours, theirs):
    if theirs is None or ours is None or theirs == 0:
        return None
    return (ours - theirs) / theirs * 100.0


def fmt(v, digits=2):
    if v is None:
        return "-"
    return f"{v:.{digits}f}"


def fmt_pct(v):
    return "-" if v is None else f"{v:+.2f}%"


def fmt_spread(side):
    v = side.get("spread")
    return "-" if v is None else f"{v:.1f}%"


def small_latency(rows):
    times = [r["oop"]["time"] for s, r in sorted(rows.items()) if 0 < s <= LATENCY_MAX_SIZE
             and r["count"] > 0]
    return sum(times) / len(times) if times else None


def compare(name, theirs, ours):
    """Markdown section and summary of one collective."""
    lines = [f"### {name}", "",
             "| size (B) | nccl-tests busbw oop | ours | diff | spread n-t/ours "
             "| nccl-tests busbw ip | ours | diff | spread n-t/ours "
             "| nccl-tests time oop (us) | ours | ours p50 | ours p99 | #wrong n-t/ours |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    worst = {"oop": 0.0, "ip": 0.0}
    outside = []
    noise, resolved = [], []  # sizes outside 2%: the runs cannot tell the tools apart / can
    for size in sorted(set(theirs["rows"]) | set(ours["rows"])):
        t = theirs["rows"].get(size)
        o = ours["rows"].get(size)
        if t is None or o is None:
            lines.append(f"| {size} | missing in {'nccl-tests' if t is None else 'commlens'} "
                         "| | | | | | | | | | | | |")
            if size >= BW_MIN_SIZE:
                outside.append(size)
            continue
        cells = [str(size)]
        for side in ("oop", "ip"):
            d = diff_pct(o[side]["busbw"], t[side]["busbw"])
            mark = ""
            if size >= BW_MIN_SIZE and d is not None:
                worst[side] = max(worst[side], abs(d))
                if abs(d) > BW_TOLERANCE * 100:
                    mark = " **!**"
                    outside.append(size)
                    ci = bootstrap_ci(o[side].get("samples", []), t[side].get("samples", []),
                                      seed=size * 2 + (side == "ip"))
                    if ci is not None:
                        mark += f" (CI {ci[0]:+.1f}..{ci[1]:+.1f})"
                    (noise if ci is not None and ci[0] <= 0 <= ci[1] else resolved).append(
                        f"{size} {side}")
            cells += [fmt(t[side]["busbw"]), fmt(o[side]["busbw"]), fmt_pct(d) + mark,
                      f"{fmt_spread(t[side])}/{fmt_spread(o[side])}"]
        wrong = lambda v: "N/A" if v is None else str(int(v))
        cells += [fmt(t["oop"]["time"]), fmt(o["oop"]["time"]), fmt(o["oop"]["p50"]),
                  fmt(o["oop"]["p99"]),
                  f"{wrong(t['oop']['wrong'])}/{wrong(o['oop']['wrong'])}"]
        lines.append("| " + " | ".join(cells) + " |")
    lat_t, lat_o = small_latency(theirs["rows"]), small_latency(ours["rows"])
    lat_d = diff_pct(lat_o, lat_t)
    ours_wrong = sum((r[s]["wrong"] or 0) for r in ours["rows"].values() for s in ("oop", "ip"))
    summary = {
        "name": name,
        "sizes": sum(1 for s in ours["rows"] if s >= BW_MIN_SIZE),
        "worst_oop": worst["oop"], "worst_ip": worst["ip"],
        "bw_ok": not outside,
        "outside": len(outside), "noise": noise, "resolved": resolved,
        "lat_theirs": lat_t, "lat_ours": lat_o, "lat_diff": lat_d,
        "lat_ok": lat_d is not None and lat_d <= LATENCY_TOLERANCE * 100,
        "ours_wrong": ours_wrong, "theirs_wrong": theirs.get("wrong"),
    }
    lines.append("")
    return lines, summary


def summary_table(summaries):
    lines = ["| collective | sizes >= 1 MiB | max abs diff busbw oop | in-place | busbw within 2% "
             "| outside 2%: within noise / resolved "
             "| small-msg latency nccl-tests (us) | ours (us) | diff | latency no worse "
             "| #wrong ours |",
             "|---|---:|---:|---:|---|---|---:|---:|---:|---|---:|"]
    for s in summaries:
        lines.append(
            f"| {s['name']} | {s['sizes']} | {s['worst_oop']:.2f}% | {s['worst_ip']:.2f}% "
            f"| {'yes' if s['bw_ok'] else '**NO**'} "
            f"| {len(s['noise'])} / {len(s['resolved'])} "
            f"| {fmt(s['lat_theirs'])} | {fmt(s['lat_ours'])} "
            f"| {fmt_pct(s['lat_diff'])} | {'yes' if s['lat_ok'] else '**NO**'} "
            f"| {s['ours_wrong']} |")
    return lines


def find(raws, file):
    """The first of the raw folders' |file| that exists, else the first folder's path."""
    for raw in raws:
        if os.path.exists(os.path.join(raw, file)):
            return os.path.join(raw, file)
    return os.path.join(raws[0], file)


def multi_process_section(raws, reference):
    lines = []
    for label, file in (("4 processes, torchrun-style variables + TCP rendezvous",
                         "commlens_mp_all_reduce.json"),
                        ("4 processes under mpirun (env/TCP mode)",
                         "commlens_mpirun_all_reduce.json")):
        path = find(raws, file)
        if not os.path.exists(path):
            lines += [f"### all_reduce, {label}", "", "not run or no output (see raw logs)", ""]
            continue
        with open(path) as f:
            mp = parse_commlens(json.load(f), "all_reduce")
        machine = mp["doc"]["machine"]
        lines += [f"### all_reduce, {label}", "",
                  f"launcher {machine['launcher']}, {machine['nprocs']} processes x "
                  f"{machine['gpus_per_process']} GPU, {machine['nranks']} ranks", "",
                  "| size (B) | busbw oop multi-process | single process | diff | nccl-tests "
                  "| #wrong |", "|---:|---:|---:|---:|---:|---:|"]
        for size, r in sorted(mp["rows"].items()):
            single = reference.get("ours", {}).get("rows", {}).get(size)
            nt = reference.get("theirs", {}).get("rows", {}).get(size)
            sb = single["oop"]["busbw"] if single else None
            lines.append(f"| {size} | {fmt(r['oop']['busbw'])} | {fmt(sb)} "
                         f"| {fmt_pct(diff_pct(r['oop']['busbw'], sb))} "
                         f"| {fmt(nt['oop']['busbw'] if nt else None)} | {r['oop']['wrong']} |")
        lines.append("")
    return lines


def graph_section(raws):
    t_path = find(raws, "nccl-tests_graph_all_reduce.txt")
    o_path = find(raws, "commlens_graph_all_reduce.json")
    if not (os.path.exists(t_path) and os.path.exists(o_path)):
        return ["### all_reduce with CUDA graphs", "", "not run or no output", ""]
    with open(t_path) as f:
        theirs = parse_nccl_tests(f.read())
    with open(o_path) as f:
        ours = parse_commlens(json.load(f), "all_reduce")
    lines, s = compare("all_reduce with CUDA graphs (ours --graph, nccl-tests -G 1)", theirs, ours)
    return lines + [f"max abs busbw diff >= 1 MiB: oop {s['worst_oop']:.2f}%, "
                    f"ip {s['worst_ip']:.2f}%", ""]


def merge_runs(runs, stat="median"):
    """Merges repetitions of one tool: per size and side the median (or best) busbw over
    the runs that cover the size, with the run's time and percentiles, the spread
    ((max - min) / median busbw, in %) and the most wrong elements of any run."""
    merged = dict(runs[0])
    merged["rows"] = {}
    for size in set().union(*(r["rows"] for r in runs)):
        rows = [r["rows"][size] for r in runs if size in r["rows"]]
        out = {"size": size, "count": rows[0]["count"], "runs": len(rows)}
        for side in ("oop", "ip"):
            by_bw = sorted(rows, key=lambda r: r[side]["busbw"])
            pick = by_bw[-1] if stat == "best" else by_bw[(len(by_bw) - 1) // 2]
            chosen = dict(pick[side])
            bws = [r[side]["busbw"] for r in rows]
            if stat != "best" and len(bws) % 2 == 0:  # even count: the middle two's mean
                chosen["busbw"] = statistics.median(bws)
                chosen["time"] = statistics.median(r[side]["time"] for r in rows)
            mid = statistics.median(bws)
            chosen["spread"] = (max(bws) - min(bws)) / mid * 100.0 if len(bws) > 1 and mid \
                else None
            chosen["samples"] = bws
            wrongs = [r[side]["wrong"] for r in rows if r[side]["wrong"] is not None]
            chosen["wrong"] = max(wrongs) if wrongs else None
            out[side] = chosen
        merged["rows"][size] = out
    merged["repetitions"] = len(runs)
    return merged


def rep_paths(raws, stem, ext):
    """Every stem.ext and stem.<tag>.ext in the raw folders, in a stable order."""
    paths = []
    for raw in raws:
        single = os.path.join(raw, f"{stem}.{ext}")
        if os.path.exists(single):
            paths.append(single)
        tagged = glob.glob(os.path.join(glob.escape(raw), f"{glob.escape(stem)}.*.{ext}"))
        pattern = re.compile(re.escape(stem) + r"\.([A-Za-z]*\d+)\." + re.escape(ext) + "$")
        paths += sorted(p for p in tagged if pattern.search(os.path.basename(p)))
    return paths


def build_report(raws, stat="median"):
    if isinstance(raws, str):
        raws = [raws]
    sections, summaries, reference = [], [], {}
    version = None
    sweeps = {}
    missing = []
    machine = None
    for name in COLLECTIVES:
        t_paths = rep_paths(raws, f"nccl-tests_{name}", "txt")
        o_paths = rep_paths(raws, f"commlens_{name}", "json")
        if not t_paths or not o_paths:
            missing.append(name)
            sections += [f"### {name}", "", "missing output (see raw logs)", ""]
            continue
        theirs_runs = []
        for t_path in t_paths:
            with open(t_path) as f:
                theirs_runs.append(parse_nccl_tests(f.read()))
        theirs = merge_runs(theirs_runs, stat)
        try:
            ours_runs = []
            for o_path in o_paths:
                with open(o_path) as f:
                    ours_runs.append(parse_commlens(json.load(f), name))
            ours = merge_runs(ours_runs, stat)
        except (ValueError, KeyError, json.JSONDecodeError) as e:
            missing.append(name)
            sections += [f"### {name}", "", f"unreadable commlens output: {e}", ""]
            continue
        if machine is None:
            machine = ours["doc"]
            version = theirs["version"]
            sweeps = {}
            for run in ours_runs:
                a = run["doc"]["args"]
                key = (f"{a['min_bytes']}..{a['max_bytes']} x{a['step_factor']}, iters "
                       f"{a['iters']}, warmup {a['warmup']}, check {a['check']}")
                sweeps[key] = sweeps.get(key, 0) + 1
        lines, s = compare(name, theirs, ours)
        sections += lines
        summaries.append(s)
        if name == "all_reduce":
            reference = {"ours": ours, "theirs": theirs}

    out = ["# commlens bench vs nccl-tests 2.19.6", ""]
    if machine:
        gpus = machine["gpus"]
        out += [f"- machine: {', '.join(machine['machine']['hosts'])}, {len(gpus)} x "
                f"{gpus[0]['name'] if gpus else '?'}; NCCL {machine['nccl']['version']} "
                f"(commlens), {version or 'nccl-tests version line missing'}",
                "- sweeps (the same arguments for both tools; runs per tool and collective, "
                "the tools interleaved): "
                + "; ".join(f"sizes {k}: {n} run(s)" for k, n in sweeps.items()),
                f"- per size: the {'median' if stat != 'best' else 'best'} busbw of each "
                "tool's runs that cover the size; spread = (max - min) / median busbw over "
                "those runs",
                "- busbw diff = (ours - nccl-tests) / nccl-tests; criterion |diff| <= 2% for "
                "sizes >= 1 MiB; small-message latency = mean out-of-place time over non-empty "
                "sizes <= 1 KiB, criterion ours <= nccl-tests + 3%",
                f"- a diff outside 2% shows its 95% bootstrap interval (CI, {BOOTSTRAP_RESAMPLES} "
                "resamples of each tool's runs): *within noise* when the interval holds 0 (the "
                "runs cannot tell the tools apart), *resolved* when it does not", ""]
    out += ["## Summary", ""] + summary_table(summaries) + [""]
    bw_ok = all(s["bw_ok"] for s in summaries) and not missing
    lat_ok = all(s["lat_ok"] for s in summaries) and not missing
    out += [f"**busbw parity: {'PASS' if bw_ok else 'FAIL'}; small-message latency: "
            f"{'PASS' if lat_ok else 'FAIL'}; wrong elements (ours): "
            f"{sum(s['ours_wrong'] for s in summaries)}**"
            + (f"; missing: {', '.join(missing)}" if missing else ""), ""]
    resolved = [f"{s['name']} {r}" for s in summaries for r in s["resolved"]]
    noisy = sum(len(s["noise"]) for s in summaries)
    cases = sum(2 * s["sizes"] for s in summaries)
    out += [f"Of {cases} size x placement cases >= 1 MiB, {sum(s['outside'] for s in summaries)} "
            f"are outside 2%: {noisy} within the runs' noise, {len(resolved)} resolved"
            + (f" ({', '.join(resolved)})" if resolved else "") + ".", ""]
    out += ["## Per collective", ""] + sections
    out += ["## Multi-process", ""] + multi_process_section(raws, reference)
    out += ["## CUDA graph mode", ""] + graph_section(raws)
    gpu_tests = find(raws, "gpu_tests.txt")
    if os.path.exists(gpu_tests):
        with open(gpu_tests) as f:
            tail = [l for l in f.read().splitlines() if "PASSED" in l or "FAILED" in l
                    or "skipped" in l][-6:]
        out += ["## GPU tests (bench_gpu_test)", "", "```"] + tail + ["```", ""]
    status = 0 if bw_ok and lat_ok else 1
    if missing:
        status = 2
    return "\n".join(out) + "\n", status


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("raw", nargs="+", help="folder(s) with the raw outputs")
    p.add_argument("--stat", choices=["median", "best"], default="median",
                   help="per size, compare the median of the runs (default) or each tool's best")
    p.add_argument("--out", help="markdown file to write (default: stdout only)")
    args = p.parse_args(argv)
    report, status = build_report(args.raw, args.stat)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    sys.stdout.write(report)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
