#include "bench/jacobi/jacobi_config.h"

#include <array>

#include <fmt/format.h>

#include "bench/name_list.h"

namespace commlens::bench {

namespace {

constexpr std::array<std::string_view, static_cast<size_t>(JacobiVariant::kCount)> kNames = {
    "nccl", "nccl-overlap", "nccl-graph", "nvshmem", "nvshmem-nb"};

}  // namespace

std::string_view JacobiVariantName(JacobiVariant v) {
  size_t i = static_cast<size_t>(v);
  return i < kNames.size() ? kNames[i] : "unknown";
}

std::optional<JacobiVariant> JacobiVariantFromName(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<JacobiVariant>(i);
  return std::nullopt;
}

std::string JacobiVariantChoices() { return fmt::format("{}|all", fmt::join(kNames, "|")); }

bool UsesNvshmem(JacobiVariant v) {
  return v == JacobiVariant::kNvshmem || v == JacobiVariant::kNvshmemNb;
}

Result<std::vector<JacobiVariant>> ParseJacobiVariants(const std::vector<std::string>& names) {
  COMMLENS_ASSIGN_OR_RETURN(std::vector<JacobiVariant> out,
                            ParseNameList<JacobiVariant>(names, kNames.size(),
                                                         JacobiVariantFromName, "variant",
                                                         JacobiVariantChoices()));
  if (out.empty()) out.push_back(JacobiVariant::kNccl);
  return out;
}

Status Validate(const JacobiConfig& c) {
  if (c.nx < 3) return Error("--nx must be >= 3 (two fixed boundary columns and one computed)");
  if (c.ny < 1) return Error("--ny must be >= 1");
  if (c.iters < 2) return Error("-n/--iters must be >= 2");
  if (c.warmup < 0) return Error("-w/--warmup must be >= 0");
  if (c.check_nx < 3 || c.check_ny < 1 || c.check_iters < 1)
    return Error("the check grid needs --check-nx >= 3, --check-ny >= 1, --check-iters >= 1");
  if (c.timeout.count() <= 0) return Error("--timeout must be positive");
  if (c.port < 0 || c.port > 65535) return Error("--port must be in [0, 65535]");
  if (c.variants.empty()) return Error("no variant to run");
  return OkStatus();
}

Status ValidateForRanks(const JacobiConfig& c, int nranks) {
  if (c.ny < nranks)
    return Error(fmt::format("--ny {} gives fewer rows than the {} ranks", c.ny, nranks));
  if (c.check && c.check_ny < nranks)
    return Error(fmt::format("--check-ny {} gives fewer rows than the {} ranks", c.check_ny,
                             nranks));
  return OkStatus();
}

}  // namespace commlens::bench
