#include "recorder/launch_timer/driver_events.h"

#include <dlfcn.h>

#include <cmath>

namespace commlens::recorder::launch_timer {

namespace {

// The driver's types, as cuda.h declares them: handles are pointers, results an int
// enum whose 0 is success and 600 "not ready".
using CUresult = int;
using CUcontext = void*;
using CUstream = void*;
using CUevent = void*;
constexpr CUresult kSuccess = 0;
constexpr CUresult kNotReady = 600;
constexpr unsigned kEventDefault = 0;        // CU_EVENT_DEFAULT: timing on
constexpr unsigned kStreamNonBlocking = 1;   // CU_STREAM_NON_BLOCKING
constexpr int kCaptureNone = 0;              // CU_STREAM_CAPTURE_STATUS_NONE
constexpr int kCaptureModeRelaxed = 2;       // CU_STREAM_CAPTURE_MODE_RELAXED

void* AsPointer(GpuEvents::Handle h) { return reinterpret_cast<void*>(static_cast<uintptr_t>(h)); }
GpuEvents::Handle AsHandle(const void* p) { return static_cast<GpuEvents::Handle>(reinterpret_cast<uintptr_t>(p)); }

template <typename F>
bool Resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

}  // namespace

struct DriverEvents::Api {
  CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*stream_is_capturing)(CUstream, int*) = nullptr;
  CUresult (*ctx_push)(CUcontext) = nullptr;
  CUresult (*ctx_pop)(CUcontext*) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned) = nullptr;
  CUresult (*event_destroy)(CUevent) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_query)(CUevent) = nullptr;
  CUresult (*event_elapsed)(float*, CUevent, CUevent) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*exchange_capture_mode)(int*) = nullptr;  // optional (CUDA 10.1+)
};

DriverEvents::~DriverEvents() { delete api_; }

bool DriverEvents::Load(std::string* why) {
  if (api_) return true;
  const char* name = library_.empty() ? "libcuda.so.1" : library_.c_str();
  void* lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen(name, RTLD_NOW);
  if (!lib) {
    const char* error = dlerror();
    *why = std::string("CUDA's driver library could not be loaded (") + (error ? error : name) + ")";
    return false;
  }
  auto* a = new Api;
  const bool ok = Resolve(lib, "cuStreamGetCtx", &a->stream_get_ctx) &&
                  Resolve(lib, "cuStreamIsCapturing", &a->stream_is_capturing) &&
                  Resolve(lib, "cuCtxPushCurrent_v2", &a->ctx_push) && Resolve(lib, "cuCtxPopCurrent_v2", &a->ctx_pop) &&
                  Resolve(lib, "cuEventCreate", &a->event_create) &&
                  Resolve(lib, "cuEventDestroy_v2", &a->event_destroy) &&
                  Resolve(lib, "cuEventRecord", &a->event_record) && Resolve(lib, "cuEventQuery", &a->event_query) &&
                  Resolve(lib, "cuEventElapsedTime", &a->event_elapsed) &&
                  Resolve(lib, "cuStreamCreate", &a->stream_create) &&
                  Resolve(lib, "cuStreamDestroy_v2", &a->stream_destroy);
  Resolve(lib, "cuThreadExchangeStreamCaptureMode", &a->exchange_capture_mode);
  if (!ok) {
    delete a;
    *why = "CUDA's driver library lacks a call the launch timer needs (CUDA 11 or later is expected)";
    return false;
  }
  api_ = a;
  return true;
}

GpuEvents::Handle DriverEvents::StreamContext(uint64_t stream) {
  CUcontext ctx = nullptr;
  return api_->stream_get_ctx(AsPointer(stream), &ctx) == kSuccess ? AsHandle(ctx) : 0;
}

bool DriverEvents::Capturing(uint64_t stream) {
  int status = 0;
  return api_->stream_is_capturing(AsPointer(stream), &status) != kSuccess || status != kCaptureNone;
}

// Makes one handle with |make| while |context| is current on this thread (a pushed and
// popped context, as the driver's create calls make in the current one); 0 on failure.
template <typename Make>
GpuEvents::Handle DriverEvents::MakeIn(Handle context, Make make) {
  if (api_->ctx_push(AsPointer(context)) != kSuccess) return 0;
  void* made = nullptr;
  const bool ok = make(&made) == kSuccess;
  CUcontext popped = nullptr;
  api_->ctx_pop(&popped);
  return ok ? AsHandle(made) : 0;
}

GpuEvents::Handle DriverEvents::NewEvent(Handle context) {
  return MakeIn(context, [&](void** e) { return api_->event_create(e, kEventDefault); });
}

GpuEvents::Handle DriverEvents::NewStream(Handle context) {
  return MakeIn(context, [&](void** s) { return api_->stream_create(s, kStreamNonBlocking); });
}

void DriverEvents::DestroyEvent(Handle event) {
  if (event) api_->event_destroy(AsPointer(event));
}

void DriverEvents::DestroyStream(Handle stream) {
  if (stream) api_->stream_destroy(AsPointer(stream));
}

bool DriverEvents::Record(Handle event, uint64_t stream) {
  return api_->event_record(AsPointer(event), AsPointer(stream)) == kSuccess;
}

GpuEvents::Done DriverEvents::Query(Handle event) {
  const CUresult r = api_->event_query(AsPointer(event));
  return r == kSuccess ? Done::kYes : r == kNotReady ? Done::kNotYet : Done::kError;
}

bool DriverEvents::ElapsedNs(Handle from, Handle to, int64_t* ns) {
  float ms = 0;
  if (api_->event_elapsed(&ms, AsPointer(from), AsPointer(to)) != kSuccess || !std::isfinite(ms)) return false;
  *ns = std::llround(static_cast<double>(ms) * 1e6);
  return true;
}

int DriverEvents::RelaxCapture() {
  int mode = kCaptureModeRelaxed;
  if (api_ == nullptr || api_->exchange_capture_mode == nullptr || api_->exchange_capture_mode(&mode) != kSuccess) return -1;
  return mode;  // the thread's mode before
}

void DriverEvents::RestoreCapture(int mode) {
  if (mode >= 0 && api_ != nullptr && api_->exchange_capture_mode != nullptr) api_->exchange_capture_mode(&mode);
}

}  // namespace commlens::recorder::launch_timer
