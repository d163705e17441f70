#include "model/activity_class.h"

namespace commlens::model {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

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
  }
  return "other";
}

}  // namespace commlens::model
