#!/usr/bin/env python3
"""Small real training jobs that write one PyTorch profiler (Kineto) trace per rank.

They produce the sample traces in examples/traces/ and the large benchmark traces:

  torchrun --nproc_per_node 4 examples/workloads/train.py --workload ddp  --out traces/ddp
  torchrun --nproc_per_node 4 examples/workloads/train.py --workload fsdp --out traces/fsdp
  torchrun --nproc_per_node 4 examples/workloads/train.py --workload moe  --out traces/moe
  # benchmark-size traces (about 65 MB of JSON per rank): 60 profiled steps
  torchrun --nproc_per_node 4 examples/workloads/train.py --workload ddp --layers 4 \
      --steps 60 --out traces/large

Workloads (all bf16 autocast, AdamW):
  ddp   transformer blocks under DistributedDataParallel: bucketed all-reduce overlapping
        the backward pass.
  fsdp  the same blocks sharded with FSDP2 (fully_shard): all-gather before each block,
        reduce-scatter of its gradients.
  moe   blocks whose MLP is a set of experts spread over an expert-parallel group "ep":
        tokens are routed with all_to_all (dispatch and combine, forward and backward);
        dense gradients are all-reduced in a data-parallel group "dp".

Each rank writes <out>/rank<R>.json.gz and <out>/rank<R>.steps.txt (wall time per step).
"""
import argparse
import gzip
import os
import shutil
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def new_group(ranks, desc):
    try:
        return dist.new_group(ranks=ranks, group_desc=desc)
    except TypeError:  # older PyTorch without group descriptions
        return dist.new_group(ranks=ranks)


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        return x + self.proj(a.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.attn = Attention(d, heads)
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)

    def forward(self, x):
        x = self.attn(x)
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class MoEBlock(nn.Module):
    """Attention, then top-1 routing to experts that live on the ranks of |ep_group|."""

    def __init__(self, d, heads, ffn, ep_group, experts_per_rank):
        super().__init__()
        self.attn = Attention(d, heads)
        self.ln = nn.LayerNorm(d)
        self.ep_group = ep_group
        self.ep_size = dist.get_world_size(ep_group)
        self.experts_per_rank = experts_per_rank
        self.router = nn.Linear(d, self.ep_size * experts_per_rank)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d))
            for _ in range(experts_per_rank))

    def forward(self, x):
        from torch.distributed.nn.functional import all_to_all_single
        x = self.attn(x)
        b, t, d = x.shape
        tokens = self.ln(x).reshape(b * t, d)
        expert = self.router(tokens).argmax(dim=-1)
        order = torch.argsort(expert)
        dest_rank = expert[order] // self.experts_per_rank
        send_counts = torch.bincount(dest_rank, minlength=self.ep_size)
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts, group=self.ep_group)
        send_splits, recv_splits = send_counts.tolist(), recv_counts.tolist()
        # dispatch: tokens travel to the rank that holds their expert
        recv = tokens.new_empty(sum(recv_splits), d)
        recv = all_to_all_single(recv, tokens[order], recv_splits, send_splits,
                                 group=self.ep_group)
        local_expert = torch.empty(sum(recv_splits), dtype=torch.long, device=x.device)
        local_expert_send = expert[order] % self.experts_per_rank
        dist.all_to_all_single(local_expert, local_expert_send, recv_splits, send_splits,
                               group=self.ep_group)
        out = torch.zeros_like(recv)
        for i, e in enumerate(self.experts):
            sel = (local_expert == i).nonzero(as_tuple=True)[0]
            out = out.index_add(0, sel, e(recv.index_select(0, sel)).to(out.dtype))
        # combine: results travel back to the tokens' ranks
        back = tokens.new_empty(tokens.shape[0], d)
        back = all_to_all_single(back, out, send_splits, recv_splits, group=self.ep_group)
        combined = torch.empty_like(back).index_copy(0, order, back)
        return x + combined.view(b, t, d)


def build(args, device):
    world = dist.get_world_size()
    if args.workload == "moe":
        ep = new_group(list(range(world)), "ep")
        dp = new_group(list(range(world)), "dp")
        blocks = [MoEBlock(args.dim, args.heads, args.ffn, ep, args.experts_per_rank)
                  for _ in range(args.layers)]
        model = nn.Sequential(*blocks).to(device)
        return model, dp
    model = nn.Sequential(*[Block(args.dim, args.heads, args.ffn)
                            for _ in range(args.layers)]).to(device)
    if args.workload == "ddp":
        local = device.index
        return nn.parallel.DistributedDataParallel(model, device_ids=[local]), None
    if args.workload == "fsdp":
        from torch.distributed.fsdp import fully_shard
        for block in model:
            fully_shard(block)
        fully_shard(model)
        return model, None
    raise SystemExit(f"unknown workload {args.workload}")


def allreduce_dense_grads(model, dp_group):
    """MoE: experts are per-rank; everything else is averaged over |dp_group|."""
    grads = [p.grad for n, p in model.named_parameters()
             if p.grad is not None and ".experts." not in n]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, group=dp_group)
    flat /= dist.get_world_size(dp_group)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", choices=["ddp", "fsdp", "moe"], default="ddp")
    p.add_argument("--out", required=True, help="folder for rank<R>.json.gz")
    p.add_argument("--steps", type=int, default=4, help="profiled steps")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--ffn", type=int, default=4096)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--experts-per-rank", type=int, default=2)
    p.add_argument("--record-shapes", action="store_true")
    p.add_argument("--no-profile", action="store_true", help="train without the profiler")
    p.add_argument("--control", help="with --no-profile: the commlens recorder's control file "
                   "(COMMLENS_CONTROL); rank 0 switches recording on and off every "
                   "--control-block steps, so one run measures the recorder's cost (A/B)")
    p.add_argument("--control-block", type=int, default=20)
    p.add_argument("--control-states", default="1,0",
                   help="the control file's states, one per block, in turn (1 on, 0 off, h host "
                   "times only, c count only): 1,0,h,0 measures the recorder with and without "
                   "GPU timing in one run")
    args = p.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)
    rank = dist.get_rank()
    torch.manual_seed(1234 + rank)
    os.makedirs(args.out, exist_ok=True)

    model, dp_group = build(args, device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(args.batch, args.seq, args.dim, device=device)
    target = torch.randn_like(x)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), target)
        loss.backward()
        if dp_group is not None:
            allreduce_dense_grads(model, dp_group)
        opt.step()
        opt.zero_grad(set_to_none=True)

    wait, warmup = 1, 2
    trace_path = os.path.join(args.out, f"rank{rank}.json")

    def on_trace_ready(prof):
        prof.export_chrome_trace(trace_path)

    step_times = []
    schedule = torch.profiler.schedule(wait=wait, warmup=warmup, active=args.steps, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    total = wait + warmup + args.steps
    recording = []  # per step, with --control: the control file's state
    states = args.control_states.split(",")
    if args.no_profile:
        # Each step in an NVTX range, as Megatron and most nsys users mark iterations: the
        # steps an Nsight Systems report of this run shows.
        for i in range(total):
            if args.control:
                state = states[(i // args.control_block) % len(states)]
                if rank == 0 and i % args.control_block == 0:
                    with open(args.control + ".tmp", "w") as f:
                        f.write(state)
                    os.replace(args.control + ".tmp", args.control)
                recording.append(state)
            t0 = time.perf_counter()
            with torch.cuda.nvtx.range(f"step {i}"):
                step()
                torch.cuda.synchronize()
            step_times.append(time.perf_counter() - t0)
    else:
        with torch.profiler.profile(activities=activities, schedule=schedule,
                                    on_trace_ready=on_trace_ready,
                                    record_shapes=args.record_shapes) as prof:
            for _ in range(total):
                t0 = time.perf_counter()
                step()
                torch.cuda.synchronize()
                step_times.append(time.perf_counter() - t0)
                prof.step()
        with open(trace_path, "rb") as src, gzip.open(trace_path + ".gz", "wb", 6) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(trace_path)
    with open(os.path.join(args.out, f"rank{rank}.steps.txt"), "w") as f:
        if recording:  # step time, then the control file's state: 1 (recorder on), 0 (off), h, c
            f.write("\n".join(f"{t:.6f} {state}" for t, state in zip(step_times, recording)) + "\n")
        else:
            f.write("\n".join(f"{t:.6f}" for t in step_times) + "\n")
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(f"{args.workload}: {total} steps, median step "
              f"{sorted(step_times)[len(step_times) // 2] * 1e3:.2f} ms, traces in {args.out}")


if __name__ == "__main__":
    main()
