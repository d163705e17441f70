#include "bench/gpu/exchanger.h"

#include <fmt/format.h>

#include "bench/gpu/cuda_check.h"

namespace commlens::bench::gpu {

Result<std::unique_ptr<Exchanger>> Exchanger::Create(Backend backend, ncclComm_t comm,
                                                     NvshmemSession* shmem, int device,
                                                     const std::vector<size_t>& buffer_bytes,
                                                     int ctas) {
  std::unique_ptr<Exchanger> x(new Exchanger(backend, comm, shmem, device, ctas));
  COMMLENS_NCCL(ncclCommUserRank(comm, &x->rank_));
  COMMLENS_NCCL(ncclCommCount(comm, &x->nranks_));
  DeviceGuard guard(device);
  if (backend == Backend::kNvshmem) {
    if (!shmem) return Error("the nvshmem backend was asked for without an NVSHMEM session");
    for (size_t bytes : buffer_bytes) {
      COMMLENS_ASSIGN_OR_RETURN(SymmetricBuffer b, shmem->Allocate(std::max<size_t>(bytes, 16)));
      x->shmem_buffers_.push_back(std::move(b));
    }
    return x;
  }
  std::vector<std::pair<void*, size_t>> windows;
  for (size_t bytes : buffer_bytes) {
    COMMLENS_ASSIGN_OR_RETURN(NcclBuffer b, AllocateNccl(device, std::max<size_t>(bytes, 16)));
    windows.push_back({b.get(), std::max<size_t>(bytes, 16)});
    x->nccl_buffers_.push_back(std::move(b));
  }
  if (backend == Backend::kNcclDevice) {
    COMMLENS_ASSIGN_OR_RETURN(x->lsa_, LsaTransport::Create(comm, device, windows, ctas));
  }
  return x;
}

Exchanger::~Exchanger() {
  lsa_.reset();  // deregisters the windows before their memory goes
}

void* Exchanger::buffer(int i) const {
  return backend_ == Backend::kNvshmem ? shmem_buffers_.at(i).get() : nccl_buffers_.at(i).get();
}

Status Exchanger::AllToAll(int src, int dst, size_t offset, size_t bytes_per_peer,
                           cudaStream_t stream) {
  const char* send = static_cast<const char*>(buffer(src)) + offset;
  char* recv = static_cast<char*>(buffer(dst)) + offset;
  switch (backend_) {
    case Backend::kNcclDevice:
      return lsa_->AllToAll(send, dst, offset, bytes_per_peer, stream);
    case Backend::kNvshmem:
      return shmem_->Check(
          shmem_->api().exchange(send, recv, bytes_per_peer, nullptr, ctas_, stream),
          "nvshmem all-to-all");
    default:  // nccl's alltoall runs through the collective table (gpu/nccl_ops.cc)
      return Error(fmt::format("no uniform all-to-all on backend {}", BackendName(backend_)));
  }
}

Status Exchanger::Exchange(int src, int dst, const ExchangePlan& plan, cudaStream_t stream) {
  const char* send = static_cast<const char*>(buffer(src));
  char* recv = static_cast<char*>(buffer(dst));
  const auto* device_plan = static_cast<const PeerCopy*>(plan.device_sends.get());
  switch (backend_) {
    case Backend::kNccl: {
      COMMLENS_NCCL(ncclGroupStart());
      ncclResult_t first = ncclSuccess;
      for (int p = 0; p < nranks_ && first == ncclSuccess; ++p) {
        const PeerCopy& s = plan.sends[p];
        const PeerCopy& r = plan.receives[p];
        if (s.bytes > 0) first = ncclSend(send + s.src_offset, s.bytes, ncclInt8, p, comm_, stream);
        if (first == ncclSuccess && r.bytes > 0)
          first = ncclRecv(recv + r.dst_offset, r.bytes, ncclInt8, p, comm_, stream);
      }
      ncclResult_t end = ncclGroupEnd();
      COMMLENS_NCCL(first);
      COMMLENS_NCCL(end);
      return OkStatus();
    }
    case Backend::kNcclDevice:
      if (!device_plan) return Error("the exchange plan was not uploaded");
      return lsa_->Exchange(send, dst, device_plan, stream);
    case Backend::kNvshmem:
      if (!device_plan) return Error("the exchange plan was not uploaded");
      static_assert(sizeof(PeerCopy) == sizeof(commlens_nvshmem_copy));
      return shmem_->Check(
          shmem_->api().exchange(send, recv, 0,
                                 reinterpret_cast<const commlens_nvshmem_copy*>(device_plan),
                                 ctas_, stream),
          "nvshmem exchange");
    default:
      return Error("unknown backend");
  }
}

Status Exchanger::Upload(int device, ExchangePlan* plan) {
  COMMLENS_ASSIGN_OR_RETURN(plan->device_sends, CopyToDevice(device, plan->sends));
  return OkStatus();
}

}  // namespace commlens::bench::gpu
