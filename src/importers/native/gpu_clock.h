// Converts NCCL's GPU timestamps (%globaltimer, ns) to the host clock of the trace
// (CLOCK_REALTIME ns).
//
// Method. NCCL's proxy thread reads each kernel channel's start and stop timestamps
// from the GPU and hands them to the plugin, which notes the host time of that moment.
// The GPU wrote the timestamp before the host read it, so for every sample
//     host_seen - gpu_timestamp = offset + delay,   delay >= 0,
// and each sample is an upper bound of offset = host clock - GPU clock. The smallest
// bound is the estimate; its error is the smallest delay among the samples (the proxy
// poll latency plus PCIe visibility, a microsecond or two when the proxy polls busily),
// and it is never early: converted GPU times are late by that much at most.
//
// The GPU clock may drift against the host clock over a long job, so bounds are kept
// per 10-second bucket of GPU time and a timestamp uses the smallest bound within one
// bucket of it; with no sample that near, the nearest bucket's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace commlens::importers::native {

class GpuClock {
 public:
  static constexpr int64_t kBucketNs = 10'000'000'000;

  void AddSample(uint64_t gpu_ns, int64_t offset_upper_bound);
  bool empty() const { return buckets_.empty(); }
  // host = gpu + OffsetAt(gpu). 0 when there are no samples.
  int64_t OffsetAt(uint64_t gpu_ns) const;
  // Wraps instead of overflowing on nonsense input.
  int64_t ToHost(uint64_t gpu_ns) const {
    return static_cast<int64_t>(gpu_ns + static_cast<uint64_t>(OffsetAt(gpu_ns)));
  }
  // The smallest and largest bucket estimates: their spread shows drift.
  int64_t min_offset() const;
  int64_t max_offset() const;
  size_t samples() const { return samples_; }

 private:
  std::map<int64_t, int64_t> buckets_;  // bucket -> smallest upper bound in it
  size_t samples_ = 0;
};

}  // namespace commlens::importers::native
