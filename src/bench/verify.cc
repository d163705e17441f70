#include "bench/verify.h"

#include <algorithm>

#include "bench/bench_config.h"

namespace commlens::bench {

namespace {
constexpr int64_t kMaxSumModulus = 64;
constexpr int64_t kMaxAnyValue = 250;
}  // namespace

ValueGen MakeValueGen(DataType type, RedOp op, bool reduces, int nranks, uint32_t seed) {
  const int64_t limit = Info(type).exact_limit;
  ValueGen g;
  g.seed = seed;
  g.nranks = std::max(nranks, 1);
  if (!reduces || op == RedOp::kMax || op == RedOp::kMin) {
    g.mode = ValueMode::kAny;
    g.modulus = std::min(limit, kMaxAnyValue) + 1;
    return g;
  }
  if (op == RedOp::kSum) {
    g.mode = ValueMode::kSum;
    g.active = static_cast<int>(std::min<int64_t>(g.nranks, limit));
    g.modulus = std::min(kMaxSumModulus, limit / g.active + 1);
    return g;
  }
  // kProd: at most floor(log2(limit)) factors of two.
  int log2_limit = 0;
  while ((int64_t{2} << log2_limit) <= limit && log2_limit < 62) ++log2_limit;
  g.mode = ValueMode::kProd;
  g.active = std::min(g.nranks, log2_limit);
  return g;
}

}  // namespace commlens::bench
