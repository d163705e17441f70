// The correctness check's logic on the CPU: a naive reference of each collective moves
// the verifiable inputs between simulated ranks, and the comparison must find no wrong
// element in its output, and exactly the elements we corrupt.
#include "bench/verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bench/bench_config.h"
#include "bench/collective_table.h"

namespace commlens::bench {
namespace {

using Buffers = std::vector<std::vector<double>>;  // per rank

int64_t Reduce(RedOp op, const std::vector<int64_t>& v) {
  int64_t acc = v[0];
  for (size_t i = 1; i < v.size(); ++i) acc = Combine(op, acc, v[i]);
  return acc;
}

// What each collective does, written directly from its definition.
Buffers ReferenceCollective(const CollectiveSpec& spec, const CollCounts& c, const ValueGen& g,
                            RedOp op, int n, int root) {
  auto in = [&](int q, int64_t i) { return InputValue(g, q, i); };
  Buffers out(n, std::vector<double>(c.recv, -1.0));
  for (int r = 0; r < n; ++r) {
    for (int64_t j = 0; j < c.recv; ++j) {
      std::vector<int64_t> all;
      switch (spec.op) {
        case model::CommOp::kAllReduce:
        case model::CommOp::kReduce:
          for (int q = 0; q < n; ++q) all.push_back(in(q, j));
          if (spec.op == model::CommOp::kAllReduce || r == root) out[r][j] = Reduce(op, all);
          break;
        case model::CommOp::kReduceScatter:
          for (int q = 0; q < n; ++q) all.push_back(in(q, r * c.recv + j));
          out[r][j] = Reduce(op, all);
          break;
        case model::CommOp::kAllGather:
          out[r][j] = in(static_cast<int>(j / c.send), j % c.send);
          break;
        case model::CommOp::kAllToAll:
          out[r][j] = in(static_cast<int>(j / c.param), r * c.param + j % c.param);
          break;
        case model::CommOp::kBroadcast:
          out[r][j] = in(root, j);
          break;
        case model::CommOp::kSendRecv:
          out[r][j] = in((r - 1 + n) % n, j);
          break;
        default:
          break;
      }
    }
  }
  return out;
}

int64_t WrongOnRank(const CollectiveSpec& spec, const CollCounts& c, const ValueGen& g, RedOp op,
                    int n, int root, int rank, const std::vector<double>& out) {
  return CountWrong(out.data(), c.recv, g, spec.expect(c, rank, n, root), op);
}

class EveryCollective : public testing::TestWithParam<int> {};

TEST_P(EveryCollective, CorrectOutputHasNoWrongElementAndCorruptionIsCaught) {
  const CollectiveSpec& spec = Collectives()[GetParam()];
  for (int n : {1, 2, 4, 7}) {
    const int root = n - 1;
    CollCounts c = spec.counts(1000, 4, n);
    ValueGen g = MakeValueGen(DataType::kFloat, RedOp::kSum, spec.reduces, n, 42);
    Buffers out = ReferenceCollective(spec, c, g, RedOp::kSum, n, root);
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(WrongOnRank(spec, c, g, RedOp::kSum, n, root, r, out[r]), 0)
          << spec.name << " n=" << n << " rank " << r;
    if (c.recv < 2) continue;
    // One flipped element on the checked rank is exactly one wrong element...
    std::vector<double> bad = out[root];
    bad[c.recv / 2] += 1;
    EXPECT_EQ(WrongOnRank(spec, c, g, RedOp::kSum, n, root, root, bad), 1) << spec.name;
    // ...and the 0xFF poison (NaN) of an element never written is wrong too.
    bad = out[root];
    bad[0] = std::nan("");
    EXPECT_EQ(WrongOnRank(spec, c, g, RedOp::kSum, n, root, root, bad), 1) << spec.name;
    // A different seed's data (stale results from an earlier run) is caught.
    ValueGen other = MakeValueGen(DataType::kFloat, RedOp::kSum, spec.reduces, n, 43);
    EXPECT_GT(WrongOnRank(spec, c, other, RedOp::kSum, n, root, root, out[root]), 0)
        << spec.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, EveryCollective, testing::Range(0, 7),
                         [](const testing::TestParamInfo<int>& i) {
                           return std::string(Collectives()[i.param].name);
                         });

TEST(Verify, MisplacedSlicesAreCaught) {
  // All-gather with two rank slices swapped: every element of both slices is wrong
  // unless the values happen to coincide.
  const CollectiveSpec& spec = *FindCollective("all_gather");
  const int n = 4;
  CollCounts c = spec.counts(4096, 4, n);
  ValueGen g = MakeValueGen(DataType::kFloat, RedOp::kSum, false, n, 7);
  std::vector<double> out = ReferenceCollective(spec, c, g, RedOp::kSum, n, 0)[0];
  std::swap_ranges(out.begin(), out.begin() + c.send, out.begin() + c.send);
  EXPECT_GT(WrongOnRank(spec, c, g, RedOp::kSum, n, 0, 0, out), c.send);
}

// Rounds |x| to a binary floating type with |mantissa| explicit bits (round to nearest
// even), as each step of a reduction in that type would.
double RoundTo(double x, int mantissa) {
  if (x == 0) return 0;
  int e = static_cast<int>(std::floor(std::log2(std::fabs(x))));
  double ulp = std::ldexp(1.0, e - mantissa);
  return std::nearbyint(x / ulp) * ulp;
}

int MantissaBits(DataType t) {
  switch (t) {
    case DataType::kHalf: return 10;
    case DataType::kBfloat16: return 7;
    case DataType::kFp8E4M3: return 3;
    case DataType::kFp8E5M2: return 2;
    case DataType::kFloat: return 23;
    default: return 52;
  }
}

// Reduces n values in a random order, rounding every partial result; true when the
// result equals the exact integer reduction for every trial.
bool ExactInAnyOrder(DataType t, RedOp op, const ValueGen& g, int n, int64_t elements) {
  std::mt19937 rng(1);
  for (int64_t j = 0; j < elements; ++j) {
    std::vector<int64_t> v;
    for (int q = 0; q < n; ++q) v.push_back(InputValue(g, q, j));
    const double exact = static_cast<double>(Reduce(op, v));
    for (int trial = 0; trial < 3; ++trial) {
      std::shuffle(v.begin(), v.end(), rng);
      double acc = RoundTo(static_cast<double>(v[0]), MantissaBits(t));
      for (size_t i = 1; i < v.size(); ++i)
        acc = RoundTo(op == RedOp::kProd ? acc * v[i] : acc + v[i], MantissaBits(t));
      if (acc != exact) return false;
    }
  }
  return true;
}

TEST(Verify, InputsAreExactInNarrowTypesForAnyReductionOrder) {
  for (DataType t : {DataType::kBfloat16, DataType::kHalf, DataType::kFp8E4M3,
                     DataType::kFp8E5M2, DataType::kFloat}) {
    for (int n : {2, 4, 8, 64, 300}) {
      for (RedOp op : {RedOp::kSum, RedOp::kProd}) {
        ValueGen g = MakeValueGen(t, op, true, n, 5);
        EXPECT_TRUE(ExactInAnyOrder(t, op, g, n, 200))
            << Info(t).name << " n=" << n << " " << RedOpName(op);
      }
    }
  }
}

TEST(Verify, TheExactnessCheckCanFail) {
  // Values up to 63 from 64 ranks overflow bfloat16's exact range: the simulation must
  // notice, or the test above proves nothing.
  ValueGen g;
  g.nranks = 64;
  g.mode = ValueMode::kSum;
  g.active = 64;
  g.modulus = 64;
  EXPECT_FALSE(ExactInAnyOrder(DataType::kBfloat16, RedOp::kSum, g, 64, 200));
}

TEST(Verify, RangesFitEachType) {
  for (int i = 0; i < static_cast<int>(DataType::kCount); ++i) {
    DataType t = static_cast<DataType>(i);
    const int64_t limit = Info(t).exact_limit;
    for (int n : {1, 2, 4, 8, 1000}) {
      ValueGen sum = MakeValueGen(t, RedOp::kSum, true, n, 0);
      EXPECT_LE(sum.active * (sum.modulus - 1), limit) << Info(t).name << " n=" << n;
      EXPECT_GE(sum.modulus, 2) << Info(t).name << " n=" << n;  // never all zeros
      ValueGen prod = MakeValueGen(t, RedOp::kProd, true, n, 0);
      EXPECT_LE(int64_t{1} << prod.active, limit) << Info(t).name;
      ValueGen any = MakeValueGen(t, RedOp::kMax, true, n, 0);
      EXPECT_LE(any.modulus - 1, limit) << Info(t).name;
    }
  }
}

TEST(Verify, SumActiveRanksRotateWithTheIndex) {
  ValueGen g = MakeValueGen(DataType::kBfloat16, RedOp::kSum, true, 512, 3);
  EXPECT_EQ(g.active, 256);
  // Exactly |active| ranks may contribute to each element.
  for (int64_t j = 0; j < 20; ++j) {
    int contributing = 0;
    for (int q = 0; q < 512; ++q) contributing += (q + j) % 512 < g.active ? 1 : 0;
    EXPECT_EQ(contributing, 256);
  }
}

}  // namespace
}  // namespace commlens::bench
