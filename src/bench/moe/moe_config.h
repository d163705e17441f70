// What one `commlens bench moe` run measures: a MoE layer's token dispatch and combine
// shaped like DeepEP's normal kernels. Each rank holds |tokens| tokens of |hidden| bf16
// values; a seeded router sends each token to |topk| of |experts| experts, which are
// spread evenly over the ranks (expert e lives on rank e / (experts / nranks)).
// Defaults live here only; the CLI and docs/bench.md refer to them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "bench/bench_config.h"
#include "common/status.h"

namespace commlens::bench {

struct MoeConfig {
  int tokens = 4096;       // per rank (DeepSeek-V3 pre-training setting, DeepEP's default)
  int hidden = 7168;
  int experts = 256;
  int topk = 8;
  // Router skew: expert e is drawn with weight 1 / (e + 1)^imbalance, so 0 is uniform
  // and 1 sends about a fifth of the choices to the first tenth of the experts.
  double imbalance = 0;
  uint64_t seed = 1;
  int iters = 20;
  int warmup = 5;
  bool check = true;
  int ctas = 128;          // CTAs of the nccl-device and nvshmem exchange kernels
  std::vector<Backend> backends = {Backend::kNccl};
  std::string json_path;
  std::chrono::milliseconds timeout{60'000};
  Launcher launcher = Launcher::kAuto;
  int port = 0;

  int64_t token_bytes() const { return int64_t{hidden} * 2; }  // bf16
  bool operator==(const MoeConfig&) const = default;
};

// Checks ranges and combinations that do not depend on the rank count; the message names
// the offending option.
Status Validate(const MoeConfig& config);
// The checks that do: the experts must divide evenly over the ranks.
Status ValidateForRanks(const MoeConfig& config, int nranks);

}  // namespace commlens::bench
