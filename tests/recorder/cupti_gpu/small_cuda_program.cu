#include "small_cuda_program.h"

#include <cuda_runtime.h>

#include <vector>

namespace commlens::recorder::cupti::testing {

__global__ void commlens_test_scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void commlens_test_add(float* x, int n, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}

int CudaDevices() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::string InitCuda() {
  const cudaError_t e = cudaFree(nullptr);
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
}

SmallProgram RunSmallProgram(int launches, const std::function<void(uint64_t)>& on_stream) {
  constexpr int kN = 1 << 20;
  SmallProgram p;
  p.copy_bytes = p.set_bytes = int64_t{kN} * sizeof(float);
  std::vector<float> host(kN, 1.0f);
  float* x = nullptr;
  cudaStream_t stream = nullptr;
  auto check = [&](cudaError_t e, const char* what) {
    if (e != cudaSuccess && p.error.empty()) p.error = std::string(what) + ": " + cudaGetErrorString(e);
  };
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check(cudaMalloc(&x, p.copy_bytes), "cudaMalloc");
  if (!p.error.empty()) return p;
  if (on_stream) on_stream(reinterpret_cast<uint64_t>(stream));
  check(cudaMemsetAsync(x, 0, p.set_bytes, stream), "cudaMemsetAsync");
  check(cudaMemcpyAsync(x, host.data(), p.copy_bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  for (int i = 0; i < launches; ++i) {
    commlens_test_scale<<<kN / 256, 256, 0, stream>>>(x, kN, 1.5f);
    check(cudaGetLastError(), "commlens_test_scale");
    commlens_test_add<<<kN / 256, 256, 0, stream>>>(x, kN, 1.0f);
    check(cudaGetLastError(), "commlens_test_add");
    p.scale_kernels++, p.add_kernels++;
  }
  check(cudaMemcpyAsync(host.data(), x, p.copy_bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaFree(x), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return p;
}

}  // namespace commlens::recorder::cupti::testing
