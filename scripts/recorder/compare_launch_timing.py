#!/usr/bin/env python3
"""How the launch timer's times of NCCL's kernels compare with CUPTI's (issue 28).

A rank file recorded with `commlens record --cupti` holds both: a LaunchTiming record
(CUDA events around each NCCL kernel launch) and the CUPTI tracer's record of the kernel.
Each timed launch is paired with the NCCL kernel on its stream (the StreamId records name
the stream's CUPTI id) that starts nearest its start event; prints, per file, how much
earlier the events start and how much later they end than CUPTI's kernel, in ns.

    scripts/recorder/compare_launch_timing.py DIR_OR_FILES...
"""
import os
import struct
import sys


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    header_size = struct.unpack_from("<I", data, 12)[0]
    pos = header_size
    while pos + 12 <= len(data):
        _crc, size, kind, _res = struct.unpack_from("<IIHH", data, pos)
        if pos + 12 + size > len(data):
            return
        yield kind, data[pos + 12:pos + 12 + size]
        pos += 12 + size


def compare(path):
    strings, launches, timings, kernels, stream_ids = {}, {}, [], [], {}
    for kind, p in records(path):
        if kind == 1:
            strings[struct.unpack_from("<I", p)[0]] = p[4:].decode("utf-8", "replace")
        elif kind == 7 and len(p) >= 88:
            api_id, _parent, _count, stream, host_start = struct.unpack_from("<QQQQq", p)
            if p[80] == 3:  # KernelLaunch
                launches[api_id] = (stream, host_start)
        elif kind == 22 and len(p) >= 32:
            timings.append(struct.unpack_from("<QqqI", p))
        elif kind == 16 and len(p) >= 56:
            start, end, _corr, _bytes, name, stream = struct.unpack_from("<qqQqII", p)
            if p[48] == 0:  # kernel
                kernels.append((start, end, name, stream))
        elif kind == 21 and len(p) >= 16:
            stream, cupti = struct.unpack_from("<QI", p)
            stream_ids[stream] = cupti
    nccl = {}
    for start, end, name, stream in kernels:
        if strings.get(name, "").startswith("nccl"):
            nccl.setdefault(stream, []).append((start, end))
    early, late, unpaired = [], [], 0
    for api_id, ev_start, ev_end, _err in timings:
        launch = launches.get(api_id)
        cupti = stream_ids.get(launch[0]) if launch else None
        candidates = nccl.get(cupti, []) if cupti is not None else [k for ks in nccl.values() for k in ks]
        best = min(candidates, key=lambda k: abs(k[0] - ev_start), default=None)
        if best is None or abs(best[0] - ev_start) > 200_000:
            unpaired += 1
            continue
        early.append(best[0] - ev_start)
        late.append(ev_end - best[1])

    def q(v, f):
        v = sorted(v)
        return v[min(len(v) - 1, int(f * len(v)))] if v else 0

    print(f"{os.path.basename(path)}: {len(early)} launches paired ({unpaired} not); events start before CUPTI's "
          f"kernel by {q(early, .5)} ns median ({q(early, .05)} .. {q(early, .95)}, 5-95 %), end after it by "
          f"{q(late, .5)} ns ({q(late, .05)} .. {q(late, .95)})")


def main():
    paths = []
    for a in sys.argv[1:]:
        if os.path.isdir(a):
            paths += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".cltrace") and ".rank" in f)
        else:
            paths.append(a)
    for p in paths:
        compare(p)


if __name__ == "__main__":
    main()
