// One rank's all-to-all machinery for one backend (backend.h), shared by the alltoall
// and moe benchmarks: it owns the buffers the backend can exchange between (plain
// ncclMemAlloc memory for nccl, registered NCCL windows for nccl-device, the NVSHMEM
// symmetric heap for nvshmem; every rank allocates the same sizes) and moves bytes
// between them, uniformly (alltoall) or by a per-peer plan (moe).
//
//   nccl         grouped ncclSend/ncclRecv per peer (CPU-initiated; moe only)
//   nccl-device  LsaTransport: stores over NVLink from a kernel, LSA barriers around
//   nvshmem      puts from a kernel, a barrier on the stream after
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <vector>

#include "bench/backend.h"
#include "bench/exchange_plan.h"
#include "bench/gpu/cuda_handles.h"
#include "bench/gpu/lsa_transport.h"
#include "bench/gpu/nvshmem_session.h"
#include "common/status.h"

namespace commlens::bench::gpu {

// A variable exchange as each backend needs it: the sends (PeerCopy per peer, on the
// host for NCCL and in device memory for the kernels) and, for NCCL's receives, where
// each peer's bytes land here (dst_offset, bytes; src_offset unused).
struct ExchangePlan {
  std::vector<PeerCopy> sends;
  std::vector<PeerCopy> receives;
  DeviceMem device_sends;  // sends, copied to the GPU
};

class Exchanger {
 public:
  // |shmem| must be live for kNvshmem; |comm| is used by kNccl and kNcclDevice.
  // Collective over the ranks.
  static Result<std::unique_ptr<Exchanger>> Create(Backend backend, ncclComm_t comm,
                                                   NvshmemSession* shmem, int device,
                                                   const std::vector<size_t>& buffer_bytes,
                                                   int ctas);
  ~Exchanger();

  Backend backend() const { return backend_; }
  void* buffer(int i) const;

  // Uniform all-to-all of |bytes_per_peer| from buffer |src| at |offset| (peer p's chunk
  // at offset + p * bytes_per_peer) to buffer |dst| at |offset| (rank r's chunk at
  // offset + r * bytes_per_peer), as ncclAlltoAll. GPU-initiated backends only: NCCL's
  // alltoall runs through the collective table.
  Status AllToAll(int src, int dst, size_t offset, size_t bytes_per_peer, cudaStream_t stream);
  // Variable exchange from buffer |src| to buffer |dst| by |plan| (offsets relative to
  // the buffers' starts).
  Status Exchange(int src, int dst, const ExchangePlan& plan, cudaStream_t stream);

  // Makes |plan|'s device copy; call once per plan before Exchange.
  static Status Upload(int device, ExchangePlan* plan);

 private:
  Exchanger(Backend backend, ncclComm_t comm, NvshmemSession* shmem, int device, int ctas)
      : backend_(backend), comm_(comm), shmem_(shmem), device_(device), ctas_(ctas) {}

  Backend backend_;
  ncclComm_t comm_;
  NvshmemSession* shmem_;
  int device_;
  int ctas_;
  int rank_ = 0;
  int nranks_ = 1;
  std::vector<NcclBuffer> nccl_buffers_;
  std::vector<SymmetricBuffer> shmem_buffers_;
  std::unique_ptr<LsaTransport> lsa_;
};

}  // namespace commlens::bench::gpu
