// The results of `commlens bench moe`, their table and their JSON file (schema
// "commlens.bench.moe", docs/bench.md). Times are microseconds, bandwidths GB/s (1e9 B/s).
//
// Timing: CUDA events around each iteration's dispatch and combine on every rank; per
// iteration the maximum over ranks (the layer waits for its slowest rank), then
// percentiles and the mean over iterations. Bandwidth follows DeepEP's "logical" figure:
// the bytes the busiest rank receives (dispatch) or sends back (combine), its own tokens
// included, over the p50 time; remote_gbps counts only bytes that crossed to another rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/moe/moe_config.h"
#include "bench/result.h"
#include "common/status.h"

namespace commlens::bench {

struct MoePhaseResult {
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double min_us = 0;
  double max_us = 0;
  double gbps = 0;         // busiest rank's bytes (own tokens included) / p50
  double remote_gbps = 0;  // busiest rank's bytes from or to other ranks / p50
  std::optional<int64_t> wrong;  // wrong bf16 elements summed over ranks; nullopt: unchecked

  bool operator==(const MoePhaseResult&) const = default;
};

struct MoeBackendResult {
  std::string backend;
  MoePhaseResult dispatch;
  MoePhaseResult combine;

  bool operator==(const MoeBackendResult&) const = default;
};

// What the routing means for the traffic, the same for every backend.
struct MoeTraffic {
  int64_t token_bytes = 0;
  int64_t max_recv_tokens = 0;         // busiest rank: token copies received in dispatch
  int64_t max_remote_recv_tokens = 0;  // of which from other ranks
  int64_t total_token_copies = 0;      // over all ranks
  double mean_ranks_per_token = 0;     // destination ranks of a token, averaged

  bool operator==(const MoeTraffic&) const = default;
};

struct MoeReport {
  RunInfo run;
  MoeConfig config;
  MoeTraffic traffic;
  std::vector<MoeBackendResult> backends;

  int64_t WrongTotal() const;
};

std::string FormatMoeReport(const MoeReport& report);
std::string MoeReportToJson(const MoeReport& report);
Status WriteMoeReport(const MoeReport& report, const std::string& path);

}  // namespace commlens::bench
