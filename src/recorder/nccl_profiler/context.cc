#include "recorder/nccl_profiler/context.h"

#include <algorithm>
#include <new>

#include "recorder/nccl_profiler/token.h"

namespace commlens::recorder {

Context::Context(uint32_t index, uint32_t file_id, const CommParams& params, int64_t init_ns)
    : index_(index),
      file_id_(file_id),
      hash_(params.hash),
      name_(params.name != nullptr ? params.name : ""),
      rank_(params.rank),
      nranks_(std::max(params.nranks, 0)),
      nnodes_(params.nnodes),
      abi_version_(params.abi_version),
      init_ns_(init_ns),
      last_progress_ns_(init_ns) {}

bool Context::Allocate(const RecorderConfig& cfg, uint32_t generation_base) {
  // A collective has one kernel-channel event per channel (up to 64), drained once per
  // flush, so that pool is larger than the others.
  const uint32_t n = cfg.buffer_events;
  const uint32_t kernel_slots = std::min<uint64_t>(uint64_t{n} * 8, kMaxPoolSlots);
  p2p_seq_.reset(new (std::nothrow) std::atomic<uint64_t>[2 * (static_cast<size_t>(nranks_) + 1)]());
  const uint32_t base = generation_base;
  return p2p_seq_ != nullptr && ops.Allocate(n, base) && apis.Allocate(n, base) &&
         kernels.Allocate(kernel_slots, base) && proxy_ops.Allocate(n, base) && proxy_steps.Allocate(n, base);
}

void Context::FreePools() {
  ops.Free();
  apis.Free();
  kernels.Free();
  proxy_ops.Free();
  proxy_steps.Free();
}

uint64_t Context::NextGenerationBase() const {
  return std::max({ops.GenerationsEnd(), apis.GenerationsEnd(), kernels.GenerationsEnd(), proxy_ops.GenerationsEnd(),
                   proxy_steps.GenerationsEnd()});
}

uint64_t Context::NextP2pSeq(int peer, bool send) {
  size_t pair = (peer >= 0 && peer < nranks_) ? static_cast<size_t>(peer) : static_cast<size_t>(nranks_);
  return p2p_seq_[2 * pair + (send ? 1 : 0)].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace commlens::recorder
