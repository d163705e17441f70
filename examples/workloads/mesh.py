#!/usr/bin/env python3
"""A tensor-parallel x data-parallel mesh, as Megatron-LM lays one out: 4 ranks, TP = 2
(ranks {0,1} and {2,3}), DP = 2 (ranks {0,2} and {1,3}). Each rank writes a PyTorch
profiler (Kineto) trace; the commlens NCCL profiler plugin can record the same run at once:

  NCCL_PROFILER_PLUGIN=libnccl-profiler-commlens.so COMMLENS_OUT=out/mesh/native \\
    torchrun --nproc_per_node 4 examples/workloads/mesh.py --out out/mesh

Every layer is a Megatron MLP block split over the TP group: a column-parallel linear
(each rank holds half of the columns), GELU, a row-parallel linear whose partial sums
are all-reduced over the TP group in the forward; in the backward the input gradient of
the column-parallel linear is all-reduced over the TP group. So each layer runs one TP
all-reduce of the activations each way, every step, inside the node.

The DP all-reduce of the gradients is overlapped with the backward: as each parameter's
gradient is accumulated, its all-reduce over the DP group is launched asynchronously (as
DDP's buckets are), and the step waits for them all before the optimizer. The TP and DP
groups' collectives therefore run at once on the same NVLinks: the contention that
`commlens analyze` measures on transfers.

--heavy-rank R gives rank R's layers --heavy-factor times the compute (an extra matmul
chain), as an unbalanced shard would.

--coalesced runs the DP traffic as ZeRO/FSDP-style jobs do, in coalesced batches
(torch.distributed's coalescing manager: one NCCL group, one kernel per batch): before
the forward, each bucket of --bucket parameters all-gathers a shard per parameter over
the DP group (all_gather_into_tensor, coalesced); after the backward, each bucket's
gradients are all-reduced (coalesced) instead of one overlapped all-reduce per gradient.

Each rank writes <out>/rank<R>.json.gz.
"""
import argparse
import gzip
import os
import shutil

import torch
import torch.distributed as dist
import torch.nn.functional as F


def new_group(ranks, desc):
    try:
        return dist.new_group(ranks=ranks, group_desc=desc)
    except TypeError:  # older PyTorch without group descriptions
        return dist.new_group(ranks=ranks)


class AllReduceForward(torch.autograd.Function):
    """Row-parallel output: all-reduce the partial sums forward, pass the gradient back."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


class AllReduceBackward(torch.autograd.Function):
    """Column-parallel input: the identity forward, all-reduce the input gradient back."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class Block(torch.nn.Module):
    def __init__(self, dim, tp, extra, device):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(dim, 2 * dim // tp, device=device, dtype=torch.bfloat16) * 0.02)
        self.w2 = torch.nn.Parameter(torch.randn(2 * dim // tp, dim, device=device, dtype=torch.bfloat16) * 0.02)
        self.extra = extra  # matmuls of the extra compute an unbalanced shard runs

    def forward(self, x, tp_group):
        h = AllReduceBackward.apply(x, tp_group)
        h = F.gelu(h @ self.w1)
        for _ in range(self.extra):
            h = torch.tanh(h @ self.w2 @ self.w1)
        return AllReduceForward.apply(h @ self.w2, tp_group) + x


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--tp", type=int, default=2)
    p.add_argument("--steps", type=int, default=6, help="profiled steps (after one wait and two warm-up steps)")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--heavy-rank", type=int, default=-1)
    p.add_argument("--heavy-factor", type=int, default=1, help="extra matmul chains per layer on --heavy-rank")
    p.add_argument("--coalesced", action="store_true", help="DP traffic in coalesced batches (see above)")
    p.add_argument("--bucket", type=int, default=4, help="--coalesced: parameters per batch")
    a = p.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world % a.tp == 0, "the world size must be a multiple of --tp"
    dp = world // a.tp
    # Every rank creates every group (new_group is collective); each keeps its own two.
    tp_group = dp_group = None
    for d in range(dp):
        ranks = list(range(d * a.tp, (d + 1) * a.tp))
        g = new_group(ranks, "tp")
        if rank in ranks:
            tp_group = g
    for t in range(a.tp):
        ranks = list(range(t, world, a.tp))
        g = new_group(ranks, "dp")
        if rank in ranks:
            dp_group = g

    torch.manual_seed(1234 + rank // a.tp)  # the TP shards of one replica differ, replicas match
    extra = a.heavy_factor if rank == a.heavy_rank else 0
    blocks = torch.nn.ModuleList(Block(a.dim, a.tp, extra, device) for _ in range(a.layers))
    params = list(blocks.parameters())
    opt = torch.optim.SGD(params, lr=1e-3)
    pending = []

    def reduce_grad(p):  # launched as each gradient is complete: overlapped with the backward
        pending.append(dist.all_reduce(p.grad, group=dp_group, async_op=True))

    buckets = [params[i:i + a.bucket] for i in range(0, len(params), a.bucket)]
    # --coalesced: each parameter's DP shard (a 1/dp slice of its elements) and the full
    # buffer it is gathered into, as ZeRO-3/FSDP gather parameters before the forward.
    shards = [torch.ones(prm.numel() // dp, device=device, dtype=prm.dtype) for prm in params]
    gathered = [torch.empty(prm.numel() // dp * dp, device=device, dtype=prm.dtype) for prm in params] \
        if a.coalesced else []
    if not a.coalesced:
        for prm in params:
            prm.register_post_accumulate_grad_hook(reduce_grad)

    def coalesced(ops):  # one coalesced batch over the DP group: one NCCL group, one kernel
        with dist._coalescing_manager(group=dp_group, device=device, async_ops=True) as cm:
            for op in ops:
                op()
        cm.wait()

    def step():
        x = torch.randn(a.tokens, a.dim, device=device, dtype=torch.bfloat16)
        if a.coalesced:
            with torch.profiler.record_function("gather_params"):
                for b in range(len(buckets)):
                    lo = b * a.bucket
                    coalesced([lambda i=i: dist.all_gather_into_tensor(gathered[i], shards[i], group=dp_group)
                               for i in range(lo, lo + len(buckets[b]))])
        with torch.profiler.record_function("forward"):
            y = x
            for b in blocks:
                y = b(y, tp_group)
            loss = y.float().pow(2).mean()
        with torch.profiler.record_function("backward"):
            loss.backward()
        if a.coalesced:
            with torch.profiler.record_function("reduce_grads"):
                for bucket in buckets:
                    coalesced([lambda g=prm.grad: dist.all_reduce(g, group=dp_group) for prm in bucket])
        with torch.profiler.record_function("optimizer"):
            for w in pending:
                w.wait()
            pending.clear()
            opt.step()
            opt.zero_grad(set_to_none=True)

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"rank{rank}.json")
    prof = torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
        schedule=torch.profiler.schedule(wait=1, warmup=2, active=a.steps),
        on_trace_ready=lambda pr: pr.export_chrome_trace(path))
    with prof:
        for _ in range(3 + a.steps):
            step()
            prof.step()
    torch.cuda.synchronize()
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", 6) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
