#include "bench/gpu/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>
#include <type_traits>

namespace commlens::bench::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 2048;

// Every value the inputs produce is an integer below 2^24, exact in float, so the
// narrow floating types convert through float both ways.
template <typename T>
constexpr bool kNarrowFloat =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
    std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>;

template <typename T>
__device__ T FromInt(int64_t v) {
  if constexpr (kNarrowFloat<T>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
__device__ double ToDouble(T v) {
  if constexpr (kNarrowFloat<T>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
__global__ void FillInput(T* dst, int64_t count, ValueGen gen, int rank) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    dst[i] = FromInt<T>(InputValue(gen, rank, i));
}

template <typename T>
__global__ void CountWrong(const T* out, int64_t count, ValueGen gen, ExpectPlan plan, RedOp op,
                           unsigned long long* wrong) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < count;
       j += stride)
    mine += Matches(ToDouble(out[j]), ExpectedValue(gen, plan, op, j)) ? 0 : 1;
  if (mine) atomicAdd(wrong, mine);
}

unsigned int Blocks(int64_t count) {
  int64_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

Status LaunchStatus(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return OkStatus();
  return Error(std::string(what) + " launch failed: " + cudaGetErrorString(e));
}

// Calls f(T{}) with T the C++ type of |type|.
template <typename F>
Status WithType(DataType type, F&& f) {
  switch (type) {
    case DataType::kInt8: return f(int8_t{});
    case DataType::kUint8: return f(uint8_t{});
    case DataType::kInt32: return f(int32_t{});
    case DataType::kUint32: return f(uint32_t{});
    case DataType::kInt64: return f(int64_t{});
    case DataType::kUint64: return f(uint64_t{});
    case DataType::kHalf: return f(__half{});
    case DataType::kFloat: return f(float{});
    case DataType::kDouble: return f(double{});
    case DataType::kBfloat16: return f(__nv_bfloat16{});
    case DataType::kFp8E4M3: return f(__nv_fp8_e4m3{});
    case DataType::kFp8E5M2: return f(__nv_fp8_e5m2{});
    default: return Error("unsupported datatype");
  }
}

}  // namespace

Status LaunchFillInput(DataType type, void* dst, int64_t count, const ValueGen& gen, int rank,
                       cudaStream_t stream) {
  if (count <= 0) return OkStatus();
  return WithType(type, [&](auto tag) {
    using T = decltype(tag);
    FillInput<T><<<Blocks(count), kThreads, 0, stream>>>(static_cast<T*>(dst), count, gen, rank);
    return LaunchStatus("FillInput");
  });
}

Status LaunchCountWrong(DataType type, const void* out, int64_t count, const ValueGen& gen,
                        const ExpectPlan& plan, RedOp op, unsigned long long* wrong,
                        cudaStream_t stream) {
  if (count <= 0 || !plan.checked) return OkStatus();
  return WithType(type, [&](auto tag) {
    using T = decltype(tag);
    CountWrong<T><<<Blocks(count), kThreads, 0, stream>>>(static_cast<const T*>(out), count, gen,
                                                          plan, op, wrong);
    return LaunchStatus("CountWrong");
  });
}

}  // namespace commlens::bench::gpu
