#include "recorder/cupti_tracer/cupti_backend.h"

#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <vector>

namespace commlens::recorder::cupti {

// The CUPTI calls used, resolved from the loaded library.
struct CuptiBackend::Api {
  decltype(&cuptiSubscribe_v2) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&cuptiSetThreadIdType) set_thread_id_type = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetCallbackName) callback_name = nullptr;
};

namespace {

std::atomic<CuptiBackend*> g_current{nullptr};

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONTEXT,  // first: the syncs' devices come from it
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_MARKER,
};

uint64_t CUPTIAPI RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI NoCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

template <typename F>
bool Resolve(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

}  // namespace

CuptiBackend::CuptiBackend(std::string library)
    : library_(std::move(library)), translator_([this](bool runtime, uint32_t cbid) {
        const char* name = nullptr;
        if (api_ && api_->callback_name &&
            api_->callback_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) ==
                CUPTI_SUCCESS &&
            name)
          return std::string(name);
        return std::string(runtime ? "cuda" : "cu") + "#" + std::to_string(cbid);
      }) {}

CuptiBackend::~CuptiBackend() {
  Stop();
  CuptiBackend* self = this;
  g_current.compare_exchange_strong(self, nullptr);
  delete api_;
  // The library stays loaded: CUPTI may still hold threads and callbacks into it.
}

std::string CuptiBackend::ResultText(CUptiResult r) const {
  const char* text = nullptr;
  if (api_ && api_->result_string && api_->result_string(r, &text) == CUPTI_SUCCESS && text) return text;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

StartResult CuptiBackend::Start(ActivitySink* sink, std::string* why) {
  CuptiBackend* none = nullptr;
  if (!g_current.compare_exchange_strong(none, this) && none != this) {
    *why = "another commlens tracer runs in this process";
    return StartResult::kFailed;
  }
  const std::vector<std::string> candidates =
      library_.empty() ? std::vector<std::string>{"libcupti.so.13", "libcupti.so"} : std::vector<std::string>{library_};
  for (const std::string& name : candidates) {
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) break;
  }
  if (!handle_) {
    *why = std::string("CUPTI could not be loaded (") + dlerror() + "): put the CUDA toolkit's or the nvidia-cuda-cupti "
           "package's lib folder on LD_LIBRARY_PATH";
    g_current = nullptr;
    return StartResult::kFailed;
  }
  if (!api_) api_ = new Api;
  const bool resolved = Resolve(handle_, "cuptiSubscribe_v2", &api_->subscribe) &&
                        Resolve(handle_, "cuptiUnsubscribe", &api_->unsubscribe) &&
                        Resolve(handle_, "cuptiActivityRegisterCallbacks", &api_->register_callbacks) &&
                        Resolve(handle_, "cuptiActivityRegisterTimestampCallback", &api_->register_timestamp) &&
                        Resolve(handle_, "cuptiSetThreadIdType", &api_->set_thread_id_type) &&
                        Resolve(handle_, "cuptiActivityEnable", &api_->enable) &&
                        Resolve(handle_, "cuptiActivityDisable", &api_->disable) &&
                        Resolve(handle_, "cuptiActivityFlushAll", &api_->flush_all) &&
                        Resolve(handle_, "cuptiActivityGetNextRecord", &api_->next_record) &&
                        Resolve(handle_, "cuptiActivityGetNumDroppedRecords", &api_->dropped) &&
                        Resolve(handle_, "cuptiGetResultString", &api_->result_string) &&
                        Resolve(handle_, "cuptiGetCallbackName", &api_->callback_name);
  if (!resolved) {
    *why = "this CUPTI lacks a call the tracer needs (CUDA 13's CUPTI is expected)";
    g_current = nullptr;
    return StartResult::kFailed;
  }
  // Another client? CUDA 13's CUPTI serves one subscriber: probe, and let go at once, so
  // that a PyTorch profiler started later still finds the slot free.
  CUpti_SubscriberHandle probe = nullptr;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "commlens";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder) - 1;
  const CUptiResult sub = api_->subscribe(&probe, &NoCallback, nullptr, &params);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    *why = std::string("another CUPTI client holds CUPTI") + (holder[0] ? std::string(" (") + holder + ")" : "");
    g_current = nullptr;
    return StartResult::kSteppedAside;
  }
  if (sub != CUPTI_SUCCESS) {
    *why = "CUPTI refused a subscriber: " + ResultText(sub);
    g_current = nullptr;
    return StartResult::kFailed;
  }
  api_->unsubscribe(probe);
  // Before any kind is enabled: the clock and the thread ids (AH: they must not change
  // during a session).
  api_->set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  api_->register_timestamp(&RealtimeNs);
  if (CUptiResult r = api_->register_callbacks(&OnBufferRequested, &OnBufferCompleted); r != CUPTI_SUCCESS) {
    *why = "CUPTI refused the activity buffers: " + ResultText(r);
    g_current = nullptr;
    return StartResult::kFailed;
  }
  sink_ = sink;
  for (CUpti_ActivityKind k : kKinds) {
    const CUptiResult r = api_->enable(k);
    if (r == CUPTI_SUCCESS) continue;
    DisableAll();
    sink_ = nullptr;
    g_current = nullptr;
    *why = "CUPTI refused activity kind " + std::to_string(static_cast<int>(k)) + ": " + ResultText(r);
    // NOT_COMPATIBLE: another tool traces the same kinds.
    return r == CUPTI_ERROR_NOT_COMPATIBLE ? StartResult::kSteppedAside : StartResult::kFailed;
  }
  started_ = true;
  return StartResult::kTracing;
}

void CuptiBackend::DisableAll() {
  if (!api_ || !api_->disable) return;
  for (CUpti_ActivityKind k : kKinds) api_->disable(k);
}

void CuptiBackend::Flush() {
  if (!started_) return;
  // Completed callbacks run on this thread inside the call: no lock is held here.
  api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  if (api_->dropped(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0 && sink_) sink_->OnDropped(dropped);
}

void CuptiBackend::Stop() {
  if (!started_) return;
  Flush();
  DisableAll();
  started_ = false;
}

void CUPTIAPI CuptiBackend::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // On the application's thread, inside a CUDA call: allocate and return, nothing more.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI CuptiBackend::OnBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (CuptiBackend* self = g_current.load()) self->Completed(buffer, valid);
  std::free(buffer);
}

void CuptiBackend::Completed(uint8_t* buffer, size_t valid) {
  if (!sink_ || !api_) return;
  std::lock_guard<std::mutex> lock(mu_);
  CUpti_Activity* record = nullptr;
  while (api_->next_record(buffer, valid, &record) == CUPTI_SUCCESS) translator_.Translate(record, sink_);
}

}  // namespace commlens::recorder::cupti
