// NVSHMEM for one `commlens bench` run: load the backend (nvshmem_library.h), bootstrap
// it through our own rendezvous (process 0's unique id travels over the Bootstrap, so no
// extra launcher is needed), allocate symmetric buffers, and finalize at the end.
// One GPU per process; NVSHMEM PE numbers equal the bootstrap's process ranks.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <utility>

#include "bench/bootstrap.h"
#include "bench/nvshmem/commlens_nvshmem.h"
#include "bench/watchdog.h"
#include "common/status.h"

namespace commlens::bench::gpu {

class NvshmemSession;

// A symmetric allocation (nvshmem_malloc), freed on destruction. Move-only.
class SymmetricBuffer {
 public:
  SymmetricBuffer() = default;
  SymmetricBuffer(const commlens_nvshmem_api* api, void* p) : api_(api), p_(p) {}
  SymmetricBuffer(SymmetricBuffer&& o) noexcept
      : api_(o.api_), p_(std::exchange(o.p_, nullptr)) {}
  SymmetricBuffer& operator=(SymmetricBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      api_ = o.api_;
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  ~SymmetricBuffer() { Reset(); }
  void* get() const { return p_; }
  void Reset() {
    if (p_) api_->free(std::exchange(p_, nullptr));
  }

 private:
  const commlens_nvshmem_api* api_ = nullptr;
  void* p_ = nullptr;
};

class NvshmemSession {
 public:
  // Collective over |boot|: every process loads the backend and they agree before any
  // enters NVSHMEM's initialization, which the watchdog bounds by |timeout|.
  static Result<std::unique_ptr<NvshmemSession>> Start(Bootstrap& boot, int device,
                                                       std::chrono::milliseconds timeout,
                                                       Watchdog& watchdog);
  ~NvshmemSession();
  NvshmemSession(const NvshmemSession&) = delete;
  NvshmemSession& operator=(const NvshmemSession&) = delete;

  const commlens_nvshmem_api& api() const { return *api_; }
  // Collective: every PE asks for the same size.
  Result<SymmetricBuffer> Allocate(size_t bytes);
  // An error naming |what| and the plugin's last message when |rc| is not 0.
  Status Check(int rc, const char* what) const;

 private:
  explicit NvshmemSession(const commlens_nvshmem_api* api) : api_(api) {}
  const commlens_nvshmem_api* api_;
};

}  // namespace commlens::bench::gpu
