// The run description (machine, GPUs, NCCL and CUDA versions) as the JSON object every
// `commlens bench` file starts with; shared by the collective, moe and jacobi files.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/result.h"

namespace commlens::bench {

nlohmann::json RunToJson(const RunInfo& run);

}  // namespace commlens::bench
