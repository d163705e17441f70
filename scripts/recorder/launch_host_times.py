#!/usr/bin/env python3
"""How long NCCL's calls held the calling thread, from a recording's API records (issue 28).

For each native trace (.cltrace) given: the host time of each KernelLaunch event (NCCL's
kernel launch, with the launch timer's two CUDA event records around it when it times
launches), of each group (NCCL's group end launches its kernels: the whole call for an op
outside an explicit group) and of each collective or p2p API call (its enqueue),
as quantiles in microseconds. Run on two recordings of one job, with the launch timer and
without (`commlens record --launch-timing off`), it shows what the timer adds to each
launch on the launching thread, and whether that is a steady cost or a tail.

  launch_host_times.py FILE...
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "workloads"))
from native_trace import KERNEL_LAUNCH, NativeTrace  # noqa: E402

GROUP_API, COLL_API, P2P_API = 0, 1, 2  # ApiRecord.kind
QUANTILES = (0.1, 0.5, 0.9, 0.99, 0.999)


def quantiles(values):
    if not values:
        return "none"
    v = sorted(values)
    parts = [f"p{q * 100:g} {v[min(len(v) - 1, int(q * len(v)))] / 1e3:.1f}" for q in QUANTILES]
    return f"{len(v)}: " + ", ".join(parts) + f", max {v[-1] / 1e3:.1f}, mean {sum(v) / len(v) / 1e3:.2f}"


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv:
        t = NativeTrace(path)
        spans = {KERNEL_LAUNCH: [], GROUP_API: [], COLL_API: [], P2P_API: []}
        for a in t.apis:
            if a["kind"] in spans and a["host_stop_ns"] >= a["host_start_ns"] > 0:
                spans[a["kind"]].append(a["host_stop_ns"] - a["host_start_ns"])
        print(f"{os.path.basename(path)} ({t.status})")
        print(f"  kernel launch, us   {quantiles(spans[KERNEL_LAUNCH])}")
        print(f"  group, us           {quantiles(spans[GROUP_API])}")
        print(f"  collective call, us {quantiles(spans[COLL_API])}")
        if spans[P2P_API]:
            print(f"  p2p call, us        {quantiles(spans[P2P_API])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
