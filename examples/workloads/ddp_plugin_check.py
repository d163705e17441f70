#!/usr/bin/env python3
"""DDP training that checks the commlens NCCL profiler plugin in one run.

Launch it with the plugin loaded (scripts/device/recorder.sh does):

  NCCL_PROFILER_PLUGIN=build-portable/src/recorder/nccl_profiler/libnccl-profiler-commlens.so \\
  COMMLENS_OUT=out/native COMMLENS_CONTROL=out/control COMMLENS_CONTROL_POLL_MS=5 \\
  COMMLENS_FLUSH_INTERVAL_MS=200 \\
  torchrun --standalone --nproc_per_node 4 examples/workloads/ddp_plugin_check.py --out out

Phases, on every rank:
  warmup    a few steps, recording.
  overhead  blocks of steps, recording on and off in the order on, off, off, on (so a
            linear drift cancels), switched through the plugin's control file; "off"
            clears NCCL's event mask, which is what NCCL does without a plugin. Each step
            is timed between two CUDA synchronizations.
  kineto    steps under the PyTorch profiler with recording on: <out>/kineto/rank<R>.json.gz
            holds the NCCL kernels the recorder must agree with.
  crash     wait past several flush intervals, run a few more all-reduces, then SIGKILL
            this process (--no-kill ends cleanly instead): the native trace must stay
            readable up to its last flush.

Writes <out>/steps/rank<R>.tsv (phase, recording, seconds) and <out>/meta/rank<R>.json
(phase boundaries in host realtime ns). Model: an MLP of --layers square Linear layers
under bf16 autocast; its gradients are all-reduced in --bucket-mb buckets.

--cpu runs the same phases on CPU with gloo and a tiny model: a smoke test of this
script on a machine without GPUs (NCCL and the plugin are not involved).
"""
import argparse
import gzip
import json
import os
import shutil
import signal
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Recorder:
    """Switches the plugin through its control file (one per job, written by rank 0)."""

    def __init__(self):
        self.path = os.environ.get("COMMLENS_CONTROL")
        poll_ms = float(os.environ.get("COMMLENS_CONTROL_POLL_MS", "20"))
        self.settle_s = max(4 * poll_ms / 1000.0, 0.02)

    @property
    def available(self):
        return bool(self.path)

    def set(self, on):
        if not self.path:
            return
        if dist.get_rank() == 0:
            with open(self.path, "w") as f:
                f.write("1" if on else "0")
        dist.barrier()
        time.sleep(self.settle_s)  # every rank's flusher polls the file in this time
        dist.barrier()


class Platform:
    """CUDA with NCCL, or (--cpu) CPU with gloo."""

    def __init__(self, cpu):
        self.cpu = cpu
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if cpu:
            self.device = torch.device("cpu")
            dist.init_process_group("gloo")
        else:
            torch.cuda.set_device(local_rank)
            self.device = torch.device("cuda", local_rank)
            dist.init_process_group("nccl", device_id=self.device)
        self.device_ids = None if cpu else [local_rank]
        self.activities = [torch.profiler.ProfilerActivity.CPU]
        if not cpu:
            self.activities.append(torch.profiler.ProfilerActivity.CUDA)

    def sync(self):
        if not self.cpu:
            torch.cuda.synchronize()

    def autocast(self):
        return torch.autocast("cpu" if self.cpu else "cuda", dtype=torch.bfloat16)

    def nccl_version(self):
        return "none" if self.cpu else ".".join(map(str, torch.cuda.nccl.version()))


def timed_step(platform, step):
    platform.sync()
    t0 = time.perf_counter()
    step()
    platform.sync()
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--tokens", type=int, default=8192, help="rows per batch")
    p.add_argument("--bucket-mb", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--blocks", type=int, default=20, help="overhead blocks (multiple of 4)")
    p.add_argument("--block-steps", type=int, default=5)
    p.add_argument("--profile-steps", type=int, default=5)
    p.add_argument("--late-ops", type=int, default=3, help="all-reduces after the last flush wait")
    p.add_argument("--no-kill", action="store_true")
    p.add_argument("--cpu", action="store_true", help="smoke test on CPU with gloo")
    args = p.parse_args()

    platform = Platform(args.cpu)
    device = platform.device
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234 + rank)
    for sub in ("steps", "meta", "kineto"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)

    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, args.dim), nn.GELU()]
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers).to(device), device_ids=platform.device_ids,
                                                bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(args.tokens, args.dim, device=device)
    target = torch.randn_like(x)

    def step():
        with platform.autocast():
            loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    recorder = Recorder()
    phases, rows = {}, []

    def phase(name, fn):
        start = time.time_ns()
        fn()
        phases[name] = [start, time.time_ns()]

    def warmup():
        for _ in range(args.warmup):
            rows.append(("warmup", 1, timed_step(platform, step)))

    def overhead():
        pattern = [True, False, False, True]
        for b in range(args.blocks):
            on = pattern[b % 4] if recorder.available else True
            recorder.set(on)
            for _ in range(args.block_steps):
                rows.append(("overhead", int(on), timed_step(platform, step)))
        recorder.set(True)

    def kineto():
        total = 2 + args.profile_steps
        trace = os.path.join(args.out, "kineto", f"rank{rank}.json")
        schedule = torch.profiler.schedule(wait=1, warmup=1, active=args.profile_steps, repeat=1)
        with torch.profiler.profile(activities=platform.activities, schedule=schedule,
                                    on_trace_ready=lambda prof: prof.export_chrome_trace(trace)) as prof:
            for _ in range(total):
                rows.append(("kineto", 1, timed_step(platform, step)))
                prof.step()
        with open(trace, "rb") as src, gzip.open(trace + ".gz", "wb", 6) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(trace)

    phase("warmup", warmup)
    phase("overhead", overhead)
    phase("kineto", kineto)

    with open(os.path.join(args.out, "steps", f"rank{rank}.tsv"), "w") as f:
        f.write("phase\trecording\tseconds\n")
        f.writelines(f"{ph}\t{on}\t{s:.9f}\n" for ph, on, s in rows)

    # Everything so far must reach the trace through periodic flushes alone.
    flush_s = float(os.environ.get("COMMLENS_FLUSH_INTERVAL_MS", "1000")) / 1000.0
    dist.barrier()
    time.sleep(3 * flush_s + 0.1)
    meta = {"rank": rank, "world_size": world, "phases": phases, "flushed_before_ns": time.time_ns(),
            "late_ops": args.late_ops, "killed": not args.no_kill, "control": recorder.available,
            "torch": torch.__version__, "nccl": platform.nccl_version(),
            "layers": args.layers, "dim": args.dim, "tokens": args.tokens, "bucket_mb": args.bucket_mb}
    with open(os.path.join(args.out, "meta", f"rank{rank}.json"), "w") as f:
        json.dump(meta, f)
    if rank == 0:
        on = sorted(s for ph, r, s in rows if ph == "overhead" and r)
        off = sorted(s for ph, r, s in rows if ph == "overhead" and not r)
        if on and off:
            print(f"rank 0: median step {on[len(on) // 2] * 1e3:.3f} ms recording, "
                  f"{off[len(off) // 2] * 1e3:.3f} ms off", flush=True)
    dist.barrier()  # every rank wrote its files before any rank dies
    small = torch.ones(1024, device=device)
    for _ in range(args.late_ops):
        dist.all_reduce(small)
    platform.sync()
    if args.no_kill:
        dist.destroy_process_group()
        return
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
