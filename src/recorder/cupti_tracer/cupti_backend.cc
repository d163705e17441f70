#include "recorder/cupti_tracer/cupti_backend.h"

#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

namespace commlens::recorder::cupti {

// The CUPTI calls used, resolved from the loaded library.
struct CuptiBackend::Api {
  decltype(&cuptiSubscribe_v2) subscribe = nullptr;
  decltype(&cuptiGetStreamIdEx) stream_id = nullptr;  // optional
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&cuptiSetThreadIdType) set_thread_id_type = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityEnableAndDump) enable_and_dump = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityEnableRuntimeApi) enable_runtime_api = nullptr;
  decltype(&cuptiActivityEnableDriverApi) enable_driver_api = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetCallbackName) callback_name = nullptr;
};

namespace {

std::atomic<CuptiBackend*> g_current{nullptr};

// What the tracer needs of the GPU, kernels first (the one kind it cannot do without).
// Contexts are dumped too, for those that exist already (a late attach): the syncs'
// devices come from them.
constexpr CUpti_ActivityKind kKernels = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
struct OptionalKind {
  CUpti_ActivityKind kind;
  uint32_t asked_by;  // the CuptiKind bit that asks for it
};
constexpr OptionalKind kOptional[] = {
    {CUPTI_ACTIVITY_KIND_MEMCPY, kCuptiCopies},          {CUPTI_ACTIVITY_KIND_MEMCPY2, kCuptiCopies},
    {CUPTI_ACTIVITY_KIND_MEMSET, kCuptiSets},            {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, kCuptiSyncs},
    {CUPTI_ACTIVITY_KIND_MARKER, kCuptiNvtx},
};
// The CUDA calls that launch, copy, set and wait. CUDA 13.0's CUPTI records none of them
// when they are enabled one by one alone (seen on the GPU machine, against its header's
// word), so the runtime and driver kinds are enabled whole and every other call is then
// switched off by its id (what Kineto does for the few it drops): no record for every
// cudaGetDevice and every polling cudaEventQuery.
constexpr CUpti_CallbackId kRuntimeCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,      CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,     CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,      CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
};
constexpr CUpti_CallbackId kDriverCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,   CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
};

// Our buffers carry this word just past the size CUPTI is given: a buffer without it is
// another client's (one that replaced our callbacks), neither read nor freed here.
constexpr uint64_t kBufferMagic = 0x636f6d6d6c656e73ULL;  // "commlens"

uint64_t CUPTIAPI RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI NoCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// A forked child (a data loader) records nothing of its parent's tracer.
void ForgetInChild() { g_current.store(nullptr); }

template <typename F>
bool Resolve(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

}  // namespace

CuptiBackend::CuptiBackend(std::string library, uint32_t kinds)
    : library_(std::move(library)), kinds_(kinds | kCuptiKernels), translator_([this](bool runtime, uint32_t cbid) {
        // Names were looked up at Start: no CUPTI call from inside its callback.
        auto it = api_names_.find((runtime ? 0x100000000ULL : 0) | cbid);
        return it != api_names_.end() ? it->second : std::string(runtime ? "cuda#" : "cu#") + std::to_string(cbid);
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
  auto fail = [&](StartResult r, std::string text) {
    *why = std::move(text);
    g_current = nullptr;
    return r;
  };
  const std::vector<std::string> candidates =
      library_.empty() ? std::vector<std::string>{"libcupti.so.13", "libcupti.so"} : std::vector<std::string>{library_};
  for (const std::string& name : candidates) {
    if (!handle_) handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle_)
    return fail(StartResult::kFailed, std::string("CUPTI could not be loaded (") + dlerror() +
                                          "): put the CUDA toolkit's or the nvidia-cuda-cupti package's lib folder on "
                                          "LD_LIBRARY_PATH, or name it in COMMLENS_CUPTI_LIBRARY");
  if (!api_) api_ = new Api;
  const bool resolved = Resolve(handle_, "cuptiSubscribe_v2", &api_->subscribe) &&
                        Resolve(handle_, "cuptiUnsubscribe", &api_->unsubscribe) &&
                        Resolve(handle_, "cuptiActivityRegisterCallbacks", &api_->register_callbacks) &&
                        Resolve(handle_, "cuptiActivityRegisterTimestampCallback", &api_->register_timestamp) &&
                        Resolve(handle_, "cuptiSetThreadIdType", &api_->set_thread_id_type) &&
                        Resolve(handle_, "cuptiActivityEnable", &api_->enable) &&
                        Resolve(handle_, "cuptiActivityEnableAndDump", &api_->enable_and_dump) &&
                        Resolve(handle_, "cuptiActivityDisable", &api_->disable) &&
                        Resolve(handle_, "cuptiActivityEnableRuntimeApi", &api_->enable_runtime_api) &&
                        Resolve(handle_, "cuptiActivityEnableDriverApi", &api_->enable_driver_api) &&
                        Resolve(handle_, "cuptiActivityFlushAll", &api_->flush_all) &&
                        Resolve(handle_, "cuptiActivityGetNextRecord", &api_->next_record) &&
                        Resolve(handle_, "cuptiActivityGetNumDroppedRecords", &api_->dropped) &&
                        Resolve(handle_, "cuptiGetResultString", &api_->result_string) &&
                        Resolve(handle_, "cuptiGetCallbackName", &api_->callback_name);
  Resolve(handle_, "cuptiGetStreamIdEx", &api_->stream_id);
  if (!resolved) return fail(StartResult::kFailed, "this CUPTI lacks a call the tracer needs (CUDA 13's CUPTI is expected)");
  // Another client? CUDA 13's CUPTI serves one subscriber: probe, and let go at once, so
  // that a PyTorch profiler started later still finds the slot free (Held probes again).
  std::string holder;
  const CUptiResult sub = Probe(&holder);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    return fail(StartResult::kSteppedAside, "another CUPTI client holds CUPTI" + holder);
  if (sub != CUPTI_SUCCESS) return fail(StartResult::kFailed, "CUPTI refused a subscriber: " + ResultText(sub));
  // Before any kind is enabled: the clock (records in another clock would be placed
  // wrong: refused) and the thread ids (kernel ids; pthread_self's otherwise).
  if (CUptiResult r = api_->register_timestamp(&RealtimeNs); r != CUPTI_SUCCESS)
    return fail(StartResult::kFailed, "CUPTI refused the CLOCK_REALTIME timestamps: " + ResultText(r));
  api_->set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (CUptiResult r = api_->register_callbacks(&OnBufferRequested, &OnBufferCompleted); r != CUPTI_SUCCESS)
    return fail(StartResult::kFailed, "CUPTI refused the activity buffers: " + ResultText(r));
  // The names of the calls traced, looked up once here.
  auto name_of = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    const char* name = nullptr;
    return api_->callback_name(domain, cbid, &name) == CUPTI_SUCCESS && name ? std::string(name) : std::string();
  };
  for (CUpti_CallbackId id : kRuntimeCalls) api_names_[0x100000000ULL | id] = name_of(CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (CUpti_CallbackId id : kDriverCalls) api_names_[id] = name_of(CUPTI_CB_DOMAIN_DRIVER_API, id);
  sink_ = sink;
  if (CUptiResult r = api_->enable(kKernels); r != CUPTI_SUCCESS) {
    sink_ = nullptr;
    // NOT_COMPATIBLE: another tool traces kernels.
    return fail(r == CUPTI_ERROR_NOT_COMPATIBLE ? StartResult::kSteppedAside : StartResult::kFailed,
                "CUPTI refused to trace kernels: " + ResultText(r));
  }
  wanted_ = {kKernels};
  for (const OptionalKind& k : kOptional)
    if ((kinds_ & k.asked_by) && api_->enable(k.kind) == CUPTI_SUCCESS) wanted_.push_back(k.kind);
  if (api_->enable_and_dump(CUPTI_ACTIVITY_KIND_CONTEXT) == CUPTI_SUCCESS) wanted_.push_back(CUPTI_ACTIVITY_KIND_CONTEXT);
  enabled_ = wanted_;
  TraceCalls(1);
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] { pthread_atfork(nullptr, nullptr, &ForgetInChild); });
  started_ = true;
  return StartResult::kTracing;
}

// Subscribes and lets go at once: CUPTI_SUCCESS when nobody else is subscribed;
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, |holder| " (its name)" or "", when
// another client is.
CUptiResult CuptiBackend::Probe(std::string* holder) {
  CUpti_SubscriberHandle probe = nullptr;
  char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "commlens";
  params.oldSubscriberName = name;
  params.oldSubscriberSize = sizeof(name) - 1;
  const CUptiResult sub = api_->subscribe(&probe, &NoCallback, nullptr, &params);
  if (sub == CUPTI_SUCCESS) api_->unsubscribe(probe);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && name[0]) *holder = std::string(" (") + name + ")";
  return sub;
}

// Once another client has subscribed, CUPTI's activity buffers and kinds are its too: the
// tracer lets them be from then on (Tracer::Drain).
bool CuptiBackend::Held(std::string* why) {
  if (!started_) return true;
  std::string holder;
  if (Probe(&holder) != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return true;
  *why = "another CUPTI client subscribed" + holder;
  started_ = false;  // no more CUPTI calls from here: they would change the other client's state
  return false;
}

bool CuptiBackend::StreamId(uint64_t stream, uint32_t* id) {
  if (!started_ || !api_->stream_id) return false;
  return api_->stream_id(nullptr, reinterpret_cast<CUstream>(stream), 0, id) == CUPTI_SUCCESS;
}

void CuptiBackend::EnableOurs() {
  enabled_.clear();
  for (CUpti_ActivityKind k : wanted_) {
    // Contexts made while paused are dumped with the ones that exist.
    const CUptiResult r = k == CUPTI_ACTIVITY_KIND_CONTEXT ? api_->enable_and_dump(k) : api_->enable(k);
    if (r == CUPTI_SUCCESS) enabled_.push_back(k);
  }
  TraceCalls(1);
}

void CuptiBackend::TraceCalls(uint8_t on) {
  if (!(kinds_ & kCuptiCalls)) return;
  if (!on) {
    api_->disable(CUPTI_ACTIVITY_KIND_RUNTIME);
    api_->disable(CUPTI_ACTIVITY_KIND_DRIVER);
    return;
  }
  // The whole kinds first (enabling one resets the per-call settings), then every call
  // not ours off.
  api_->enable(CUPTI_ACTIVITY_KIND_RUNTIME);
  api_->enable(CUPTI_ACTIVITY_KIND_DRIVER);
  auto ours = [](const auto& list, CUpti_CallbackId id) {
    return std::find(std::begin(list), std::end(list), id) != std::end(list);
  };
  for (CUpti_CallbackId id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id)
    api_->enable_runtime_api(id, ours(kRuntimeCalls, id));
  for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id)
    api_->enable_driver_api(id, ours(kDriverCalls, id));
}

void CuptiBackend::DisableOurs() {
  if (!api_) return;
  for (CUpti_ActivityKind k : enabled_) api_->disable(k);
  TraceCalls(0);
  enabled_.clear();
}

// Hands over what CUPTI has completed; |forced| also the buffers still being filled
// (their records up to the first unfinished one): only at the end.
void CuptiBackend::FlushBuffers(bool forced) {
  // Completed callbacks run on this thread inside the call: no lock is held here.
  api_->flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  size_t dropped = 0;
  if (api_->dropped(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0 && sink_) sink_->OnDropped(dropped);
}

void CuptiBackend::Flush() {
  if (started_) FlushBuffers(false);
}

void CuptiBackend::FlushAll() {
  if (started_) FlushBuffers(true);
}

// Paused: nothing is enabled, so CUPTI adds nothing to the job's CUDA calls and kernels;
// what was recorded before waits in its buffers for the next flush.
void CuptiBackend::SetPaused(bool paused) {
  if (!started_) return;
  if (paused) DisableOurs();
  else EnableOurs();
}

void CuptiBackend::Stop() {
  if (!started_) return;
  DisableOurs();  // first: nothing new is recorded into buffers handed over after this
  FlushBuffers(true);
  started_ = false;
}

void CUPTIAPI CuptiBackend::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // On the application's thread, inside a CUDA call: allocate and return, nothing more.
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes + sizeof(kBufferMagic)));
  if (b) std::memcpy(b + kBufferBytes, &kBufferMagic, sizeof(kBufferMagic));
  *buffer = b;
  *size = b ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI CuptiBackend::OnBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t valid) {
  if (!buffer || size != kBufferBytes) return;  // not one of ours
  uint64_t magic = 0;
  std::memcpy(&magic, buffer + size, sizeof(magic));
  if (magic != kBufferMagic) return;
  if (CuptiBackend* self = g_current.load()) self->Completed(buffer, valid);
  std::free(buffer);
}

void CuptiBackend::Completed(uint8_t* buffer, size_t valid) {
  if (!sink_ || !api_) return;
  std::lock_guard<std::mutex> lock(mu_);
  CUpti_Activity* record = nullptr;
  CUptiResult r;
  while ((r = api_->next_record(buffer, valid, &record)) == CUPTI_SUCCESS) translator_.Translate(record, sink_);
  // An unfinished record (a forced flush) ends the buffer early: what follows it is lost.
  if (r == CUPTI_ERROR_INVALID_KIND) sink_->OnDropped(1);
}

}  // namespace commlens::recorder::cupti
