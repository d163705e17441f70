#include "recorder/cupti_tracer/cupti_translate.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

namespace commlens::recorder::cupti {

namespace {

namespace nf = native_format;

// CUPTI's unsigned times and sizes in our signed fields (saturating, never negative).
int64_t Int64(uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); }

nf::CopyKindCode CopyKindOf(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return nf::CopyKindCode::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return nf::CopyKindCode::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return nf::CopyKindCode::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return nf::CopyKindCode::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return nf::CopyKindCode::kPtoP;
    default: return nf::CopyKindCode::kUnknown;
  }
}

const char* CopyName(nf::CopyKindCode k) {
  switch (k) {
    case nf::CopyKindCode::kHtoD: return "Memcpy HtoD";
    case nf::CopyKindCode::kDtoH: return "Memcpy DtoH";
    case nf::CopyKindCode::kDtoD: return "Memcpy DtoD";
    case nf::CopyKindCode::kHtoH: return "Memcpy HtoH";
    case nf::CopyKindCode::kPtoP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

const char* SyncName(uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Synchronize";
    default: return "Synchronize";
  }
}

// A GPU activity from the fields every CUPTI activity record with a time span names.
template <class Activity>
nf::GpuActivityRecord Gpu(nf::GpuActivityKind kind, const Activity& a, int32_t device) {
  nf::GpuActivityRecord g{};
  g.kind = static_cast<uint8_t>(kind);
  g.start_ns = Int64(a.start), g.end_ns = Int64(a.end);
  g.correlation = a.correlationId;
  g.device = device;
  g.context = a.contextId;
  g.stream = a.streamId;
  g.bytes = -1;
  return g;
}

}  // namespace

std::string_view Translator::KernelName(const char* mangled) {
  if (!mangled) return {};
  // Demangled once per name (by its text: a module unloaded and another loaded may reuse
  // the address of a name CUPTI gave before).
  auto it = names_.find(std::string_view(mangled));
  if (it == names_.end()) {
    it = names_.emplace(mangled, std::string()).first;
    int status = 0;
    char* plain = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    it->second = status == 0 && plain ? plain : mangled;
    std::free(plain);
    if (names_.size() > kMaxNames) {  // a JIT that names every kernel anew: start over
      std::string keep = std::move(it->second);
      names_.clear();
      it = names_.emplace(mangled, std::move(keep)).first;
    }
  }
  return it->second;
}

int32_t Translator::DeviceOf(uint32_t context, uint32_t device) {
  // A context's device does not change: noted once (per-kernel work on CUPTI's thread).
  if (context != last_context_) device_of_[context] = static_cast<int32_t>(device), last_context_ = context;
  return static_cast<int32_t>(device);
}

bool Translator::Translate(const CUpti_Activity* record, ActivitySink* sink) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (k->start == 0) return false;  // CUPTI could not time it
      sink->OnGpuActivity(Gpu(nf::GpuActivityKind::kKernel, *k, DeviceOf(k->contextId, k->deviceId)),
                          KernelName(k->name));
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      if (m->start == 0) return false;
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kMemcpy, *m, DeviceOf(m->contextId, m->deviceId));
      const nf::CopyKindCode kind = CopyKindOf(m->copyKind);
      g.copy_kind = static_cast<uint8_t>(kind);
      g.bytes = Int64(m->bytes);
      sink->OnGpuActivity(g, CopyName(kind));
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      if (m->start == 0) return false;
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kMemcpy, *m, DeviceOf(m->contextId, m->deviceId));
      g.copy_kind = static_cast<uint8_t>(nf::CopyKindCode::kPtoP);
      g.bytes = Int64(m->bytes);
      sink->OnGpuActivity(g, "Memcpy PtoP");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      if (m->start == 0) return false;
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kMemset, *m, DeviceOf(m->contextId, m->deviceId));
      g.bytes = Int64(m->bytes);
      sink->OnGpuActivity(g, "Memset");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      if (s->start == 0) return false;
      // Its device is its context's, learned from the context's records or any activity
      // of it; unknown (-1) until then.
      auto dev = device_of_.find(s->contextId);
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kSync, *s, dev == device_of_.end() ? -1 : dev->second);
      if (s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE) g.stream = 0;
      sink->OnGpuActivity(g, SyncName(s->type));
      return true;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(record);
      device_of_[c->contextId] = static_cast<int32_t>(c->deviceId);
      return false;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      nf::CudaApiRecord r{};
      r.start_ns = Int64(a->start), r.end_ns = Int64(a->end);
      r.correlation = a->correlationId;
      r.tid = static_cast<int32_t>(a->threadId);
      r.kind = static_cast<uint8_t>(runtime ? nf::CudaApiKind::kRuntime : nf::CudaApiKind::kDriver);
      sink->OnCudaApi(r, api_name_ ? api_name_(runtime, a->cbid) : std::string());
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      const int32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? static_cast<int32_t>(m->objectId.pt.threadId) : -1;
      const std::string_view name = m->name ? m->name : "", domain = m->domain ? m->domain : "";
      auto emit = [&](int64_t start, int64_t end, int32_t at, std::string_view name, std::string_view domain, uint8_t flags) {
        nf::RangeRecord r{};
        r.start_ns = start, r.end_ns = std::max(start, end), r.tid = at, r.flags = flags;
        sink->OnRange(r, name, domain);
      };
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        emit(Int64(m->timestamp), Int64(m->timestamp), tid, name, domain, nf::kRangeFlagMark);
        return true;
      }
      // A START and its END may come in either order (per-thread buffers are not ordered
      // with each other): whichever comes first waits for the other.
      const bool start = m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START;
      if (!start && !(m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)) return false;
      auto it = open_.find(m->id);
      if (it == open_.end()) {
        if (open_.size() >= kMaxOpen) open_.clear();  // ends that never come: start over
        Open o;
        o.time = Int64(m->timestamp), o.tid = tid, o.is_start = start;
        if (start) o.name = name, o.domain = domain;
        open_.emplace(m->id, std::move(o));
        return false;
      }
      const Open& other = it->second;
      if (other.is_start == start) return false;  // a repeat: ignore
      if (start) emit(Int64(m->timestamp), other.time, tid, name, domain, 0);
      else emit(other.time, Int64(m->timestamp), other.tid, other.name, other.domain, 0);
      open_.erase(it);
      return true;
    }
    default: return false;
  }
}

}  // namespace commlens::recorder::cupti
