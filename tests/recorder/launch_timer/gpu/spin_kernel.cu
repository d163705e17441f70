#include <cuda_runtime.h>

#include "spin_kernel.h"

namespace commlens::recorder::launch_timer::testing {

namespace {

__global__ void commlens_test_spin(long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (static_cast<long long>(now - start) < ns);
}

cudaStream_t AsStream(uint64_t s) { return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(s)); }

}  // namespace

uint64_t NewStream() {
  cudaStream_t s = nullptr;
  return cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess ? reinterpret_cast<uintptr_t>(s) : 0;
}

void LaunchSpin(uint64_t stream, int64_t ns) { commlens_test_spin<<<1, 1, 0, AsStream(stream)>>>(ns); }

bool Synchronize(uint64_t stream) { return cudaStreamSynchronize(AsStream(stream)) == cudaSuccess; }

bool WhileCapturing(uint64_t stream, void (*between)(void*), void* arg) {
  if (cudaStreamBeginCapture(AsStream(stream), cudaStreamCaptureModeRelaxed) != cudaSuccess) return false;
  between(arg);
  cudaGraph_t graph = nullptr;
  const bool ok = cudaStreamEndCapture(AsStream(stream), &graph) == cudaSuccess;
  if (graph) cudaGraphDestroy(graph);
  return ok;
}

}  // namespace commlens::recorder::launch_timer::testing
