// What one `commlens bench jacobi` run measures: the 2-D Jacobi solver with halo exchange
// over a grid of nx columns by ny rows, split by rows over the ranks, in one or more
// variants of how the halos move:
//   nccl          compute all rows, then exchange halos with ncclSend/ncclRecv (grouped)
//   nccl-overlap  boundary rows first on a high-priority stream whose halo exchange
//                 overlaps the interior rows on the other stream
//   nccl-graph    nccl-overlap captured once into a CUDA graph (two iterations, so the
//                 buffer swap returns), relaunched
//   nvshmem       a kernel computes the boundary rows and puts them into the neighbours'
//                 halos itself (GPU-initiated), the interior kernel follows; a barrier on
//                 the stream ends each iteration
//   nvshmem-nb    the same puts with a signal per 32-column segment; a boundary warp waits
//                 for its neighbour's segment of the previous iteration, no barrier
// Defaults live here only; the CLI and docs/bench.md refer to them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_config.h"
#include "common/status.h"

namespace commlens::bench {

enum class JacobiVariant : uint8_t { kNccl, kNcclOverlap, kNcclGraph, kNvshmem, kNvshmemNb, kCount };

std::string_view JacobiVariantName(JacobiVariant variant);
std::optional<JacobiVariant> JacobiVariantFromName(std::string_view name);
// Comma-separated names or "all"; order kept, duplicates dropped.
Result<std::vector<JacobiVariant>> ParseJacobiVariants(const std::vector<std::string>& names);
std::string JacobiVariantChoices();
bool UsesNvshmem(JacobiVariant variant);

struct JacobiConfig {
  int nx = 16384;          // columns, the first and last fixed (Dirichlet)
  int ny = 16384;          // rows, periodic
  int iters = 1000;
  int warmup = 10;
  bool check = true;       // also run each variant on a small grid against the CPU reference
  int check_nx = 256;
  int check_ny = 256;
  int check_iters = 100;
  bool single_gpu = true;  // time one GPU on the whole grid, for the parallel efficiency
  std::vector<JacobiVariant> variants = {JacobiVariant::kNccl};
  std::string json_path;
  std::chrono::milliseconds timeout{60'000};
  Launcher launcher = Launcher::kAuto;
  int port = 0;

  bool operator==(const JacobiConfig&) const = default;
};

Status Validate(const JacobiConfig& config);
// Each rank needs at least one row of both grids.
Status ValidateForRanks(const JacobiConfig& config, int nranks);

}  // namespace commlens::bench
