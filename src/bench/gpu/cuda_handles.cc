#include "bench/gpu/cuda_handles.h"

#include <fmt/format.h>

#include "bench/gpu/cuda_check.h"

namespace commlens::bench::gpu {

Status CudaStatus(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return OkStatus();
  return Error(fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(error),
                           cudaGetErrorString(error), call, file, line));
}

Status NcclStatus(ncclResult_t result, const char* call, const char* file, int line) {
  if (result == ncclSuccess) return OkStatus();
  const char* last = ncclGetLastError(nullptr);
  return Error(fmt::format("NCCL error '{}' in {} at {}:{}{}{}", ncclGetErrorString(result), call,
                           file, line, last && *last ? ": " : "", last ? last : ""));
}

DeviceGuard::DeviceGuard(int device) {
  cudaGetDevice(&previous_);
  cudaSetDevice(device);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Result<NcclBuffer> AllocateNccl(int device, size_t bytes) {
  DeviceGuard g(device);
  void* p = nullptr;
  COMMLENS_NCCL(ncclMemAlloc(&p, bytes));
  return NcclBuffer(device, p);
}

Result<DeviceMem> AllocateDevice(int device, size_t bytes) {
  DeviceGuard g(device);
  void* p = nullptr;
  COMMLENS_CUDA(cudaMalloc(&p, bytes));
  return DeviceMem(device, p);
}

Result<DeviceMem> CopyToDevice(int device, const void* data, size_t bytes) {
  COMMLENS_ASSIGN_OR_RETURN(DeviceMem mem, AllocateDevice(device, bytes > 0 ? bytes : 16));
  DeviceGuard g(device);
  if (bytes > 0) COMMLENS_CUDA(cudaMemcpy(mem.get(), data, bytes, cudaMemcpyHostToDevice));
  return mem;
}

Result<Stream> CreateStream(int device, int priority) {
  DeviceGuard g(device);
  cudaStream_t s = nullptr;
  COMMLENS_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  return Stream(device, s);
}

Result<Event> CreateEvent(int device) {
  DeviceGuard g(device);
  cudaEvent_t e = nullptr;
  COMMLENS_CUDA(cudaEventCreate(&e));
  return Event(device, e);
}

}  // namespace commlens::bench::gpu
