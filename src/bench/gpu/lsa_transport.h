// The nccl-device backend: all-to-all through NCCL's device API (nccl_device.h, NCCL
// 2.28+), GPU-initiated. Receive buffers are registered as symmetric windows; a kernel of
// |ctas| CTAs passes an LSA barrier (every peer has entered, so none still reads the
// previous contents), stores each peer's bytes straight into that peer's window over
// NVLink (ncclGetLsaPointer), and passes a second barrier (every peer's stores are
// visible) before it ends.
//
// Scope: LSA reaches the ranks that are load/store-accessible (one NVLink domain). Ranks
// on other nodes need GIN (NCCL's GPU-initiated network path, an RDMA NIC); this build
// does not drive GIN and Create says so rather than run part of the exchange.
//
// The device API's host calls are looked up at run time, and the library's major.minor
// must match the headers this was built with (NCCL's device structs changed between
// 2.28 and 2.29), so an older or newer NCCL gives a clear error, not a crash.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "bench/exchange_plan.h"
#include "common/status.h"

namespace commlens::bench::gpu {

class LsaTransport {
 public:
  // Registers |recv_buffers| (from ncclMemAlloc, each the same size on every rank) with
  // |comm| and creates the device communicator. Collective over |comm|.
  static Result<std::unique_ptr<LsaTransport>> Create(ncclComm_t comm, int device,
                                                      const std::vector<std::pair<void*, size_t>>& recv_buffers,
                                                      int ctas);
  ~LsaTransport();
  LsaTransport(const LsaTransport&) = delete;
  LsaTransport& operator=(const LsaTransport&) = delete;

  // Uniform all-to-all: peer p's chunk send[p * bytes_per_peer ...] lands in peer p's
  // receive buffer |recv_buffer| at recv_offset + rank * bytes_per_peer.
  Status AllToAll(const void* send, int recv_buffer, size_t recv_offset, size_t bytes_per_peer,
                  cudaStream_t stream);
  // Variable exchange: |plan| (device memory, one PeerCopy per peer, dst offsets relative
  // to |recv_buffer|'s start).
  Status Exchange(const void* send, int recv_buffer, const PeerCopy* plan, cudaStream_t stream);

  int lsa_size() const;

 private:
  struct Impl;
  explicit LsaTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Why this build or this NCCL cannot run the nccl-device backend; OK when it can.
Status LsaSupport();

}  // namespace commlens::bench::gpu
