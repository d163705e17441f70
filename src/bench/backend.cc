#include "bench/backend.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

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
  std::vector<Backend> out;
  auto add = [&out](Backend b) {
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  };
  for (const std::string& item : names) {
    std::string_view rest = item;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (name.empty()) continue;
      if (name == "all") {
        for (size_t i = 0; i < kNames.size(); ++i) add(static_cast<Backend>(i));
        continue;
      }
      std::optional<Backend> b = BackendFromName(name);
      if (!b)
        return Error(fmt::format("unknown backend '{}'; expected {}", name, BackendChoices()));
      add(*b);
    }
  }
  if (out.empty()) out.push_back(Backend::kNccl);
  return out;
}

}  // namespace commlens::bench
