#include "bench/gpu/lsa_transport.h"

#include <dlfcn.h>

#include <cstring>

#include <fmt/format.h>

#include "bench/errors.h"
#include "bench/gpu/copy_share.cuh"
#include "bench/gpu/cuda_check.h"

#if NCCL_VERSION_CODE >= 22800
#include <nccl_device.h>
#define COMMLENS_HAVE_NCCL_DEVICE 1
#else
#define COMMLENS_HAVE_NCCL_DEVICE 0
#endif

namespace commlens::bench::gpu {

#if COMMLENS_HAVE_NCCL_DEVICE

namespace {

constexpr int kThreads = 512;

// The device API's host entry points, resolved at run time (see the header).
struct DeviceApi {
  ncclResult_t (*window_register)(ncclComm_t, void*, size_t, ncclWindow_t*, int) = nullptr;
  ncclResult_t (*window_deregister)(ncclComm_t, ncclWindow_t) = nullptr;
  ncclResult_t (*devcomm_create)(ncclComm_t, const ncclDevCommRequirements_t*, ncclDevComm_t*) =
      nullptr;
  ncclResult_t (*devcomm_destroy)(ncclComm_t, const ncclDevComm_t*) = nullptr;
};

Result<DeviceApi> LoadDeviceApi() {
  int version = 0;
  ncclGetVersion(&version);
  if (version / 100 != NCCL_VERSION_CODE / 100)
    return Error(fmt::format(
        "the nccl-device backend was built against NCCL {}.{} headers but NCCL {}.{}.{} is "
        "loaded; the device API's structures differ between minor versions, so rebuild "
        "commlens against the NCCL it runs with",
        NCCL_MAJOR, NCCL_MINOR, version / 10000, version % 10000 / 100, version % 100));
  DeviceApi api;
  api.window_register = reinterpret_cast<decltype(api.window_register)>(
      dlsym(RTLD_DEFAULT, "ncclCommWindowRegister"));
  api.window_deregister = reinterpret_cast<decltype(api.window_deregister)>(
      dlsym(RTLD_DEFAULT, "ncclCommWindowDeregister"));
  api.devcomm_create =
      reinterpret_cast<decltype(api.devcomm_create)>(dlsym(RTLD_DEFAULT, "ncclDevCommCreate"));
  api.devcomm_destroy =
      reinterpret_cast<decltype(api.devcomm_destroy)>(dlsym(RTLD_DEFAULT, "ncclDevCommDestroy"));
  if (!api.window_register || !api.window_deregister || !api.devcomm_create ||
      !api.devcomm_destroy)
    return Error("the loaded NCCL library lacks the device API (ncclDevCommCreate, "
                 "ncclCommWindowRegister: NCCL 2.28 or later)");
  return api;
}

template <bool kUniform>
__global__ void __launch_bounds__(kThreads)
    LsaExchangeKernel(ncclDevComm dc, ncclWindow_t recv_win, const char* send, size_t recv_base,
                      size_t bytes_per_peer, const PeerCopy* plan) {
  ncclCoopCta cta;
  ncclLsaBarrierSession<ncclCoopCta> bar(cta, dc, ncclTeamTagLsa{}, blockIdx.x);
  bar.sync(cta, cuda::memory_order_relaxed);
  const int me = dc.lsaRank;
  const int n = dc.lsaSize;
  for (int k = 1; k <= n; ++k) {
    const int peer = (me + k) % n;  // staggered, so the links are loaded evenly
    int64_t src, dst, bytes;
    if constexpr (kUniform) {
      src = static_cast<int64_t>(peer) * bytes_per_peer;
      dst = recv_base + static_cast<int64_t>(me) * bytes_per_peer;
      bytes = bytes_per_peer;
    } else {
      const PeerCopy c = plan[peer];
      src = c.src_offset;
      dst = recv_base + c.dst_offset;
      bytes = c.bytes;
    }
    if (bytes == 0) continue;
    char* to = static_cast<char*>(ncclGetLsaPointer(recv_win, dst, peer));
    CopyShare(to, send + src, bytes);
  }
  bar.sync(cta, cuda::memory_order_acq_rel);
}

}  // namespace

struct LsaTransport::Impl {
  DeviceApi api;
  ncclComm_t comm = nullptr;
  int device = 0;
  int ctas = 0;
  std::vector<ncclWindow_t> windows;
  ncclDevComm dev{};
  bool dev_live = false;

  ~Impl() {
    int previous = -1;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    if (dev_live) api.devcomm_destroy(comm, &dev);
    for (ncclWindow_t w : windows) api.window_deregister(comm, w);
    if (previous >= 0) cudaSetDevice(previous);
  }
};

LsaTransport::LsaTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LsaTransport::~LsaTransport() = default;

Status LsaSupport() { return LoadDeviceApi().status(); }

Result<std::unique_ptr<LsaTransport>> LsaTransport::Create(
    ncclComm_t comm, int device, const std::vector<std::pair<void*, size_t>>& recv_buffers,
    int ctas) {
  auto impl = std::make_unique<Impl>();
  COMMLENS_ASSIGN_OR_RETURN(impl->api, LoadDeviceApi());
  impl->comm = comm;
  impl->device = device;
  impl->ctas = ctas;
  COMMLENS_CUDA(cudaSetDevice(device));
  for (auto [buffer, bytes] : recv_buffers) {
    ncclWindow_t w = nullptr;
    COMMLENS_NCCL(impl->api.window_register(comm, buffer, bytes, &w, NCCL_WIN_COLL_SYMMETRIC));
    impl->windows.push_back(w);
  }
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs);  // 2.28's struct has no initializer macro
  reqs.lsaBarrierCount = ctas;
  COMMLENS_NCCL(impl->api.devcomm_create(comm, &reqs, &impl->dev));
  impl->dev_live = true;
  int nranks = 0;
  ncclCommCount(comm, &nranks);
  if (impl->dev.lsaSize != nranks)
    return Error(fmt::format(
        "nccl-device: only {} of the {} ranks are load/store-reachable from rank {} (one "
        "NVLink domain); ranks beyond it need GIN, NCCL's GPU-initiated network path, which "
        "this build does not drive: run those on --backend nccl or nvshmem",
        impl->dev.lsaSize, nranks, impl->dev.rank));
  return std::unique_ptr<LsaTransport>(new LsaTransport(std::move(impl)));
}

int LsaTransport::lsa_size() const { return impl_->dev.lsaSize; }

Status LsaTransport::AllToAll(const void* send, int recv_buffer, size_t recv_offset,
                              size_t bytes_per_peer, cudaStream_t stream) {
  LsaExchangeKernel<true><<<impl_->ctas, kThreads, 0, stream>>>(
      impl_->dev, impl_->windows.at(recv_buffer), static_cast<const char*>(send), recv_offset,
      bytes_per_peer, nullptr);
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

Status LsaTransport::Exchange(const void* send, int recv_buffer, const PeerCopy* plan,
                              cudaStream_t stream) {
  LsaExchangeKernel<false><<<impl_->ctas, kThreads, 0, stream>>>(
      impl_->dev, impl_->windows.at(recv_buffer), static_cast<const char*>(send), 0, 0, plan);
  COMMLENS_CUDA(cudaGetLastError());
  return OkStatus();
}

#else  // NCCL headers older than 2.28: no device API

struct LsaTransport::Impl {};
LsaTransport::LsaTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LsaTransport::~LsaTransport() = default;

Status LsaSupport() {
  return NoGpuError(fmt::format("this build's NCCL headers ({}) predate the device API "
                                "(nccl_device.h, NCCL 2.28); rebuild against NCCL 2.28 or later",
                                NCCL_VERSION_CODE));
}

Result<std::unique_ptr<LsaTransport>> LsaTransport::Create(
    ncclComm_t, int, const std::vector<std::pair<void*, size_t>>&, int) {
  return LsaSupport();
}
int LsaTransport::lsa_size() const { return 0; }
Status LsaTransport::AllToAll(const void*, int, size_t, size_t, cudaStream_t) {
  return LsaSupport();
}
Status LsaTransport::Exchange(const void*, int, const PeerCopy*, cudaStream_t) {
  return LsaSupport();
}

#endif

}  // namespace commlens::bench::gpu
