// The benchmark's JSON file (schema "commlens.bench", version 1; docs/bench.md documents
// every field). Self-describing so that `commlens report --bench` can read it without
// knowing how it was produced: machine, GPUs, NCCL version, arguments, and per collective
// per size the nccl-tests columns plus percentiles.
#pragma once

#include <string>
#include <string_view>

#include "bench/result.h"
#include "common/file.h"
#include "common/status.h"

namespace commlens::bench {

inline constexpr std::string_view kBenchSchema = "commlens.bench";
inline constexpr int kBenchSchemaVersion = 1;

std::string BenchReportToJson(const BenchReport& report);
// Fails with a message naming |source| (a path, for messages) and the offending field.
Result<BenchReport> ParseBenchReport(std::string_view json_text, std::string_view source);
Status WriteBenchReport(const BenchReport& report, const std::string& path);
Result<BenchReport> ReadBenchReport(const std::string& path);

}  // namespace commlens::bench
