#include "bench/moe/moe_config.h"

#include <fmt/format.h>

namespace commlens::bench {

Status Validate(const MoeConfig& c) {
  if (c.tokens < 1) return Error("--tokens must be >= 1");
  if (c.hidden < 8 || c.hidden % 8 != 0)
    return Error("--hidden must be a positive multiple of 8 (tokens move as 16-byte vectors)");
  if (c.experts < 1) return Error("--experts must be >= 1");
  if (c.topk < 1 || c.topk > c.experts)
    return Error(fmt::format("--topk must be in [1, --experts ({})]", c.experts));
  // The combine sums topk copies of inputs in [-4, 4]; bf16 holds integers exactly up to
  // 256, so the check stays exact up to topk 64.
  if (c.topk > 64) return Error("--topk must be <= 64 (the combine check is exact up to 64)");
  if (c.imbalance < 0) return Error("--imbalance must be >= 0");
  if (c.iters < 1) return Error("-n/--iters must be >= 1");
  if (c.ctas < 1 || c.ctas > 1024) return Error("--ctas must be in [1, 1024]");
  if (c.warmup < 0) return Error("-w/--warmup must be >= 0");
  if (c.timeout.count() <= 0) return Error("--timeout must be positive");
  if (c.port < 0 || c.port > 65535) return Error("--port must be in [0, 65535]");
  if (c.backends.empty()) return Error("no backend to run");
  return OkStatus();
}

Status ValidateForRanks(const MoeConfig& c, int nranks) {
  if (c.experts % nranks != 0)
    return Error(fmt::format("--experts {} does not divide evenly over {} ranks", c.experts,
                             nranks));
  return OkStatus();
}

}  // namespace commlens::bench
