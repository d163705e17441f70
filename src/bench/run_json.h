// The run description (machine, GPUs, NCCL and CUDA versions) as the JSON object every
// `commlens bench` file starts with; shared by the collective, moe and jacobi files.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "bench/result.h"

namespace commlens::bench {

nlohmann::json RunToJson(const RunInfo& run);
// RunToJson plus what every file states first: its schema and version, the tool, units.
nlohmann::json BenchFileHeader(const RunInfo& run, std::string_view schema, int version,
                               nlohmann::json units);

}  // namespace commlens::bench
