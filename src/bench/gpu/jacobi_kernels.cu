#include "bench/gpu/jacobi_kernels.h"

#include "bench/gpu/cuda_check.h"
#include "bench/jacobi/stencil.h"

namespace commlens::bench::gpu {

namespace {

constexpr int kBx = 32;  // the same block shape as the NVSHMEM kernel (nvshmem_plugin.cu)
constexpr int kBy = 8;

__global__ void __launch_bounds__(kBx * kBy)
    JacobiRows(const float* a, float* a_new, int nx, int row_begin, int row_end) {
  const int ix = 1 + blockIdx.x * kBx + threadIdx.x;
  const int iy = row_begin + blockIdx.y * kBy + threadIdx.y;
  if (ix < nx - 1 && iy < row_end)
    a_new[static_cast<long long>(iy) * nx + ix] = JacobiPoint(a, nx, iy, ix);
}

}  // namespace

Status LaunchJacobiRows(const float* a, float* a_new, int nx, int row_begin, int row_end,
                        cudaStream_t stream) {
  if (row_end <= row_begin) return OkStatus();
  dim3 block(kBx, kBy);
  dim3 grid((nx - 2 + kBx - 1) / kBx, (row_end - row_begin + kBy - 1) / kBy);
  JacobiRows<<<grid, block, 0, stream>>>(a, a_new, nx, row_begin, row_end);
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

}  // namespace commlens::bench::gpu
