// Who moves the bytes of an exchange benchmark (alltoall, moe): NCCL's host-launched
// collectives, NCCL's device API (GPU-initiated load/store over NVLink, "LSA"), or
// NVSHMEM (GPU-initiated puts). The first is CPU-initiated, the other two GPU-initiated;
// comparing them at a user's sizes is what `--backend all` is for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace commlens::bench {

enum class Backend : uint8_t { kNccl, kNcclDevice, kNvshmem, kCount };

std::string_view BackendName(Backend backend);  // "nccl", "nccl-device", "nvshmem"
std::optional<Backend> BackendFromName(std::string_view name);
// "CPU" for kNccl, "GPU" for the device-initiated ones.
std::string_view BackendInitiator(Backend backend);
// Names from --backend (each may be "all", or a comma-separated list), in the order
// given, duplicates dropped; empty input gives {kNccl}.
Result<std::vector<Backend>> ParseBackends(const std::vector<std::string>& names);
// "nccl|nccl-device|nvshmem|all", for help texts and messages.
std::string BackendChoices();

}  // namespace commlens::bench
