// The results of `commlens bench jacobi`, their table and their JSON file (schema
// "commlens.bench.jacobi", docs/bench.md).
//
// Timing: after the warm-up iterations every rank barriers, then the host clock spans
// |iters| iterations up to the stream's end; the per-iteration time is the slowest rank's
// total / iters. The one-GPU time runs the same kernel on the whole grid with local
// halo copies. Parallel efficiency = T1 / (n x Tn): 100 % is perfect strong scaling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/jacobi/jacobi_config.h"
#include "bench/result.h"
#include "common/status.h"

namespace commlens::bench {

struct JacobiVariantResult {
  std::string variant;
  double iteration_us = 0;   // slowest rank's total / iters
  double speedup = 0;        // single-GPU iteration / iteration_us (0 without a single-GPU run)
  double efficiency = 0;     // speedup / nranks
  // The check on the small grid: elements that differ from the CPU reference (exact
  // equality: every kernel computes the same float operations, stencil.h); nullopt when
  // not checked.
  std::optional<int64_t> wrong;
  double max_abs_diff = 0;

  bool operator==(const JacobiVariantResult&) const = default;
};

struct JacobiReport {
  RunInfo run;
  JacobiConfig config;
  double single_gpu_iteration_us = 0;  // 0: not run
  std::vector<JacobiVariantResult> variants;

  int64_t WrongTotal() const;
};

std::string FormatJacobiReport(const JacobiReport& report);
std::string JacobiReportToJson(const JacobiReport& report);
Status WriteJacobiReport(const JacobiReport& report, const std::string& path);

}  // namespace commlens::bench
