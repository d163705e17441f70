#include "bench/gpu/nvshmem_session.h"

#include <array>

#include <fmt/format.h>

#include "bench/gpu/nvshmem_library.h"
#include "bench/gpu/rank_setup.h"

namespace commlens::bench::gpu {

Result<std::unique_ptr<NvshmemSession>> NvshmemSession::Start(Bootstrap& boot, int device,
                                                              std::chrono::milliseconds timeout,
                                                              Watchdog& watchdog) {
  Result<const commlens_nvshmem_api*> api = LoadNvshmem();
  COMMLENS_RETURN_IF_ERROR(Agree(boot, api.status(), "loading NVSHMEM"));
  std::unique_ptr<NvshmemSession> session(new NvshmemSession(*api));
  std::array<std::byte, COMMLENS_NVSHMEM_UID_BYTES> uid{};
  Status local = boot.rank() == 0 ? session->Check((*api)->get_uid(uid.data()),
                                                   "nvshmemx_get_uniqueid")
                                  : OkStatus();
  COMMLENS_RETURN_IF_ERROR(Agree(boot, local, "creating the NVSHMEM unique id"));
  COMMLENS_RETURN_IF_ERROR(boot.Broadcast(uid));
  Watchdog::Guard guard(watchdog, fmt::format("NVSHMEM initialization ({} PEs)", boot.size()),
                        timeout);
  Status init = session->Check((*api)->init(boot.rank(), boot.size(), uid.data(), device),
                               "NVSHMEM initialization");
  COMMLENS_RETURN_IF_ERROR(init);
  return session;
}

NvshmemSession::~NvshmemSession() { api_->finalize(); }

Result<SymmetricBuffer> NvshmemSession::Allocate(size_t bytes) {
  void* p = api_->malloc(bytes);
  if (!p) return Error(fmt::format("nvshmem_malloc: {}", api_->last_error()));
  return SymmetricBuffer(api_, p);
}

Status NvshmemSession::Check(int rc, const char* what) const {
  if (rc == 0) return OkStatus();
  return Error(fmt::format("{}: {}", what, api_->last_error()));
}

}  // namespace commlens::bench::gpu
