// The copy every GPU-initiated exchange kernel does: this CTA's contiguous share of
// |bytes|, in 16-byte vectors when both ends and the length allow it. Destinations may
// be a peer's memory (an NVLink load/store pointer): the stores go straight over the link.
#pragma once

#include <cstdint>

namespace commlens::bench::gpu {

// This CTA's contiguous share [begin, end) of |bytes|, cut at 16-byte boundaries.
struct Share {
  int64_t begin;
  int64_t end;
};

__device__ __forceinline__ Share ShareOf(int64_t bytes) {
  const int64_t units = (bytes + 15) / 16;
  const int64_t per_cta = (units + gridDim.x - 1) / gridDim.x;
  const int64_t begin = per_cta * blockIdx.x * 16;
  const int64_t end = begin + per_cta * 16 < bytes ? begin + per_cta * 16 : bytes;
  return {begin, end};
}

__device__ __forceinline__ void CopyShare(char* dst, const char* src, int64_t bytes) {
  const auto [begin, end] = ShareOf(bytes);
  if (begin >= end) return;
  const bool vector = ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) |
                        static_cast<uintptr_t>(end - begin)) & 15) == 0;
  if (vector) {
    const uint4* s = reinterpret_cast<const uint4*>(src + begin);
    uint4* d = reinterpret_cast<uint4*>(dst + begin);
    const int64_t n = (end - begin) / 16;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) d[i] = s[i];
  } else {
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) dst[i] = src[i];
  }
}

}  // namespace commlens::bench::gpu
