// The MoE router and the dispatch/combine layouts every backend follows (moe_plan.h).
#include "bench/moe/moe_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace commlens::bench {
namespace {

MoeConfig Small() {
  MoeConfig c;
  c.tokens = 64;
  c.hidden = 16;
  c.experts = 16;
  c.topk = 4;
  return c;
}

TEST(MoeRouter, DistinctExpertsSameOnEveryCallAndSeedDependent) {
  MoeConfig c = Small();
  for (int t = 0; t < c.tokens; ++t) {
    std::vector<int> e = RouteToken(c, 1, t);
    ASSERT_EQ(e.size(), 4u);
    EXPECT_EQ(std::set<int>(e.begin(), e.end()).size(), 4u);
    for (int x : e) EXPECT_TRUE(x >= 0 && x < c.experts);
    EXPECT_EQ(e, RouteToken(c, 1, t));
  }
  MoeConfig other = c;
  other.seed = 2;
  int differ = 0;
  for (int t = 0; t < c.tokens; ++t) differ += RouteToken(c, 0, t) != RouteToken(other, 0, t);
  EXPECT_GT(differ, c.tokens / 2);
}

TEST(MoeRouter, ImbalanceFavoursTheFirstExperts) {
  MoeConfig c = Small();
  c.tokens = 2000;
  c.experts = 64;
  c.topk = 2;
  auto share_of_first_tenth = [&](double imbalance) {
    c.imbalance = imbalance;
    int first = 0, all = 0;
    for (int t = 0; t < c.tokens; ++t)
      for (int e : RouteToken(c, 0, t)) {
        first += e < 6;
        ++all;
      }
    return static_cast<double>(first) / all;
  };
  EXPECT_NEAR(share_of_first_tenth(0), 6.0 / 64, 0.03);
  EXPECT_GT(share_of_first_tenth(1.0), 0.35);
}

// Rebuilds every rank's plan and checks that senders and receivers agree exactly.
TEST(MoePlan, SendersAndReceiversAgree) {
  for (int nranks : {1, 2, 4}) {
    MoeConfig c = Small();
    c.imbalance = 0.7;
    std::vector<MoePlan> plans;
    for (int r = 0; r < nranks; ++r) plans.push_back(PlanMoe(c, r, nranks));
    const int64_t tb = c.token_bytes();
    for (int r = 0; r < nranks; ++r) {
      const MoePlan& p = plans[r];
      std::vector<PeerCopy> dispatch = DispatchCopies(p, tb);
      for (int d = 0; d < nranks; ++d) {
        const MoePlan& q = plans[d];
        // r's tokens for d land in d's receive buffer in d's block for source r.
        EXPECT_EQ(dispatch[d].dst_offset, q.recv_begin[r] * tb);
        EXPECT_EQ(dispatch[d].bytes, (q.recv_begin[r + 1] - q.recv_begin[r]) * tb);
        EXPECT_TRUE(std::equal(p.send_tokens.begin() + p.send_begin[d],
                               p.send_tokens.begin() + p.send_begin[d + 1],
                               q.recv_from_token.begin() + q.recv_begin[r]));
        // and go back to where r sent them from.
        const PeerCopy back = CombineCopies(q, tb)[r];
        EXPECT_EQ(back.dst_offset, p.send_begin[d] * tb);
        EXPECT_EQ(back.bytes, dispatch[d].bytes);
        EXPECT_LE(q.recv_rows(), p.max_recv_rows);
        EXPECT_LE(q.send_rows(), p.max_send_rows);
      }
    }
  }
}

// Each token goes once to every rank holding one of its experts, and its combine sums
// topk expert outputs in all.
TEST(MoePlan, DispatchDeduplicatesAndCombineWeightsSumToTopk) {
  MoeConfig c = Small();
  const int nranks = 4;
  MoePlan p = PlanMoe(c, 2, nranks);
  const int per_rank = c.experts / nranks;
  for (int t = 0; t < c.tokens; ++t) {
    std::set<int> ranks;
    for (int e : RouteToken(c, 2, t)) ranks.insert(e / per_rank);
    EXPECT_EQ(p.combine_begin[t + 1] - p.combine_begin[t], static_cast<int64_t>(ranks.size()));
    int weights = 0;
    for (int64_t j = p.combine_begin[t]; j < p.combine_begin[t + 1]; ++j) {
      weights += p.combine_weight[j];
      // The row it comes back to holds this token.
      EXPECT_EQ(p.send_tokens[p.combine_rows[j]], t);
    }
    EXPECT_EQ(weights, c.topk);
  }
  EXPECT_EQ(p.remote_send_rows() + (p.send_begin[3] - p.send_begin[2]), p.send_rows());
}

TEST(MoePlan, InputValuesStayExactInBf16) {
  for (int t = 0; t < 100; ++t)
    for (int h = 0; h < 50; ++h) {
      float v = MoeInputValue(3, t, h);
      EXPECT_LE(std::abs(v), 4.0f);
      EXPECT_EQ(FromBf16Bits(ToBf16Bits(v * 64)), v * 64);
    }
}

TEST(MoeConfig, ValidatesItsOptions) {
  MoeConfig c;
  EXPECT_TRUE(Validate(c).ok());
  c.hidden = 12;
  EXPECT_NE(Validate(c).message().find("--hidden"), std::string::npos);
  c = MoeConfig();
  c.topk = 65;
  c.experts = 256;
  EXPECT_NE(Validate(c).message().find("--topk"), std::string::npos);
  EXPECT_NE(ValidateForRanks(MoeConfig(), 3).message().find("does not divide"),
            std::string::npos);
  EXPECT_TRUE(ValidateForRanks(MoeConfig(), 8).ok());
}

}  // namespace
}  // namespace commlens::bench
