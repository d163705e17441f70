#include "analysis/kernel_breakdown.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analysis/intervals.h"
#include "common/saturating.h"

namespace commlens::analysis {

using model::ActivityClass;

std::string ClassStateLabel(uint8_t bits) {
  std::string s;
  auto add = [&](const char* part) {
    if (!s.empty()) s += "+";
    s += part;
  };
  if (bits & kComputeBit) add("compute");
  if (bits & kCommBit) add("communication");
  if (bits & kMemoryBit) add("memory");
  return s.empty() ? "none" : s;
}

namespace {

struct Edge {
  model::TimeNs t;
  int8_t delta;  // +1 start, -1 end
  uint8_t bit;
};

std::array<model::TimeNs, 8> SweepClassStates(const std::array<IntervalList, 3>& merged) {
  static constexpr uint8_t kBits[3] = {kComputeBit, kCommBit, kMemoryBit};
  std::vector<Edge> edges;
  for (int c = 0; c < 3; ++c)
    for (const Interval& iv : merged[c]) {
      edges.push_back({iv.start, +1, kBits[c]});
      edges.push_back({iv.end, -1, kBits[c]});
    }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::array<model::TimeNs, 8> time{};
  uint8_t state = 0;
  model::TimeNs last = 0;
  for (const Edge& e : edges) {
    if (state != 0) time[state] += e.t - last;
    // Each class's intervals are merged, so a class is simply on or off.
    state = e.delta > 0 ? static_cast<uint8_t>(state | e.bit) : static_cast<uint8_t>(state & ~e.bit);
    last = e.t;
  }
  return time;
}

void SortKernels(std::vector<KernelStat>* kernels) {
  std::sort(kernels->begin(), kernels->end(), [](const KernelStat& a, const KernelStat& b) {
    return a.total > b.total || (a.total == b.total && a.name < b.name);
  });
}

}  // namespace

KernelBreakdown ComputeKernelBreakdown(const model::RankTrace& rank,
                                       const std::vector<uint32_t>& rows, size_t top_n) {
  const model::GpuActivities& g = rank.gpu;
  KernelBreakdown out;
  std::array<IntervalList, 3> by_class;
  struct Acc {
    ActivityClass cls;
    uint64_t n = 0;
    model::TimeNs total = 0, min = INT64_MAX, max = 0;
    double sum_sq = 0;
  };
  std::unordered_map<uint32_t, Acc> acc;
  for (uint32_t i : rows) {
    model::TimeNs d = g.end[i] - g.start[i];
    int c = static_cast<int>(g.cls[i]);
    if (c >= static_cast<int>(out.class_total.size())) continue;  // unclassified: FinishRank was not run
    out.class_total[c] = SaturatingAdd(out.class_total[c], d);  // times up to 2^62 import (nsys_fuzzer)
    if (c < 3) by_class[c].push_back({g.start[i], g.end[i]});
    Acc& a = acc[g.name[i].value];
    a.cls = g.cls[i];
    ++a.n;
    a.total = SaturatingAdd(a.total, d);
    a.min = std::min(a.min, d);
    a.max = std::max(a.max, d);
    a.sum_sq += static_cast<double>(d) * d;
  }
  // Class indices 0..2 are compute, communication, memory (model::ActivityClass order).
  for (auto& list : by_class) Merge(&list);
  out.state_time = SweepClassStates(by_class);

  out.top_n = top_n;
  out.kernels.reserve(acc.size());
  for (const auto& [name, a] : acc) {
    KernelStat s;
    s.name = std::string(rank.strings.Get(model::StringId{name}));
    s.cls = a.cls;
    s.count = a.n;
    s.total = a.total;
    s.min = a.min;
    s.max = a.max;
    s.mean = static_cast<double>(a.total) / a.n;
    double var = a.sum_sq / a.n - s.mean * s.mean;
    s.stddev = var > 0 ? std::sqrt(var) : 0.0;
    out.kernels.push_back(std::move(s));
  }
  SortKernels(&out.kernels);
  return out;
}

model::TimeNs KernelBreakdown::busy() const {
  model::TimeNs sum = 0;
  for (size_t b = 1; b < state_time.size(); ++b) sum = SaturatingAdd(sum, state_time[b]);
  return sum;
}

model::TimeNs KernelBreakdown::rest_total() const {
  model::TimeNs rest = 0;
  for (size_t k = top_n; k < kernels.size(); ++k) rest += kernels[k].total;
  return rest;
}

KernelBreakdown MergeKernelBreakdowns(const std::vector<const KernelBreakdown*>& ranks, size_t top_n) {
  KernelBreakdown out;
  out.top_n = top_n;
  struct Acc {
    KernelStat s;
    double m2 = 0;  // sum of squared deviations from the mean (Chan et al.'s merge)
  };
  std::unordered_map<std::string_view, Acc> merged;
  for (const KernelBreakdown* k : ranks) {
    for (int b = 0; b < 8; ++b) out.state_time[b] += k->state_time[b];
    for (int c = 0; c < 4; ++c) out.class_total[c] += k->class_total[c];
    for (const KernelStat& s : k->kernels) {
      auto [it, added] = merged.try_emplace(s.name);
      Acc& a = it->second;
      const double m2 = s.stddev * s.stddev * static_cast<double>(s.count);
      if (added) {
        a.s = s;
        a.m2 = m2;
        continue;
      }
      const double n1 = static_cast<double>(a.s.count), n2 = static_cast<double>(s.count);
      const double delta = s.mean - a.s.mean;
      a.m2 += m2 + delta * delta * n1 * n2 / (n1 + n2);
      a.s.count += s.count;
      a.s.total += s.total;
      a.s.min = std::min(a.s.min, s.min);
      a.s.max = std::max(a.s.max, s.max);
      a.s.mean = static_cast<double>(a.s.total) / static_cast<double>(a.s.count);
    }
  }
  out.kernels.reserve(merged.size());
  for (auto& [name, a] : merged) {
    a.s.stddev = a.s.count ? std::sqrt(std::max(0.0, a.m2 / static_cast<double>(a.s.count))) : 0.0;
    out.kernels.push_back(std::move(a.s));
  }
  SortKernels(&out.kernels);
  return out;
}

}  // namespace commlens::analysis
