#!/usr/bin/env python3
"""Small real jobs that each show one cross-rank problem (issue 11, docs/analysis.md,
"Cross-rank"). One process per GPU; each rank writes a PyTorch profiler (Kineto) trace,
and the commlens NCCL profiler plugin can record the same run at once (it does not use
CUPTI, so it does not compete with the profiler):

  NCCL_PROFILER_PLUGIN=libnccl-profiler-commlens.so COMMLENS_OUT=out/slow/native \\
    torchrun --nproc_per_node 2 examples/workloads/cross_rank.py slow --out out/slow

Scenarios:
  pipeline    pipeline parallelism: one stage per rank, activations sent forward and
              gradients backward with send/recv, --microbatches per step, --schedule
              gpipe (all forwards, then all backwards) or 1f1b (one forward, one backward
              in the steady state). Ideal bubble (p-1)/(m+p-1).
  contention  two process groups over the same ranks: "ep" runs all-to-all, "dp" runs
              all-reduce; each step runs them alone (one group, then the other) and then
              at once (both groups' collectives in flight together, on their own streams).
  slow        data-parallel steps (forward, backward, one all-reduce per layer's
              gradients); --slow-rank runs longer before its all-reduces: --slow-kind
              compute (extra FFT kernels) or host (the host sleeps before launching the
              step: the GPU sits idle, as when data loading is slow).
  hang        the slow job, but at profiled step --stop-step rank --slow-rank never
              launches its all-reduces: it is stuck on the host (a range named
              "stuck_in_data_loader"). The others wait in the first of them until
              --hang-timeout, then abort the communicator (as PyTorch's watchdog does)
              and write their traces.

Each rank writes <out>/rank<R>.json.gz and <out>/rank<R>.steps.txt.
"""
import argparse
import gzip
import os
import shutil
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def new_group(ranks, desc):
    try:
        return dist.new_group(ranks=ranks, group_desc=desc)
    except TypeError:  # older PyTorch without group descriptions
        return dist.new_group(ranks=ranks)


class Profiler:
    """torch.profiler with wait/warmup/active steps, written as rank<R>.json.gz. Without
    it (--no-profile), each step is an NVTX range "step N" instead, as Megatron marks its
    iterations: what Nsight Systems and `commlens record --cupti` see as the steps."""

    def __init__(self, out, rank, active, enabled=True):
        self.path = os.path.join(out, f"rank{rank}.json")
        self.enabled = enabled
        self.total = 2 + active  # one wait step, one warm-up step
        self.prof = None
        self.nvtx_step = -1  # the open NVTX step range, without the profiler
        if enabled:
            acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            self.prof = torch.profiler.profile(
                activities=acts, schedule=torch.profiler.schedule(wait=1, warmup=1, active=active),
                on_trace_ready=lambda p: p.export_chrome_trace(self.path))

    def __enter__(self):
        if self.prof is not None:
            self.prof.start()
        else:
            self._next_nvtx_step()
        return self

    def _next_nvtx_step(self):  # closes the open step, opens the next unless that was the last
        if 0 <= self.nvtx_step < self.total:
            torch.cuda.nvtx.range_pop()
        self.nvtx_step += 1
        if self.nvtx_step < self.total:
            torch.cuda.nvtx.range_push(f"step {self.nvtx_step}")

    def step(self):
        if self.prof is not None:
            self.prof.step()
        else:
            self._next_nvtx_step()

    def __exit__(self, *exc):
        if self.prof is None:
            if 0 <= self.nvtx_step < self.total:
                torch.cuda.nvtx.range_pop()
            return False
        self.prof.stop()
        if os.path.exists(self.path):
            with open(self.path, "rb") as src, gzip.open(self.path + ".gz", "wb", 6) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(self.path)
        return False


def layers(n, dim, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    return [(torch.randn(dim, dim, device=device, generator=g, dtype=torch.bfloat16) / dim ** 0.5)
            .requires_grad_() for _ in range(n)]


def run_layers(ws, x):
    for w in ws:
        x = F.gelu(x @ w)
    return x


# ---------------------------------------------------------------- pipeline
def pipeline(args, rank, world, device, prof, step_times):
    """One stage per rank; activations go rank r -> r+1 on group "pp_fwd", gradients
    r+1 -> r on "pp_bwd" (two communicators, so a forward send never queues behind a
    backward one: no deadlock with plain blocking send/recv)."""
    fwd = new_group(list(range(world)), "pp_fwd")
    bwd = new_group(list(range(world)), "pp_bwd")
    ws = layers(args.layers, args.dim, device, 1000 + rank)
    m, first, last = args.microbatches, rank == 0, rank == world - 1
    shape = (args.tokens, args.dim)
    data = torch.randn(m, *shape, device=device, dtype=torch.bfloat16)

    def forward(i, acts):
        if first:
            x = data[i].clone().requires_grad_()
        else:
            x = torch.empty(shape, device=device, dtype=torch.bfloat16)
            dist.recv(x, rank - 1, group=fwd)
            x.requires_grad_()
        y = run_layers(ws, x)
        if not last:
            dist.send(y.detach().contiguous(), rank + 1, group=fwd)
        acts[i] = (x, y)

    def backward(i, acts):
        x, y = acts.pop(i)
        if last:
            grad = torch.ones_like(y) / y.numel()
        else:
            grad = torch.empty_like(y)
            dist.recv(grad, rank + 1, group=bwd)
        y.backward(grad)
        if not first:
            dist.send(x.grad.contiguous(), rank - 1, group=bwd)

    for _ in range(prof.total):
        t0 = time.perf_counter()
        acts = {}
        if args.schedule == "gpipe":
            for i in range(m):
                forward(i, acts)
            for i in range(m):
                backward(i, acts)
        else:  # 1F1B: warm-up forwards, then one forward and one backward, then cool-down
            warm = min(world - rank - 1, m)
            for i in range(warm):
                forward(i, acts)
            for i in range(m - warm):
                forward(warm + i, acts)
                backward(i, acts)
            for i in range(m - warm, m):
                backward(i, acts)
        for w in ws:
            w.grad = None
        torch.cuda.synchronize()
        step_times.append(time.perf_counter() - t0)
        prof.step()


# ---------------------------------------------------------------- contention
def contention(args, rank, world, device, prof, step_times):
    ep = new_group(list(range(world)), "ep")
    dp = new_group(list(range(world)), "dp")
    n = args.mbytes << 20
    a2a_in = torch.ones(n // 2, device=device, dtype=torch.bfloat16)
    a2a_out = torch.empty_like(a2a_in)
    grads = torch.ones(n // 4, device=device, dtype=torch.float32)
    ws = layers(2, args.dim, device, rank)
    x = torch.randn(args.tokens, args.dim, device=device, dtype=torch.bfloat16)
    k = args.repeats
    for _ in range(prof.total):
        t0 = time.perf_counter()
        run_layers(ws, x)  # some compute between the phases, as in a real step
        with torch.profiler.record_function("alone: ep all_to_all"):
            for _ in range(k):
                dist.all_to_all_single(a2a_out, a2a_in, group=ep)
            torch.cuda.synchronize()
        with torch.profiler.record_function("alone: dp all_reduce"):
            for _ in range(k):
                dist.all_reduce(grads, group=dp)
            torch.cuda.synchronize()
        run_layers(ws, x)
        with torch.profiler.record_function("overlapped: ep all_to_all + dp all_reduce"):
            works = []
            for _ in range(k):
                works.append(dist.all_to_all_single(a2a_out, a2a_in, group=ep, async_op=True))
                works.append(dist.all_reduce(grads, group=dp, async_op=True))
            for w in works:
                w.wait()
            torch.cuda.synchronize()
        grads.fill_(1.0)
        step_times.append(time.perf_counter() - t0)
        prof.step()


# ---------------------------------------------------------------- slow rank / hang
def data_parallel(args, rank, world, device, prof, step_times, hang):
    ws = layers(args.layers, args.dim, device, 7)  # the same weights everywhere
    x = torch.randn(args.tokens, args.dim, device=device, dtype=torch.bfloat16)
    extra = torch.randn(args.fft_batch, 1024, 1024, device=device, dtype=torch.complex64)
    slow_steps = []
    for step in range(prof.total):
        # --slow-blocks N: slow only in every other block of N steps (what-if checks
        # inside one run: the clean blocks measure what the slow ones would take).
        slow = rank == args.slow_rank and (args.slow_blocks == 0 or (step // args.slow_blocks) % 2 == 1)
        if slow:
            slow_steps.append(step)
        t0 = time.perf_counter()
        if slow and args.slow_kind == "host":
            with torch.profiler.record_function("slow_host_work"):
                time.sleep(args.slow_ms / 1000)
        y = run_layers(ws, x)
        if slow and args.slow_kind == "compute":
            with torch.profiler.record_function("slow_extra_fft"):
                for _ in range(args.fft_repeats):
                    extra = torch.fft.ifft2(torch.fft.fft2(extra))
        y.float().pow(2).mean().backward()
        profiled_step = step - 2
        if hang and profiled_step == args.stop_step:
            if slow:
                with torch.profiler.record_function("stuck_in_data_loader"):
                    time.sleep(args.hang_timeout + 2)
                print(f"rank {rank}: stuck before the all-reduces of profiled step {profiled_step}",
                      flush=True)
                return "stuck"
            works = [dist.all_reduce(w.grad, async_op=True) for w in ws]
            deadline = time.time() + args.hang_timeout
            while not works[0].is_completed() and time.time() < deadline:
                time.sleep(0.05)
            if not works[0].is_completed():
                print(f"rank {rank}: all-reduce still waiting after {args.hang_timeout} s; "
                      "aborting the communicator", flush=True)
                abort_default_group(device)
                return "aborted"
            return "completed"
        for w in ws:
            dist.all_reduce(w.grad)
            w.grad = None
        torch.cuda.synchronize()
        step_times.append(time.perf_counter() - t0)
        prof.step()
    if args.slow_blocks:
        with open(os.path.join(args.out, f"rank{rank}.slow_steps.txt"), "w") as f:
            f.write(" ".join(map(str, slow_steps)) + "\n")
    return "done"


def init_distributed(backend="nccl"):
    """One process per GPU under torchrun: its device, the backend initialised (NCCL, or
    gloo: the same CUDA tensors reduced through the host); (rank, world, device)."""
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    if backend == "nccl":
        dist.init_process_group("nccl", device_id=device)
    else:
        dist.init_process_group(backend)
    return dist.get_rank(), dist.get_world_size(), device


def abort_default_group(device):
    """Ends a collective that will never complete, as the watchdog does on a timeout."""
    pg = dist.distributed_c10d._get_default_group()
    for how in ("_abort_process_group", "backend"):
        try:
            if how == "_abort_process_group":
                dist.distributed_c10d._abort_process_group(pg)
            else:
                pg._get_backend(device).abort()
            return
        except Exception as e:  # noqa: BLE001 (which one exists depends on the version)
            print(f"abort via {how}: {e}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", choices=["pipeline", "contention", "slow", "hang"])
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=4, help="profiled steps")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--schedule", choices=["gpipe", "1f1b"], default="1f1b")
    p.add_argument("--mbytes", type=int, default=64, help="contention: MiB per collective")
    p.add_argument("--repeats", type=int, default=8, help="contention: collectives per phase")
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--slow-kind", choices=["compute", "host"], default="compute")
    p.add_argument("--slow-blocks", type=int, default=0,
                   help="slow: slow only in every other block of this many steps (0: always)")
    p.add_argument("--slow-ms", type=float, default=8.0, help="host: sleep per step")
    p.add_argument("--fft-batch", type=int, default=8)
    p.add_argument("--fft-repeats", type=int, default=8)
    p.add_argument("--stop-step", type=int, default=2, help="hang: profiled step it stops in")
    p.add_argument("--hang-timeout", type=float, default=3.0)
    p.add_argument("--backend", choices=["nccl", "gloo"], default="nccl",
                   help="gloo: a job without NCCL (what `commlens record --cupti` still traces)")
    args = p.parse_args()

    rank, world, device = init_distributed(args.backend)
    torch.manual_seed(1234 + rank)
    os.makedirs(args.out, exist_ok=True)
    step_times = []
    outcome = "done"
    with Profiler(args.out, rank, args.steps, not args.no_profile) as prof:
        if args.scenario == "pipeline":
            pipeline(args, rank, world, device, prof, step_times)
        elif args.scenario == "contention":
            contention(args, rank, world, device, prof, step_times)
        else:
            outcome = data_parallel(args, rank, world, device, prof, step_times,
                                    args.scenario == "hang")
    with open(os.path.join(args.out, f"rank{rank}.steps.txt"), "w") as f:
        f.write("\n".join(f"{t:.6f}" for t in step_times) + "\n")
    if outcome in ("stuck", "aborted"):
        time.sleep(1.5)  # past the plugin's flush interval: its trace is complete
        print(f"rank {rank}: {outcome}, exiting without finalizing NCCL", flush=True)
        os._exit(0)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0 and step_times:
        med = sorted(step_times)[len(step_times) // 2]
        print(f"{args.scenario}: {len(step_times)} steps, median {med * 1e3:.2f} ms, in {args.out}")


if __name__ == "__main__":
    main()
