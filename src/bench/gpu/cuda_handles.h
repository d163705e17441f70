// Owners of the CUDA and NCCL objects the benchmark uses, one per GPU: each remembers
// its device and releases its handle with that device current. Move-only.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "common/status.h"

namespace commlens::bench::gpu {

// Makes |device| current for the life of the guard, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Owns one handle of |device|, released by |Release| (e.g. cudaStreamDestroy) with that
// device current.
template <typename Handle, auto Release>
class Owned {
 public:
  Owned() = default;
  Owned(int device, Handle h) : device_(device), h_(h) {}
  Owned(Owned&& o) noexcept : device_(o.device_), h_(std::exchange(o.h_, Handle{})) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      Reset();
      device_ = o.device_;
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Reset(); }

  Handle get() const { return h_; }
  int device() const { return device_; }
  explicit operator bool() const { return h_ != Handle{}; }
  // Gives up ownership without releasing (after ncclCommAbort, say).
  Handle release() { return std::exchange(h_, Handle{}); }
  void Reset() {
    if (h_ == Handle{}) return;
    DeviceGuard guard(device_);
    (void)Release(std::exchange(h_, Handle{}));
  }

 private:
  int device_ = -1;
  Handle h_{};
};

using NcclBuffer = Owned<void*, ncclMemFree>;
using DeviceMem = Owned<void*, cudaFree>;
using Stream = Owned<cudaStream_t, cudaStreamDestroy>;
using Event = Owned<cudaEvent_t, cudaEventDestroy>;
using GraphExec = Owned<cudaGraphExec_t, cudaGraphExecDestroy>;
using Comm = Owned<ncclComm_t, ncclCommDestroy>;

Result<NcclBuffer> AllocateNccl(int device, size_t bytes);
Result<DeviceMem> AllocateDevice(int device, size_t bytes);
// |data| copied into a new allocation (16 bytes when empty, so the pointer is valid).
Result<DeviceMem> CopyToDevice(int device, const void* data, size_t bytes);
template <typename T>
Result<DeviceMem> CopyToDevice(int device, const std::vector<T>& v) {
  return CopyToDevice(device, v.data(), v.size() * sizeof(T));
}
// |priority|: CUDA's stream priority (0 default; lower numbers run first).
Result<Stream> CreateStream(int device, int priority = 0);
Result<Event> CreateEvent(int device);

}  // namespace commlens::bench::gpu
