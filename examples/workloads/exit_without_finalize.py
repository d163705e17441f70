"""A PyTorch job that exits the way many do: without destroy_process_group, while NCCL's
threads may still call into the profiler plugin. Run under the commlens NCCL profiler
plugin; its traces must be complete up to the exit (an end record written at exit) and
the process must exit 0 (no crash at exit).

    NCCL_PROFILER_PLUGIN=libnccl-profiler-commlens.so COMMLENS_OUT=traces/ \\
      torchrun --nproc_per_node N examples/workloads/exit_without_finalize.py --mode return

--mode return: return from main with collectives just finished (normal interpreter exit)
--mode inflight: sys.exit() while async all-reduces are still queued on the GPU
--mode finalize: destroy_process_group() first (the clean path, for comparison)
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["return", "inflight", "finalize"], default="return")
    p.add_argument("--iters", type=int, default=200)
    a = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    x = torch.ones(4 << 20, device="cuda")
    for _ in range(a.iters):
        dist.all_reduce(x)
        x.div_(dist.get_world_size())
    torch.cuda.synchronize()
    rank = dist.get_rank()
    if a.mode == "inflight":
        works = [dist.all_reduce(x, async_op=True) for _ in range(50)]
        print(f"rank {rank}: exiting with {len(works)} all-reduces queued", flush=True)
        sys.exit(0)
    if a.mode == "finalize":
        dist.destroy_process_group()
    print(f"rank {rank}: done ({a.mode})", flush=True)


if __name__ == "__main__":
    main()
