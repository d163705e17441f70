#include "bench/errors.h"

#include <string_view>

#include "common/strings.h"

namespace commlens::bench {

namespace {
constexpr std::string_view kTimeoutTag = "timeout: ";
constexpr std::string_view kNoGpuTag = "no GPU: ";
constexpr std::string_view kUsageTag = "usage: ";
}  // namespace

Status TimeoutError(const std::string& message) {
  return Error(std::string(kTimeoutTag) + message);
}
Status NoGpuError(const std::string& message) { return Error(std::string(kNoGpuTag) + message); }
Status UsageError(const std::string& message) { return Error(std::string(kUsageTag) + message); }

ExitCode ExitCodeFor(const Status& status) {
  if (status.ok()) return ExitCode::kOk;
  const std::string& m = status.message();
  if (StartsWith(m, kTimeoutTag)) return ExitCode::kTimeout;
  if (StartsWith(m, kNoGpuTag)) return ExitCode::kNoGpu;
  if (StartsWith(m, kUsageTag)) return ExitCode::kUsage;
  return ExitCode::kRuntime;
}

}  // namespace commlens::bench
