// What a rank's GPU did in a stretch of time [lo, hi): compute kernel time, communication
// of other process groups, and idle time (no GPU activity at all), each clipped to the
// stretch. Rows are found by binary search on the start-sorted activities (long ones
// apart, below), so a query costs about the rows it overlaps.
//
// The cross-rank analyses ask through StretchSource: the trace's own GPU tables
// (TraceStretches), or, where the tables stayed with the processes that imported the
// ranks, questions gathered in one pass and answered in the next (stretch_questions.h).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

struct Stretch {
  model::TimeNs length = 0;
  model::TimeNs compute = 0;     // compute kernels (summed, clipped)
  model::TimeNs other_comm = 0;  // communication kernels of other process groups
  model::TimeNs idle = 0;        // no GPU activity on any stream
};

using OnCompute = std::function<void(std::string_view name, model::TimeNs time)>;

class GpuStretches {
 public:
  // A query looks back from |lo| only as far as the longest short activity (at most
  // kShort); the few longer ones (a hung collective's kernel runs for seconds) are kept
  // apart, so one of them costs one extra row per query instead of a scan of everything
  // it spans. Memory: an index per long activity only.
  static constexpr model::TimeNs kShort = 1'000'000;  // 1 ms

  explicit GpuStretches(const model::RankTrace& rank) : rank_(rank) {
    const model::GpuActivities& g = rank.gpu;
    for (uint32_t i = 0; i < g.size(); ++i) {
      const model::TimeNs d = g.end[i] - g.start[i];
      if (d > kShort) {
        long_rows_.push_back(i);
        longest_long_ = std::max(longest_long_, d);
      } else {
        longest_short_ = std::max(longest_short_, d);
      }
    }
  }

  // |own_group|: the job group whose communication is not "other". |on_compute| is
  // called with each compute kernel's name and clipped time, when given.
  Stretch Measure(model::TimeNs lo, model::TimeNs hi, uint32_t own_group, const OnCompute& on_compute = {}) const {
    Stretch s;
    if (hi <= lo) return s;
    s.length = hi - lo;
    const model::GpuActivities& g = rank_.gpu;
    // The rows that overlap [lo, hi), in start order (row order is start order): short
    // ones from the start-sorted table, long ones from their own list.
    rows_.clear();
    const auto first = std::lower_bound(g.start.begin(), g.start.end(), lo - longest_short_);
    for (size_t i = static_cast<size_t>(first - g.start.begin()); i < g.size() && g.start[i] < hi; ++i)
      if (g.end[i] > lo && g.end[i] - g.start[i] <= kShort) rows_.push_back(static_cast<uint32_t>(i));
    const auto first_long = std::lower_bound(long_rows_.begin(), long_rows_.end(), lo - longest_long_,
                                             [&](uint32_t row, model::TimeNs t) { return g.start[row] < t; });
    for (auto it = first_long; it != long_rows_.end() && g.start[*it] < hi; ++it)
      if (g.end[*it] > lo) rows_.push_back(*it);
    if (!long_rows_.empty()) std::sort(rows_.begin(), rows_.end());
    model::TimeNs covered_to = lo, busy = 0;
    for (uint32_t i : rows_) {
      const model::TimeNs a = std::max(g.start[i], lo), b = std::min(g.end[i], hi);
      if (b <= a) continue;
      if (b > covered_to) busy += b - std::max(a, covered_to), covered_to = b;
      if (g.cls[i] == model::ActivityClass::kCompute) {
        s.compute += b - a;
        if (on_compute) on_compute(rank_.strings.Get(g.name[i]), b - a);
      } else if (g.cls[i] == model::ActivityClass::kCommunication && g.comm[i] != model::kNoIndex) {
        const uint32_t group = rank_.comms.group[g.comm[i]];
        const uint32_t job_group = group == model::kNoIndex ? model::kNoIndex : rank_.groups[group].job_group;
        if (job_group != own_group) s.other_comm += b - a;
      }
    }
    s.idle = s.length - busy;
    return s;
  }

 private:
  const model::RankTrace& rank_;
  std::vector<uint32_t> long_rows_;  // activities longer than kShort, in start order
  model::TimeNs longest_short_ = 0, longest_long_ = 0;
  mutable std::vector<uint32_t> rows_;  // scratch of Measure: one object per thread
};

// Measures stretches of the ranks of a job (|rank|: index in Trace::ranks). Callers ask in
// an order that does not depend on the answers, so the questions can be gathered first
// and the answers replayed (stretch_questions.h). Whether a rank has a timeline at all is
// RankTrace::GpuActivityCount() > 0.
class StretchSource {
 public:
  virtual ~StretchSource() = default;
  virtual Stretch Measure(size_t rank, model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                          const OnCompute& on_compute = {}) = 0;
};

// Over the GPU tables of the trace itself; one GpuStretches per rank, built when first asked.
class TraceStretches final : public StretchSource {
 public:
  explicit TraceStretches(const model::Trace& trace) : trace_(trace), ranks_(trace.ranks.size()) {}
  Stretch Measure(size_t rank, model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                  const OnCompute& on_compute = {}) override {
    if (!ranks_[rank]) ranks_[rank] = std::make_unique<GpuStretches>(trace_.ranks[rank]);
    return ranks_[rank]->Measure(lo, hi, own_group, on_compute);
  }

 private:
  const model::Trace& trace_;
  std::vector<std::unique_ptr<GpuStretches>> ranks_;
};

}  // namespace commlens::analysis
