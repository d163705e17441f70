// Owners of the CUDA and NCCL objects the benchmark uses, one per GPU: each remembers
// its device and releases its handle with that device current. Move-only.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <utility>

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

template <typename Handle, void (*Release)(int device, Handle)>
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
    if (h_ != Handle{}) Release(device_, std::exchange(h_, Handle{}));
  }

 private:
  int device_ = -1;
  Handle h_{};
};

void ReleaseNcclMem(int device, void* p);
void ReleaseDeviceMem(int device, void* p);
void ReleaseStream(int device, cudaStream_t s);
void ReleaseEvent(int device, cudaEvent_t e);
void ReleaseGraphExec(int device, cudaGraphExec_t g);
void ReleaseComm(int device, ncclComm_t c);

using NcclBuffer = Owned<void*, ReleaseNcclMem>;     // ncclMemAlloc
using DeviceMem = Owned<void*, ReleaseDeviceMem>;    // cudaMalloc
using Stream = Owned<cudaStream_t, ReleaseStream>;
using Event = Owned<cudaEvent_t, ReleaseEvent>;
using GraphExec = Owned<cudaGraphExec_t, ReleaseGraphExec>;
using Comm = Owned<ncclComm_t, ReleaseComm>;         // ncclCommDestroy

Result<NcclBuffer> AllocateNccl(int device, size_t bytes);
Result<DeviceMem> AllocateDevice(int device, size_t bytes);
Result<Stream> CreateStream(int device);
Result<Event> CreateEvent(int device);

}  // namespace commlens::bench::gpu
