#include "bench/backend.h"

#include <array>

#include <fmt/format.h>

#include "bench/name_list.h"

namespace commlens::bench {

namespace {

constexpr std::array<std::string_view, static_cast<size_t>(Backend::kCount)> kNames = {
    "nccl", "nccl-device", "nvshmem"};

}  // namespace

std::string_view BackendName(Backend backend) {
  size_t i = static_cast<size_t>(backend);
  return i < kNames.size() ? kNames[i] : "unknown";
}

std::optional<Backend> BackendFromName(std::string_view name) {
  if (name == "nccl_device" || name == "device") name = "nccl-device";
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Backend>(i);
  return std::nullopt;
}

std::string_view BackendInitiator(Backend backend) {
  return backend == Backend::kNccl ? "CPU" : "GPU";
}

std::string BackendChoices() { return fmt::format("{}|all", fmt::join(kNames, "|")); }

Result<std::vector<Backend>> ParseBackends(const std::vector<std::string>& names) {
  COMMLENS_ASSIGN_OR_RETURN(std::vector<Backend> out,
                            ParseNameList<Backend>(names, kNames.size(), BackendFromName,
                                                   "backend", BackendChoices()));
  if (out.empty()) out.push_back(Backend::kNccl);
  return out;
}

}  // namespace commlens::bench
