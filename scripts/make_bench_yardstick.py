#!/usr/bin/env python3
"""Builds tests/bench/data/h200x4_yardstick.json: one commlens.bench document holding the
all_reduce and alltoall curves of 4 x H200 (NVLink), 4 MiB to 1 GiB, as measured by
`commlens bench` on 2026-11-21 (docs/perf-data/raw/bench-parity-small.tar.gz, runs small1-5,
and bench-parity-large-extras.tar.gz, runs large1-3). Each size's row is the run whose
out-of-place busbw is the median of the runs at that size, so every row is one real
measurement. The analyses hold the samples' transfer bandwidth against it
(tests/golden/bandwidth_golden_test.cc).

    scripts/make_bench_yardstick.py   # rewrites the file from the archives
"""
import json, os, statistics, tarfile, tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RAW = os.path.join(ROOT, "docs/perf-data/raw")
OUT = os.path.join(ROOT, "tests/bench/data/h200x4_yardstick.json")
RUNS = {"small": ["small1", "small2", "small3", "small4", "small5"], "large": ["large1", "large2", "large3"]}
ARCHIVES = {"small": "bench-parity-small.tar.gz", "large": "bench-parity-large-extras.tar.gz"}
MIN_BYTES = 4 << 20


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for archive in ARCHIVES.values():
            with tarfile.open(os.path.join(RAW, archive)) as t:
                t.extractall(tmp)
        doc = None
        collectives = []
        for name in ("all_reduce", "alltoall"):
            rows = {}  # size -> results rows of every run
            base = None
            for kind, runs in RUNS.items():
                for run in runs:
                    with open(os.path.join(tmp, "raw", f"commlens_{name}.{run}.json")) as f:
                        d = json.load(f)
                    doc = doc or d
                    c = d["collectives"][0]
                    base = base or c
                    for r in c["results"]:
                        if r["size_bytes"] >= MIN_BYTES:
                            rows.setdefault(r["size_bytes"], []).append(r)
            results = []
            for size in sorted(rows):
                runs = sorted(rows[size], key=lambda r: r["out_of_place"]["busbw_gbps"])
                results.append(runs[(len(runs) - 1) // 2])
            c = dict(base)
            c["results"] = results
            peak = max(results, key=lambda r: r["out_of_place"]["busbw_gbps"])
            busbw = [r["out_of_place"]["busbw_gbps"] for r in results]
            half = next(r for r in results if r["out_of_place"]["busbw_gbps"] >= peak["out_of_place"]["busbw_gbps"] / 2)
            c["summary"] = dict(c["summary"], peak_busbw_gbps=peak["out_of_place"]["busbw_gbps"],
                                peak_size=peak["size_bytes"], avg_busbw_gbps=statistics.mean(busbw),
                                half_peak_size=half["size_bytes"], small_size=results[0]["size_bytes"],
                                small_latency_us=results[0]["out_of_place"]["time_us"],
                                small_latency_p50_us=results[0]["out_of_place"]["p50_us"])
            collectives.append(c)
        doc = dict(doc)
        doc["collectives"] = collectives
        doc["args"] = dict(doc["args"], collectives=["all_reduce", "alltoall"], min_bytes=MIN_BYTES,
                           max_bytes=max(r["size_bytes"] for r in collectives[0]["results"]), json_path="")
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
