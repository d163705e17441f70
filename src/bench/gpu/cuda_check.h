// CUDA and NCCL results as Status, with the call and its place in the message.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include "common/status.h"

namespace commlens::bench::gpu {

Status CudaStatus(cudaError_t error, const char* call, const char* file, int line);
Status NcclStatus(ncclResult_t result, const char* call, const char* file, int line);

}  // namespace commlens::bench::gpu

#define COMMLENS_CUDA(call) \
  COMMLENS_RETURN_IF_ERROR(::commlens::bench::gpu::CudaStatus((call), #call, __FILE__, __LINE__))
#define COMMLENS_NCCL(call) \
  COMMLENS_RETURN_IF_ERROR(::commlens::bench::gpu::NcclStatus((call), #call, __FILE__, __LINE__))
