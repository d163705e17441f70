// Exit codes of `commlens bench` and the error kinds that map onto them. A kind is
// carried by a fixed prefix of the Status message ("timeout: ...", "no GPU: ..."), which
// also tells the user what went wrong.
#pragma once

#include <string>

#include "common/status.h"

namespace commlens::bench {

enum class ExitCode : int {
  kOk = 0,
  kWrongResults = 1,  // the run finished but some results were wrong
  kUsage = 64,        // bad arguments or environment (the CLI's usage code, cli/verbs.h)
  kNoGpu = 3,         // no GPU support in this build, no GPU, or fewer GPUs than asked
  kRuntime = 4,       // CUDA or NCCL failed
  kTimeout = 5,       // a peer or an operation did not answer within --timeout
};

Status TimeoutError(const std::string& message);
Status NoGpuError(const std::string& message);
Status UsageError(const std::string& message);
ExitCode ExitCodeFor(const Status& status);

}  // namespace commlens::bench
