// COMMLENS_HD marks small functions that both the CPU code and CUDA kernels call (the
// Jacobi stencil, the MoE input values): __host__ __device__ under nvcc, inline otherwise.
#pragma once

#if defined(__CUDACC__)
#define COMMLENS_HD __host__ __device__ __forceinline__
#else
#define COMMLENS_HD inline
#endif
