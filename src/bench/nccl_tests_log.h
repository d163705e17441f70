// nccl-tests' text output (the stdout of all_reduce_perf and its siblings, one or more
// collectives, concatenated logs too) read into a BenchReport, so that `commlens report
// --bench RUN.json --baseline all_reduce_perf.log` holds a commlens run against the
// nccl-tests numbers users already have.
//
// What the log gives: the version line, the "nThread ... iters: N ... graph: G" line, one
// "Rank r ... on HOST device d [bus] NAME" line per rank, and per size the 13 table
// columns. What it lacks (percentiles, the CUDA versions) stays zero. NCCL's own
// INFO/WARN lines in the log are skipped; a table row that does not parse is an error
// naming the line.
#pragma once

#include <string>
#include <string_view>

#include "bench/result.h"
#include "common/status.h"

namespace commlens::bench {

// |source| names the input in messages (a path).
Result<BenchReport> ParseNcclTestsLog(std::string_view text, std::string_view source);
// Reads a commlens.bench JSON file, or else an nccl-tests log.
Result<BenchReport> ReadBenchOrNcclTests(const std::string& path);

}  // namespace commlens::bench
