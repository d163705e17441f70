#include "analysis/time_breakdown.h"

#include <algorithm>
#include <map>

#include "analysis/intervals.h"

namespace commlens::analysis {

using model::ActivityClass;

TimeBreakdown ComputeTimeBreakdown(const model::RankTrace& rank, const std::vector<uint32_t>& rows) {
  const model::GpuActivities& g = rank.gpu;
  IntervalList all, compute, comm, memory;
  all.reserve(rows.size());
  for (uint32_t i : rows) {
    Interval iv{g.start[i], g.end[i]};
    all.push_back(iv);
    switch (g.cls[i]) {
      case ActivityClass::kCompute:
        compute.push_back(iv);
        break;
      case ActivityClass::kCommunication:
        comm.push_back(iv);
        break;
      case ActivityClass::kMemory:
        memory.push_back(iv);
        break;
      case ActivityClass::kOther:
      case ActivityClass::kUnclassified:  // never after the classify pass
        break;
    }
  }
  Merge(&all);
  Merge(&compute);
  Merge(&comm);
  Merge(&memory);

  TimeBreakdown b;
  b.activities = rows.size();
  if (all.empty()) return b;
  b.first_start = all.front().start;
  b.span = all.back().end - all.front().start;
  b.busy = TotalLength(all);
  b.idle = b.span - b.busy;
  b.compute = TotalLength(compute);
  b.non_compute = b.span - b.compute - b.idle;
  b.comm = TotalLength(comm);
  b.memory = TotalLength(memory);
  b.overlap = IntersectionLength(compute, comm);
  b.exposed_comm = b.comm - b.overlap;
  return b;
}

std::vector<std::vector<uint32_t>> RowsPerStep(const model::RankTrace& rank) {
  std::vector<std::vector<uint32_t>> per_step(rank.steps.size());
  const model::GpuActivities& g = rank.gpu;
  const auto& steps = rank.steps;
  for (uint32_t i = 0; i < g.size() && !steps.empty(); ++i) {
    const model::TimeNs t = model::PlacementTime(rank, i);
    if (t == model::kNoTime) continue;
    auto it = std::upper_bound(steps.begin(), steps.end(), t,
                               [](model::TimeNs v, const model::ProfilerStep& s) { return v < s.start; });
    if (it == steps.begin() || t > (it - 1)->end) continue;
    per_step[static_cast<size_t>(it - 1 - steps.begin())].push_back(i);
  }
  return per_step;
}

RankTimeBreakdown ComputeRankTimeBreakdown(const model::RankTrace& rank, const ActivityWindow& w,
                                           const std::vector<std::vector<uint32_t>>& per_step) {
  RankTimeBreakdown out;
  out.total = ComputeTimeBreakdown(rank, w.rows);
  for (size_t s = 0; s < rank.steps.size(); ++s) {
    if (per_step[s].empty()) continue;
    out.steps.push_back({rank.steps[s].number, ComputeTimeBreakdown(rank, per_step[s])});
  }
  return out;
}

namespace {

// Every duration of |b| (and its activity count) added to |sum|; first_start is not.
void AddBreakdown(TimeBreakdown* sum, const TimeBreakdown& b) {
  sum->span += b.span;
  sum->busy += b.busy;
  sum->idle += b.idle;
  sum->compute += b.compute;
  sum->non_compute += b.non_compute;
  sum->comm += b.comm;
  sum->memory += b.memory;
  sum->overlap += b.overlap;
  sum->exposed_comm += b.exposed_comm;
  sum->activities += b.activities;
}

// |sum| divided by |n| field by field, rounded toward zero.
void DivideBreakdown(TimeBreakdown* sum, size_t n) {
  const auto by = static_cast<model::TimeNs>(n);
  for (model::TimeNs* t : {&sum->span, &sum->busy, &sum->idle, &sum->compute, &sum->non_compute, &sum->comm,
                           &sum->memory, &sum->overlap, &sum->exposed_comm})
    *t /= by;
  sum->activities /= n;
}

}  // namespace

std::vector<JobStepBreakdown> MeanStepBreakdowns(const std::vector<const RankTimeBreakdown*>& ranks) {
  std::map<int64_t, JobStepBreakdown> steps;
  for (const RankTimeBreakdown* r : ranks) {
    for (const StepBreakdown& s : r->steps) {
      JobStepBreakdown& j = steps[s.number];
      j.number = s.number;
      ++j.ranks;
      AddBreakdown(&j.mean, s.time);
    }
  }
  std::vector<JobStepBreakdown> out;
  out.reserve(steps.size());
  for (auto& [number, j] : steps) {
    DivideBreakdown(&j.mean, static_cast<size_t>(j.ranks));
    out.push_back(j);
  }
  return out;
}

StepSummary SummarizeSteps(const std::vector<const TimeBreakdown*>& parts, bool over_steps) {
  StepSummary s;
  s.over_steps = over_steps;
  s.count = parts.size();
  std::vector<model::TimeNs> spans;
  for (const TimeBreakdown* p : parts) {
    AddBreakdown(&s.mean, *p);
    spans.push_back(p->span);
  }
  DivideBreakdown(&s.mean, std::max<size_t>(parts.size(), 1));
  if (spans.empty()) return s;
  std::sort(spans.begin(), spans.end());
  s.span_min = spans.front();
  s.span_median = spans[(spans.size() - 1) / 2];
  s.span_max = spans.back();
  return s;
}

int64_t MedianSpanStep(const std::vector<JobStepBreakdown>& steps) {
  if (steps.empty()) return -1;
  std::vector<std::pair<model::TimeNs, int64_t>> spans;
  for (const JobStepBreakdown& s : steps) spans.emplace_back(s.mean.span, s.number);
  std::sort(spans.begin(), spans.end());
  return spans[(spans.size() - 1) / 2].second;
}

}  // namespace commlens::analysis
