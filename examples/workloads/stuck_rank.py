"""A job with one rank that stops for a while in the middle of its run: the hang that
`commlens record --prometheus` must raise its alarm on (scripts/device/stuck_rank.sh).

    commlens record -o DIR --prometheus commlens.prom -- \\
      torchrun --standalone --nproc_per_node 2 examples/workloads/stuck_rank.py --stall 15

Every rank all-reduces a 16 MiB tensor and waits for it, about 20 times a second, for
--steps-before steps; then rank --stuck-rank sleeps --stall seconds outside NCCL before
its next all-reduce, while the other ranks enter that all-reduce and wait inside it (the
host blocks in torch.cuda.synchronize); then every rank goes on for --steps-after steps.
Each rank prints the Unix time at which the stall began and ended.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stall", type=float, default=15.0, help="seconds the stuck rank sleeps")
    p.add_argument("--stuck-rank", type=int, default=1)
    p.add_argument("--steps-before", type=int, default=100)
    p.add_argument("--steps-after", type=int, default=100)
    a = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank = dist.get_rank()
    x = torch.ones(4 << 20, device="cuda")

    def step():
        dist.all_reduce(x)
        x.div_(dist.get_world_size())
        torch.cuda.synchronize()
        time.sleep(0.05)

    for _ in range(a.steps_before):
        step()
    print(f"rank {rank}: stall begins at {time.time():.3f}", flush=True)
    if rank == a.stuck_rank:
        time.sleep(a.stall)
    step()
    print(f"rank {rank}: stall ends at {time.time():.3f}", flush=True)
    for _ in range(a.steps_after):
        step()
    dist.destroy_process_group()
    print(f"rank {rank}: done", flush=True)


if __name__ == "__main__":
    main()
