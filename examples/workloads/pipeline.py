#!/usr/bin/env python3
"""Pipeline-parallel jobs as people run them (issue 30, docs/analysis.md "Pipelines"):
activations and gradients sent in batches (`dist.batch_isend_irecv`, one NCCL group per
batch), as Megatron-LM, NeMo and torchtitan send them. One process per GPU; each rank
writes a PyTorch profiler (Kineto) trace, and the commlens NCCL profiler plugin can
record the same run at once:

  NCCL_PROFILER_PLUGIN=libnccl-profiler-commlens.so COMMLENS_OUT=out/pp/native \\
    torchrun --nproc_per_node 4 examples/workloads/pipeline.py --schedule megatron --out out/pp

Schedules (--schedule):
  megatron         Megatron-LM's 1F1B loop written out: warm-up forwards, then each
                   forward's send batched with the receive of a backward
                   (send_forward_recv_backward / send_backward_recv_forward), cool-down.
  gpipe, 1f1b,     torch.distributed.pipelining's ScheduleGPipe, Schedule1F1B,
  interleaved,     ScheduleInterleaved1F1B and ScheduleInterleavedZeroBubble on
  zero-bubble      PipelineStage objects, as torchtitan runs them; the interleaved ones
                   with --stages-per-rank stages per rank (stage s on rank s mod p).

--dp D replicates the pipeline D times, laid out as Megatron does (the data-parallel
index varies fastest): with 4 ranks and D = 2, pipelines {0, 2} and {1, 3}, data-parallel
groups {0, 1} and {2, 3}; the gradients are all-reduced over the data-parallel group at
the end of each step. --heavy-last F gives the last stage F times the layers (an
unbalanced partition); with --heavy-blocks N only in every other block of N steps (steps
N..2N-1, 3N..4N-1, ... counted from the first step run), for what-if checks inside one
run. Each rank writes <out>/rank<R>.json.gz and <out>/rank<R>.steps.txt (one line per
step: seconds and 1 when the step ran heavy); rank 0 writes <out>/layout.txt.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from cross_rank import Profiler, init_distributed, new_group


class StageModule(torch.nn.Module):
    """A stage: GELU(x @ W) layers; --heavy-last adds layers to the last one."""

    def __init__(self, n_layers, dim, seed, device):
        super().__init__()
        g = torch.Generator(device=device).manual_seed(seed)
        self.ws = torch.nn.ParameterList([
            torch.nn.Parameter(torch.randn(dim, dim, device=device, generator=g, dtype=torch.bfloat16) / dim ** 0.5)
            for _ in range(n_layers)])
        self.active = n_layers

    def forward(self, x):
        for w in list(self.ws)[:self.active]:
            x = F.gelu(x @ w)
        return x


def heavy_now(args, step):
    if args.heavy_last == 1.0:
        return False
    return args.heavy_blocks == 0 or (step // args.heavy_blocks) % 2 == 1


def stage_module(args, stage, stages, device):
    last = stage == stages - 1
    base = args.layers
    n = int(round(base * args.heavy_last)) if last else base
    mod = StageModule(n, args.dim, 100 + stage, device)
    mod.base_layers = base
    return mod


def set_heavy(mods, on):
    for m in mods:
        m.active = len(m.ws) if on else m.base_layers


def loss_fn(out, target):
    return F.mse_loss(out.float(), target.float())


# ---------------------------------------------------------------- Megatron's 1F1B loop
class Batched:
    """Megatron's p2p_communication with batch_p2p_comm: the sends and receives of one
    exchange as one batch_isend_irecv (one NCCL group: one SendRecv kernel)."""

    def __init__(self, group, prev, nxt):
        self.group, self.prev, self.next = group, prev, nxt

    def __call__(self, send_prev=None, recv_prev=None, send_next=None, recv_next=None):
        ops = []
        if send_prev is not None:
            ops.append(dist.P2POp(dist.isend, send_prev, self.prev, self.group))
        if recv_prev is not None:
            ops.append(dist.P2POp(dist.irecv, recv_prev, self.prev, self.group))
        if send_next is not None:
            ops.append(dist.P2POp(dist.isend, send_next, self.next, self.group))
        if recv_next is not None:
            ops.append(dist.P2POp(dist.irecv, recv_next, self.next, self.group))
        if ops:
            for req in dist.batch_isend_irecv(ops):
                req.wait()


def megatron_step(args, mod, comm, stage, stages, shape, device, data):
    m, first, last = args.microbatches, stage == 0, stage == stages - 1
    empty = lambda: torch.empty(shape, device=device, dtype=torch.bfloat16)  # noqa: E731
    saved = []

    def recv_forward():
        if first:
            return None
        x = empty()
        comm(recv_prev=x)
        return x

    def forward(i, x):
        x = (data[i] if first else x).detach().requires_grad_(not first)
        y = mod(x)
        saved.append((x, y))
        return y

    def backward(grad):
        x, y = saved.pop(0)
        if last:
            loss_fn(y, torch.zeros_like(y)).backward()
        else:
            y.backward(grad)
        return None if first else x.grad

    warm = min(stages - stage - 1, m)
    for i in range(warm):
        y = forward(i, recv_forward())
        if not last:
            comm(send_next=y.detach())
    x = recv_forward() if m > warm else None
    for i in range(m - warm):
        y = forward(warm + i, x)
        grad = None
        if not last:  # send_forward_recv_backward
            grad = empty()
            comm(send_next=y.detach(), recv_next=grad)
        gx = backward(grad)
        if i == m - warm - 1:  # send_backward
            if not first:
                comm(send_prev=gx)
        elif not first:  # send_backward_recv_forward
            x = empty()
            comm(send_prev=gx, recv_prev=x)
        else:
            x = None
    for _ in range(warm):
        grad = empty()
        comm(recv_next=grad)  # recv_backward
        gx = backward(grad)
        if not first:
            comm(send_prev=gx)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--schedule", choices=["megatron", "gpipe", "1f1b", "interleaved", "zero-bubble"],
                   default="megatron")
    p.add_argument("--stages-per-rank", type=int, default=2, help="interleaved: stages per rank")
    p.add_argument("--dp", type=int, default=1, help="data-parallel replicas of the pipeline")
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--steps", type=int, default=4, help="profiled steps")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--layers", type=int, default=4, help="layers per stage")
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--tokens", type=int, default=2048, help="rows of a micro-batch")
    p.add_argument("--heavy-last", type=float, default=1.0)
    p.add_argument("--heavy-blocks", type=int, default=0)
    args = p.parse_args()

    rank, world, device = init_distributed()
    assert world % args.dp == 0, "--dp must divide the world size"
    pp, dp = world // args.dp, args.dp
    stage, replica = rank // dp, rank % dp
    # Every rank creates every group, in one order.
    pp_group = dp_group = None
    for d in range(dp):
        g = new_group([d + s * dp for s in range(pp)], "pipeline_parallel")
        if d == replica:
            pp_group = g
    if dp > 1:
        for s in range(pp):
            g = new_group([s * dp + d for d in range(dp)], "data_parallel")
            if s == stage:
                dp_group = g
    torch.manual_seed(1234 + rank)
    os.makedirs(args.out, exist_ok=True)
    m, shape = args.microbatches, (args.tokens, args.dim)
    v = args.stages_per_rank if args.schedule in ("interleaved", "zero-bubble") else 1
    stages = pp * v
    mods = [stage_module(args, stage + k * pp, stages, device) for k in range(v)]

    if args.schedule == "megatron":
        comm = Batched(pp_group, rank - dp, rank + dp)
        data = torch.randn(m, *shape, device=device, dtype=torch.bfloat16)

        def one_step():
            megatron_step(args, mods[0], comm, stage, pp, shape, device, data)
    else:
        from torch.distributed import pipelining as pl
        pstages = [pl.PipelineStage(mod, stage + k * pp, stages, device, group=pp_group)
                   for k, mod in enumerate(mods)]
        kind = {"gpipe": pl.ScheduleGPipe, "1f1b": pl.Schedule1F1B,
                "interleaved": pl.ScheduleInterleaved1F1B, "zero-bubble": pl.ScheduleInterleavedZeroBubble}
        sched_cls = kind[args.schedule]
        sched = sched_cls(pstages if v > 1 else pstages[0], n_microbatches=m, loss_fn=loss_fn)
        x = torch.randn(m * args.tokens, args.dim, device=device, dtype=torch.bfloat16)
        target = torch.zeros_like(x)

        def one_step():
            if stage == 0:
                sched.step(x)
            elif stage == pp - 1:
                sched.step(target=target, losses=[])
            else:
                sched.step()

    params = [w for mod in mods for w in mod.ws]
    step_rows = []
    with Profiler(args.out, rank, args.steps, not args.no_profile) as prof:
        for i in range(prof.total):
            heavy = heavy_now(args, i)
            set_heavy(mods, heavy)
            t0 = time.perf_counter()
            one_step()
            if dp_group is not None:  # the end-of-step gradient all-reduce
                for w in params:
                    if w.grad is not None:
                        dist.all_reduce(w.grad, group=dp_group)
            for w in params:
                w.grad = None
            torch.cuda.synchronize()
            step_rows.append(f"{time.perf_counter() - t0:.6f} {int(heavy)}")
            prof.step()
    with open(os.path.join(args.out, f"rank{rank}.steps.txt"), "w") as f:
        f.write("\n".join(step_rows) + "\n")
    if rank == 0:
        with open(os.path.join(args.out, "layout.txt"), "w") as f:
            f.write(f"schedule={args.schedule} pp={pp} dp={dp} virtual={v} microbatches={m} "
                    f"layers={args.layers} heavy_last={args.heavy_last} heavy_blocks={args.heavy_blocks} "
                    f"pipelines={[[d + s * dp for s in range(pp)] for d in range(dp)]}\n")
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        times = sorted(float(r.split()[0]) for r in step_rows)
        print(f"pipeline {args.schedule}: pp={pp} dp={dp} v={v} m={m}, {len(times)} steps, "
              f"median {times[len(times) // 2] * 1e3:.2f} ms, in {args.out}")


if __name__ == "__main__":
    main()
