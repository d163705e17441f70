#include "recorder/cupti_tracer/cupti_translate.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

namespace commlens::recorder::cupti {

namespace {

namespace nf = native_format;

int64_t Ns(uint64_t t) { return static_cast<int64_t>(std::min<uint64_t>(t, INT64_MAX)); }

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

nf::GpuActivityRecord Gpu(nf::GpuActivityKind kind, uint64_t start, uint64_t end, uint32_t correlation, uint32_t device,
                          uint32_t context, uint32_t stream) {
  nf::GpuActivityRecord g{};
  g.kind = static_cast<uint8_t>(kind);
  g.start_ns = Ns(start), g.end_ns = Ns(end);
  g.correlation = correlation;
  g.device = static_cast<int32_t>(device);
  g.context = context;
  g.stream = stream;
  g.bytes = -1;
  return g;
}

}  // namespace

const std::string& Translator::KernelName(const char* mangled) {
  static const std::string kNone;
  if (!mangled) return kNone;
  // CUPTI shares one name among the records of a kernel: demangled once per pointer.
  auto [it, added] = names_.try_emplace(mangled);
  if (added) {
    int status = 0;
    char* plain = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    it->second = status == 0 && plain ? plain : mangled;
    std::free(plain);
  }
  return it->second;
}

bool Translator::Translate(const CUpti_Activity* record, ActivitySink* sink) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (k->start == 0 && k->end == 0) return false;  // CUPTI could not time it
      sink->OnGpuActivity(Gpu(nf::GpuActivityKind::kKernel, k->start, k->end, k->correlationId, k->deviceId, k->contextId,
                              k->streamId),
                          KernelName(k->name));
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kMemcpy, m->start, m->end, m->correlationId, m->deviceId,
                                    m->contextId, m->streamId);
      const nf::CopyKindCode kind = CopyKindOf(m->copyKind);
      g.copy_kind = static_cast<uint8_t>(kind);
      g.bytes = static_cast<int64_t>(std::min<uint64_t>(m->bytes, INT64_MAX));
      sink->OnGpuActivity(g, CopyName(kind));
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kMemcpy, m->start, m->end, m->correlationId, m->deviceId,
                                    m->contextId, m->streamId);
      g.copy_kind = static_cast<uint8_t>(nf::CopyKindCode::kPtoP);
      g.bytes = static_cast<int64_t>(std::min<uint64_t>(m->bytes, INT64_MAX));
      sink->OnGpuActivity(g, "Memcpy PtoP");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kMemset, m->start, m->end, m->correlationId, m->deviceId,
                                    m->contextId, m->streamId);
      g.bytes = static_cast<int64_t>(std::min<uint64_t>(m->bytes, INT64_MAX));
      sink->OnGpuActivity(g, "Memset");
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      auto dev = device_of_.find(s->contextId);
      nf::GpuActivityRecord g = Gpu(nf::GpuActivityKind::kSync, s->start, s->end, s->correlationId,
                                    dev == device_of_.end() ? 0 : static_cast<uint32_t>(dev->second), s->contextId,
                                    s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId);
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
      r.start_ns = Ns(a->start), r.end_ns = Ns(a->end);
      r.correlation = a->correlationId;
      r.tid = static_cast<int32_t>(a->threadId);
      r.kind = static_cast<uint8_t>(runtime ? nf::CudaApiKind::kRuntime : nf::CudaApiKind::kDriver);
      sink->OnCudaApi(r, api_name_ ? api_name_(runtime, a->cbid) : std::string());
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      const int32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
                              ? static_cast<int32_t>(m->objectId.pt.threadId)
                              : -1;
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        nf::RangeRecord r{};
        r.start_ns = r.end_ns = Ns(m->timestamp);
        r.tid = tid;
        r.flags = nf::kRangeFlagMark;
        sink->OnRange(r, m->name ? m->name : "", m->domain ? m->domain : "");
        return true;
      }
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        open_[m->id] = {Ns(m->timestamp), tid, m->name ? m->name : "", m->domain ? m->domain : ""};
        return false;
      }
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = open_.find(m->id);
        if (it == open_.end()) return false;  // its START was not seen (before the tracer began)
        nf::RangeRecord r{};
        r.start_ns = it->second.start;
        r.end_ns = std::max(r.start_ns, Ns(m->timestamp));
        r.tid = it->second.tid;
        sink->OnRange(r, it->second.name, it->second.domain);
        open_.erase(it);
        return true;
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace commlens::recorder::cupti
