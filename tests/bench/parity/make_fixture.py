#!/usr/bin/env python3
"""Writes synthetic raw outputs in the exact formats compare_parity.py reads: nccl-tests'
text table (its printf layout) and commlens.bench JSON. Used by the comparer's unit test
and by `scripts/device/bench.sh --dry-run` to exercise the pipeline without GPUs."""

import json
import os
import sys

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce",
               "sendrecv"]
FACTOR = {"all_reduce": 1.5, "all_gather": 0.75, "reduce_scatter": 0.75, "alltoall": 0.75}


def fit(value, width):
    for decimals in (2, 1, 0):
        s = f"{value:{width}.{decimals}f}"
        if len(s) <= width:
            return s
    return f"{value:{width}.1e}"


def rows(name, scale=1.0):
    """(size, count, time_us) over 8 B .. 64 MiB for 4 ranks, float."""
    out = []
    size = 8
    while size <= 64 << 20:
        count = size // 4
        if name in ("all_gather", "reduce_scatter", "alltoall"):
            count = (count // 4) // 4 * 4
            size_printed = count * 4 * 4
        else:
            size_printed = size
        time_us = (20.0 + size_printed / 300e3) * scale
        out.append((size_printed, count, time_us))
        size *= 2
    return out


def nccl_tests_text(name, rows_):
    f = FACTOR.get(name, 1.0)
    lines = ["# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809",
             f"# Collective test starting: {name}_perf", "#",
             "#       size         count      type   redop    root     time   algbw   busbw  "
             "#wrong     time   algbw   busbw  #wrong"]
    total = 0.0
    for size, count, t in rows_:
        alg = size / t / 1e3
        side = f"  {fit(t, 7)}  {fit(alg, 6)}  {fit(alg * f, 6)}  {0:6g}"
        ip_wrong = "    N/A" if name in ("alltoall", "sendrecv") else f"  {0:6g}"
        side_ip = f"  {fit(t, 7)}  {fit(alg, 6)}  {fit(alg * f, 6)}{ip_wrong}"
        lines.append(f"{size:12d}  {count:12d}  {'float':>8}  {'sum':>6}  {-1:6d}{side}{side_ip}")
        total += 2 * alg * f
    lines += ["# Out of bounds values : 0 OK",
              f"# Avg bus bandwidth    : {total / (2 * len(rows_)):g} ", "#",
              f"# Collective test concluded: {name}_perf"]
    return "\n".join(lines) + "\n"


def commlens_doc(names_rows, nprocs=1, launcher="local"):
    colls = []
    for name, rows_ in names_rows:
        f = FACTOR.get(name, 1.0)
        results = []
        for size, count, t in rows_:
            alg = size / t / 1e3
            p = lambda w: {"time_us": t, "algbw_gbps": alg, "busbw_gbps": alg * f, "wrong": w,
                           "p50_us": t * 0.99, "p99_us": t * 1.2, "min_us": t * 0.9,
                           "max_us": t * 1.2}
            ip_wrong = None if name in ("alltoall", "sendrecv") else 0
            results.append({"size_bytes": size, "count": count, "send_bytes": size,
                            "recv_bytes": size, "out_of_place": p(0), "in_place": p(ip_wrong)})
        colls.append({"name": name, "comm_op": name, "dtype": "float", "redop": "sum", "root": -1,
                      "busbw_factor": f, "results": results,
                      "summary": {"peak_busbw_gbps": 0, "peak_size": 0, "half_peak_size": 0,
                                  "small_latency_us": 0, "small_latency_p50_us": 0,
                                  "small_size": 8, "avg_busbw_gbps": 0, "wrong": 0}})
    gpus = [{"rank": r, "host": "fixture", "device": r, "name": "NVIDIA H200",
             "pci_bus_id": f"0000:{r:02x}:00.0", "memory_bytes": 150754820096,
             "compute_capability": "9.0"} for r in range(4)]
    return {"schema": "commlens.bench", "schema_version": 1,
            "tool": {"name": "commlens", "version": "0.1.0"},
            "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:01:00Z",
            "machine": {"hosts": ["fixture"], "launcher": launcher, "nprocs": nprocs,
                        "gpus_per_process": 4 // nprocs, "nranks": 4},
            "nccl": {"version": "2.28.9", "version_code": 22809},
            "cuda": {"runtime_version": 13000, "driver_version": 13000}, "gpus": gpus,
            "args": {"collectives": [n for n, _ in names_rows], "min_bytes": 8,
                     "max_bytes": 64 << 20, "step_factor": 2, "step_bytes": 1 << 20,
                     "gpus_per_process": 4 // nprocs, "dtype": "float", "op": "sum", "root": 0,
                     "iters": 20, "warmup": 5, "check": True, "graph": False, "timeout_s": 60.0,
                     "launcher": launcher, "port": 0, "json_path": "x.json"},
            "collectives": colls, "wrong_total": 0, "ok": True}


def write(folder, ours_scale=None):
    """Identical timings unless |ours_scale| maps a collective to a time scale factor."""
    os.makedirs(folder, exist_ok=True)
    ours_scale = ours_scale or {}
    for name in COLLECTIVES:
        with open(os.path.join(folder, f"nccl-tests_{name}.txt"), "w") as f:
            f.write(nccl_tests_text(name, rows(name)))
        with open(os.path.join(folder, f"commlens_{name}.json"), "w") as f:
            json.dump(commlens_doc([(name, rows(name, ours_scale.get(name, 1.0)))]), f)
    with open(os.path.join(folder, "commlens_mp_all_reduce.json"), "w") as f:
        json.dump(commlens_doc([("all_reduce", rows("all_reduce"))], 4, "env"), f)


if __name__ == "__main__":
    write(sys.argv[1])
