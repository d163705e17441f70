#include "model/activity_class.h"

#include "common/strings.h"

namespace commlens::model {

namespace {

bool IsCommunication(std::string_view n) {
  return StartsWith(n, "nccl") || StartsWith(n, "hip") || StartsWith(n, "hccl") ||
         Contains(n, "ncclKernel");
}

bool IsMemory(std::string_view n) {
  return StartsWith(n, "Memcpy") || StartsWith(n, "Memset") || StartsWith(n, "hipMemcpy") ||
         StartsWith(n, "hipMemset") || StartsWith(n, "dma");
}

bool IsExcludedFromCompute(std::string_view n) {
  for (std::string_view p : {"nccl", "hip", "hccl", "runFunction", "job_exe", "packet", "pe_exe",
                             "cpum_exe_subgraph", "collective_subgraph_execution",
                             "Stream Wait Event"})
    if (StartsWith(n, p)) return true;
  for (std::string_view p : {"Memcpy", "Memset", "dma", "Sync"})
    if (Contains(n, p)) return true;
  // "cuda" ... "LaunchKernel"
  return StartsWith(n, "cuda") && n.find("LaunchKernel", 4) != std::string_view::npos;
}

}  // namespace

ActivityClass ClassifyActivity(std::string_view name, ActivityKind kind) {
  if (IsCommunication(name)) return ActivityClass::kCommunication;
  if (kind == ActivityKind::kMemcpy || kind == ActivityKind::kMemset || IsMemory(name))
    return ActivityClass::kMemory;
  if (kind == ActivityKind::kSync) return ActivityClass::kOther;
  if (!IsExcludedFromCompute(name)) return ActivityClass::kCompute;
  return ActivityClass::kOther;
}

std::string_view ActivityClassName(ActivityClass c) {
  switch (c) {
    case ActivityClass::kCompute:
      return "compute";
    case ActivityClass::kCommunication:
      return "communication";
    case ActivityClass::kMemory:
      return "memory";
    case ActivityClass::kOther:
      return "other";
    case ActivityClass::kUnclassified:
      return "unclassified";
  }
  return "other";
}

CopyKind CopyKindFromName(std::string_view name) {
  // CUPTI's names, as Kineto writes them: "Memcpy HtoD (Pageable -> Device)".
  static constexpr std::pair<std::string_view, CopyKind> kKinds[] = {
      {"HtoD", CopyKind::kHtoD}, {"DtoH", CopyKind::kDtoH}, {"DtoD", CopyKind::kDtoD},
      {"HtoH", CopyKind::kHtoH}, {"PtoP", CopyKind::kPtoP}};
  for (const auto& [text, kind] : kKinds)
    if (Contains(name, text)) return kind;
  return CopyKind::kUnknown;
}

std::string_view CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kNone: return "none";
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    case CopyKind::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace commlens::model
