// libcommlens_nvshmem.so: the NVSHMEM backend of `commlens bench` behind the C table of
// commlens_nvshmem.h. Built against NVSHMEM's headers and device library; its host
// symbols resolve at load time from libnvshmem_host.so.3, which commlens loads first.
//
// Kernels (all GPU-initiated):
//   exchange  each CTA puts its share of every peer's bytes (nvshmemx_putmem_nbi_block),
//             peers visited from rank+1 on so the links are loaded evenly; a barrier on
//             the stream (nvshmemx_barrier_all_on_stream, which also completes the puts)
//             ends the exchange.
//   exchange  starts with a barrier on the stream, so no put lands in a buffer a peer
//             still uses.
//   jacobi    the boundary rows' Jacobi update (jacobi/stencil.h); each warp that computed
//             32 columns of a boundary row puts them into the neighbour's halo; with signals
//             (nvshmem-nb) the put carries a per-segment signal set to iteration + 1, and a
//             boundary warp first waits until its halo segment's signal reaches the
//             iteration. The caller computes the interior rows and, for the blocking
//             variant, calls barrier.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/gpu/copy_share.cuh"
#include "bench/jacobi/stencil.h"
#include "bench/nvshmem/commlens_nvshmem.h"

namespace {

using commlens::bench::JacobiPoint;
using commlens::bench::gpu::ShareOf;

constexpr int kThreads = 512;
constexpr int kJacobiBx = COMMLENS_NVSHMEM_JACOBI_SEGMENT;  // one warp per row segment
static_assert(kJacobiBx == 32, "a segment is one warp");

thread_local std::string g_error;
bool g_initialized = false;
char g_version[32] = {};

int Fail(std::string message) {
  g_error = std::move(message);
  return 1;
}

int CudaFail(cudaError_t e, const char* what) {
  return Fail(std::string(what) + ": " + cudaGetErrorString(e));
}

template <bool kUniform>
__global__ void __launch_bounds__(kThreads)
    PutExchange(const char* send, char* recv, size_t bytes_per_peer,
                const commlens_nvshmem_copy* plan, int me, int npes) {
  for (int k = 1; k <= npes; ++k) {
    const int peer = (me + k) % npes;
    int64_t src, dst, bytes;
    if constexpr (kUniform) {
      src = static_cast<int64_t>(peer) * bytes_per_peer;
      dst = static_cast<int64_t>(me) * bytes_per_peer;
      bytes = bytes_per_peer;
    } else {
      src = plan[peer].src_offset;
      dst = plan[peer].dst_offset;
      bytes = plan[peer].bytes;
    }
    const auto share = ShareOf(bytes);
    if (share.begin < share.end)
      nvshmemx_putmem_nbi_block(recv + dst + share.begin, send + src + share.begin,
                                share.end - share.begin, peer);
  }
}

// The boundary rows only (the interior is commlens's plain kernel, gpu/jacobi_kernels.cu:
// this file's relocatable device code ran the whole stencil 11 % slower on H200). Warp y
// of a CTA handles its 32 columns of the first (y = 0) or the last (y = 1) row.
__global__ void __launch_bounds__(kJacobiBx * 2) JacobiBoundaryPut(commlens_nvshmem_jacobi s) {
  const long long nx = s.nx;
  const int ix = 1 + blockIdx.x * kJacobiBx + threadIdx.x;
  const bool first = threadIdx.y == 0;
  if (!first && s.rows == 1) return;  // one row: the first is the last
  const bool last = !first || s.rows == 1;
  const int iy = first ? 1 : s.rows;
  const int segment = blockIdx.x;
  if (s.signal && s.iteration > 0) {
    if (threadIdx.x == 0) {
      if (first)
        nvshmem_signal_wait_until(s.top_signal + segment, NVSHMEM_CMP_GE,
                                  static_cast<uint64_t>(s.iteration));
      if (last)
        nvshmem_signal_wait_until(s.bottom_signal + segment, NVSHMEM_CMP_GE,
                                  static_cast<uint64_t>(s.iteration));
    }
    __syncwarp();
  }
  if (ix < nx - 1) s.a_new[iy * nx + ix] = JacobiPoint(s.a, nx, iy, ix);
  __syncwarp();
  const int x0 = 1 + blockIdx.x * kJacobiBx;
  const int len = min(kJacobiBx, static_cast<int>(nx) - 1 - x0);
  if (len <= 0) return;
  const uint64_t value = static_cast<uint64_t>(s.iteration) + 1;
  if (first) {  // our first row -> the top neighbour's bottom halo (its row top_rows + 1)
    float* dst = s.a_new + (s.top_rows + 1) * nx + x0;
    const float* src = s.a_new + 1 * nx + x0;
    if (s.signal)
      nvshmemx_float_put_signal_nbi_warp(dst, src, len, s.bottom_signal + segment, value,
                                         NVSHMEM_SIGNAL_SET, s.top_pe);
    else
      nvshmemx_float_put_nbi_warp(dst, src, len, s.top_pe);
  }
  if (last) {  // our last row -> the bottom neighbour's top halo (its row 0)
    float* dst = s.a_new + x0;
    const float* src = s.a_new + static_cast<long long>(s.rows) * nx + x0;
    if (s.signal)
      nvshmemx_float_put_signal_nbi_warp(dst, src, len, s.top_signal + segment, value,
                                         NVSHMEM_SIGNAL_SET, s.bottom_pe);
    else
      nvshmemx_float_put_nbi_warp(dst, src, len, s.bottom_pe);
  }
}

const char* LastError() { return g_error.c_str(); }

const char* Version() {
  int major = 0, minor = 0, patch = 0;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  std::snprintf(g_version, sizeof g_version, "%d.%d.%d", major, minor, patch);
  return g_version;
}

int GetUid(void* uid) {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (int rc = nvshmemx_get_uniqueid(&id); rc != 0)
    return Fail("nvshmemx_get_uniqueid failed (" + std::to_string(rc) + ")");
  static_assert(sizeof id == COMMLENS_NVSHMEM_UID_BYTES);
  std::memcpy(uid, &id, sizeof id);
  return 0;
}

int Init(int rank, int nranks, const void* uid, int device) {
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return CudaFail(e, "cudaSetDevice");
  nvshmemx_uniqueid_t id;
  std::memcpy(&id, uid, sizeof id);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (int rc = nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr); rc != 0)
    return Fail("nvshmemx_set_attr_uniqueid_args failed (" + std::to_string(rc) + ")");
  // nvshmemx_init_attr without its exit(): an init failure must come back as an error.
  int provided = 0;
  nvshmemi_version_t version = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
                                NVSHMEM_VENDOR_PATCH_VERSION};
  int rc = nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided,
                                NVSHMEMX_INIT_WITH_UNIQUEID, &attr, version);
  if (rc != 0)
    return Fail("NVSHMEM initialization failed (" + std::to_string(rc) +
                "); NVSHMEM_DEBUG=INFO says why");
  if (nvshmem_my_pe() != rank || nvshmem_n_pes() != nranks)
    return Fail("NVSHMEM numbered the PEs differently from the launcher's ranks");
  g_initialized = true;
  return 0;
}

void Finalize() {
  if (g_initialized) nvshmem_finalize();
  g_initialized = false;
}

void* Malloc(size_t bytes) {
  void* p = nvshmem_malloc(bytes);
  if (!p) Fail("nvshmem_malloc of " + std::to_string(bytes) +
               " bytes failed (the symmetric heap is NVSHMEM_SYMMETRIC_SIZE, default 1 GiB)");
  return p;
}

void Free(void* p) { nvshmem_free(p); }

int Exchange(const void* send, void* recv, size_t bytes_per_peer,
             const commlens_nvshmem_copy* plan, int ctas, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  // Every peer must be done with the receive buffer (its previous reads, or refilling it)
  // before any put lands there: a barrier first, as the nccl-device kernel's first LSA
  // barrier. Without it, 128 CTAs overran a peer's refill in the check (wrong elements).
  nvshmemx_barrier_all_on_stream(s);
  if (plan)
    PutExchange<false><<<ctas, kThreads, 0, s>>>(static_cast<const char*>(send),
                                                static_cast<char*>(recv), 0, plan, me, npes);
  else
    PutExchange<true><<<ctas, kThreads, 0, s>>>(static_cast<const char*>(send),
                                               static_cast<char*>(recv), bytes_per_peer,
                                               nullptr, me, npes);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaFail(e, "exchange kernel");
  nvshmemx_barrier_all_on_stream(s);
  return 0;
}

int Jacobi(const commlens_nvshmem_jacobi* step, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  dim3 block(kJacobiBx, 2);
  dim3 grid((step->nx - 2 + kJacobiBx - 1) / kJacobiBx);
  JacobiBoundaryPut<<<grid, block, 0, s>>>(*step);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaFail(e, "jacobi kernel");
  return 0;
}

int Barrier(void* stream) {
  nvshmemx_barrier_all_on_stream(static_cast<cudaStream_t>(stream));
  return 0;
}

const commlens_nvshmem_api kApi = {1,      LastError, Version,  GetUid,   Init,   Finalize,
                                   Malloc, Free,      Exchange, Jacobi,   Barrier};

}  // namespace

extern "C" __attribute__((visibility("default"))) const commlens_nvshmem_api*
commlens_nvshmem_v1(void) {
  return &kApi;
}
